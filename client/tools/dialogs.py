from __future__ import annotations

from pydantic import Field

from .base import Tool

__all__ = ["HandleDialog"]


class HandleDialog(Tool):
    """Accept or dismiss the open dialog (alert, confirm, prompt), or the next one to open."""

    name = "browser_handle_dialog"

    accept: bool = Field(..., description="Accept (OK) or dismiss (Cancel).")
    promptText: str | None = Field(None, max_length=10_000, description="Text for a prompt dialog.")
