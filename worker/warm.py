"""Fresh browser contexts made ahead of time, so a new session does not wait for a renderer.

`new_page` costs about 100 ms because Chromium starts a renderer process; everything else a new
session's first call does takes a few ms. The pool keeps `warm_contexts` brand-new contexts, each
with one blank page, made with default options. Each is handed out once, to one session, and
never returns to the pool, so sessions stay as isolated as if they had made their own. The pool
is refilled in the background after each take, and emptied when the browser dies.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from playwright.async_api import Browser, BrowserContext, Page

if TYPE_CHECKING:
    from .browser import BrowserHost

__all__ = ["WarmPool"]

log = logging.getLogger(__name__)

FILL_TIMEOUT = 30.0


class WarmPool:
    def __init__(self, host: BrowserHost, size: int) -> None:
        self.host = host
        self.size = size
        self._ready: list[tuple[Browser, BrowserContext, Page]] = []
        self._filling: asyncio.Task[None] | None = None
        self._again: float | None = None
        host.on_disconnect.append(self._ready.clear)

    def __len__(self) -> int:
        return len(self._ready)

    def take(self, browser: Browser) -> tuple[BrowserContext, Page] | None:
        """A fresh context of `browser` with its blank page, or None when none is ready."""
        self.fill_soon()
        while self._ready:
            owner, context, page = self._ready.pop(0)
            if owner is browser and not page.is_closed():
                return context, page
        return None

    def _discard(self, entry: tuple[Browser, BrowserContext, Page]) -> None:
        """A pooled page whose renderer died (killed, OOM) is never handed out."""
        if entry in self._ready:
            self._ready.remove(entry)
            asyncio.ensure_future(_close(entry[1]))
        self.fill_soon()

    def fill_soon(self, delay: float = 0.0) -> None:
        if not self.size:
            return
        if self._filling is not None:  # a relaunch while a fill still works on the old browser
            self._again = delay
            return
        self._filling = asyncio.get_running_loop().create_task(self._fill(delay))

    async def _fill(self, delay: float) -> None:
        try:
            await asyncio.sleep(delay)
            while len(self._ready) < self.size:
                browser = await self.host.browser()
                # guarded: when Chromium is killed, Playwright may never settle these calls
                context, page = await self.host.guard(_fresh(browser), FILL_TIMEOUT)
                if browser.is_connected():
                    entry = (browser, context, page)
                    self._ready.append(entry)
                    page.on("crash", lambda _, e=entry: self._discard(e))
        except Exception as exc:  # noqa: BLE001 - the browser died meanwhile: refill after relaunch
            log.debug("warm pool not refilled: %s", exc)
        finally:
            self._filling = None
        if (again := self._again) is not None:  # not when cancelled: the loop is going away
            self._again = None
            self.fill_soon(again)


async def _fresh(browser: Browser) -> tuple[BrowserContext, Page]:
    context = await browser.new_context()
    return context, await context.new_page()


async def _close(context: BrowserContext) -> None:
    try:
        await context.close()
    except Exception as exc:  # noqa: BLE001 - a broken context is closed best effort
        log.debug("closing a discarded warm context: %s", exc)
