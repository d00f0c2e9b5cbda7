"""Finding a Chromium binary without importing Playwright.

Lives apart from `browser.py` so that `browserq init` (and anything else that only needs the path)
starts fast and works on a machine where the worker extra is not installed.
"""

from __future__ import annotations

import shutil

__all__ = ["CANDIDATES", "detect_browser"]

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def detect_browser(browser_bin: str) -> str | None:
    """The configured binary as given; else the first Chromium on PATH; else None (bundled)."""
    if browser_bin:
        return browser_bin
    return next((path for name in CANDIDATES if (path := shutil.which(name))), None)
