from __future__ import annotations

from typing import Literal

from pydantic import Field

from .base import OptionalTarget, Tool

__all__ = ["Snapshot", "TakeScreenshot", "Evaluate", "ConsoleMessages", "NetworkRequests", "Find"]


class Snapshot(OptionalTarget):
    """Capture the page's accessibility tree with element refs. Better than a screenshot for
    deciding what to click or type into; refs are valid until the next snapshot or navigation."""

    name = "browser_snapshot"
    changes_state = False

    depth: int | None = Field(None, ge=1, le=100, description="Limit the tree to this depth.")


class TakeScreenshot(OptionalTarget):
    """Take a screenshot of the viewport, the full page, or one element. You cannot act on
    elements from a screenshot: use browser_snapshot for that."""

    name = "browser_take_screenshot"
    changes_state = False

    fullPage: bool = Field(False, description="Capture the full scrollable page.")
    type: Literal["png", "jpeg"] = Field("png", description="Image format.")


class Evaluate(OptionalTarget):
    """Evaluate a JavaScript function on the page, or on one element (passed as its argument).
    Returns the function's JSON-serialisable result."""

    name = "browser_evaluate"

    function: str = Field(
        ...,
        min_length=1,
        max_length=100_000,
        description="JavaScript function, e.g. () => document.title or (el) => el.textContent",
    )


Level = Literal["error", "warning", "info", "debug"]


class ConsoleMessages(Tool):
    """The page's console messages since it loaded, at this level and more severe."""

    name = "browser_console_messages"
    changes_state = False

    level: Level = Field("info", description="error, warning, info or debug (each includes the more severe).")


class NetworkRequests(Tool):
    """The requests the page made since it loaded: method, URL, status, resource type."""

    name = "browser_network_requests"
    changes_state = False


class Find(Tool):
    """Find elements by their text (or a regex) and get their refs, without a full snapshot."""

    name = "browser_find"
    changes_state = False

    text: str = Field(..., min_length=1, max_length=1000, description="Text to look for.")
    regex: bool = Field(False, description="Treat text as a JavaScript regular expression.")
    limit: int = Field(20, ge=1, le=200, description="At most this many matches.")
