from __future__ import annotations

from pydantic import Field, model_validator

from .base import Tool

__all__ = ["WaitFor"]


class WaitFor(Tool):
    """Wait for text to appear, for text to disappear, or for a number of seconds."""

    name = "browser_wait_for"
    changes_state = False

    text: str | None = Field(None, min_length=1, max_length=2000, description="Text to wait for.")
    textGone: str | None = Field(
        None, min_length=1, max_length=2000, description="Text to wait to disappear."
    )
    time: float | None = Field(None, ge=0, le=300, description="Seconds to wait.")

    @model_validator(mode="after")
    def _one_condition(self) -> WaitFor:
        if self.text is None and self.textGone is None and self.time is None:
            raise ValueError("give one of text, textGone or time")
        return self
