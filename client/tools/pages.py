from __future__ import annotations

from .base import Tool

__all__ = ["Close"]


class Close(Tool):
    """Close the current tab. The session stays: the next tool opens a fresh tab."""

    name = "browser_close"
