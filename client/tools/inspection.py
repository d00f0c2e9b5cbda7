from __future__ import annotations

from typing import Literal

from pydantic import Field

from .base import OptionalTarget

__all__ = ["Snapshot", "TakeScreenshot", "Evaluate"]


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
