from __future__ import annotations

from typing import Literal

from pydantic import Field

from .base import Target, Tool

__all__ = ["Click", "Type", "PressKey"]

Modifier = Literal["Alt", "Control", "ControlOrMeta", "Meta", "Shift"]


class Click(Target):
    """Click an element. If the click starts a navigation, returns once the new page has loaded."""

    name = "browser_click"

    doubleClick: bool = Field(False, description="Double-click instead of a single click.")
    button: Literal["left", "right", "middle"] = Field("left", description="Mouse button.")
    modifiers: list[Modifier] = Field(
        default_factory=list, max_length=5, description="Modifier keys held during the click."
    )


class Type(Target):
    """Type text into an editable element, replacing its content."""

    name = "browser_type"

    text: str = Field(..., max_length=100_000, description="The text to type.")
    submit: bool = Field(False, description="Press Enter after typing.")
    slowly: bool = Field(
        False, description="Type one character at a time, to trigger key handlers."
    )


class PressKey(Tool):
    """Press a key on the keyboard (Playwright key names: Enter, ArrowLeft, a, Control+A...)."""

    name = "browser_press_key"

    key: str = Field(..., min_length=1, max_length=64, description="Key name or character.")
