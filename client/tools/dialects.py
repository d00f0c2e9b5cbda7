"""Compact dialects over the same handlers, for agents that prefer few tools.

`go-rod` (seed 000): browser_navigate, browser_action, browser_screenshot.
`single` (seed 003): one `browser` tool with an action.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, model_validator

from .base import Tool
from .navigation import Navigate

__all__ = ["BrowserAction", "BrowserScreenshot", "Browser"]

_NEEDS_SELECTOR = ("click", "type", "get_text", "get_element_info", "wait")


class BrowserAction(Tool):
    """Interact with the current page through a CSS selector: click, type text, eval JavaScript,
    get_text, get_element_info (tagName, id, className, innerText, href, value), or wait for the
    element to appear (timeout seconds, default 10)."""

    name = "browser_action"
    dialects: ClassVar[frozenset[str]] = frozenset({"go-rod"})

    action: Literal["click", "type", "eval", "get_text", "get_element_info", "wait"]
    selector: str | None = Field(None, max_length=2000, description="CSS selector of the element.")
    text: str | None = Field(None, max_length=100_000,
                             description="Text to type (type) or JavaScript to evaluate (eval).")

    @model_validator(mode="after")
    def _needs(self) -> BrowserAction:
        if self.action in _NEEDS_SELECTOR and not self.selector:
            raise ValueError(f"selector is required for action {self.action!r}")
        if self.action in ("type", "eval") and self.text is None:
            raise ValueError(f"text is required for action {self.action!r}")
        return self


class BrowserScreenshot(Tool):
    """Take a PNG screenshot of the viewport, or of the full scrollable page."""

    name = "browser_screenshot"
    dialects: ClassVar[frozenset[str]] = frozenset({"go-rod"})
    changes_state = False

    fullPage: bool = Field(False, description="Capture the full scrollable page.")


class Browser(Tool):
    """Drive a real browser: navigate to a url, click or type into a CSS selector, take a
    screenshot, get_text (readable text of the page or of the selector), or evaluate a script."""

    name = "browser"
    dialects: ClassVar[frozenset[str]] = frozenset({"single"})

    action: Literal["navigate", "click", "type", "screenshot", "get_text", "evaluate"]
    url: str | None = Field(None, max_length=8192, description="URL, for navigate.")
    selector: str | None = Field(None, max_length=2000, description="CSS selector, for click, type, get_text.")
    text: str | None = Field(None, max_length=100_000, description="Text to type, for type.")
    script: str | None = Field(None, max_length=100_000, description="JavaScript, for evaluate.")

    @model_validator(mode="after")
    def _needs(self) -> Browser:
        needed = {"navigate": "url", "click": "selector", "type": "selector", "evaluate": "script"}
        field = needed.get(self.action)
        if field and getattr(self, field) is None:
            raise ValueError(f"{field} is required for action {self.action!r}")
        if self.action == "type" and self.text is None:
            raise ValueError("text is required for action 'type'")
        if self.url is not None:
            self.url = Navigate(url=self.url).url
        return self
