from __future__ import annotations

from urllib.parse import urlsplit

from typing import ClassVar

from pydantic import Field, field_validator

from .base import Tool

__all__ = ["Navigate", "NavigateBack"]


class Navigate(Tool):
    """Navigate the current tab to a URL and wait for the page to load."""

    name = "browser_navigate"
    dialects: ClassVar[frozenset[str]] = frozenset({"full", "go-rod"})

    url: str = Field(..., min_length=1, max_length=8192, description="The URL to open.")

    @field_validator("url")
    @classmethod
    def _well_formed(cls, url: str) -> str:
        url = url.strip()
        if any(c.isspace() for c in url):
            raise ValueError(f"{url!r} contains whitespace; percent-encode it (%20)")
        parts = urlsplit(url)
        if not parts.scheme:
            raise ValueError(f"{url!r} has no scheme; write it in full, e.g. https://{url}")
        if parts.scheme in ("http", "https") and not parts.hostname:
            raise ValueError(f"{url!r} has no host")
        return url


class NavigateBack(Tool):
    """Go back to the previous page in the current tab's history."""

    name = "browser_navigate_back"
