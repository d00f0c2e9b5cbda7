from __future__ import annotations

from typing import Literal

from pydantic import Field

from .base import Tool

__all__ = ["Close", "Resize", "Tabs", "Install"]


class Close(Tool):
    """Close the current tab. The session stays: the next tool opens a fresh tab."""

    name = "browser_close"


class Resize(Tool):
    """Resize the browser viewport."""

    name = "browser_resize"

    width: int = Field(..., ge=100, le=7680)
    height: int = Field(..., ge=100, le=4320)


class Tabs(Tool):
    """List, open, close or select tabs. Pages the site opens (popups) appear here too."""

    name = "browser_tabs"

    action: Literal["list", "new", "close", "select"]
    index: int | None = Field(None, ge=0, le=100, description="Tab index, for close and select.")
    url: str | None = Field(None, max_length=8192, description="URL to open, for new.")


class Install(Tool):
    """Report whether the worker's browser is ready, which binary and version. Never downloads."""

    name = "browser_install"
    changes_state = False
