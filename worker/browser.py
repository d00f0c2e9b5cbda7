"""The browser host: one Chromium per worker process, owned by a private asyncio loop thread.

Playwright objects never leave the loop thread; Celery's pool threads hand coroutines to it and
wait for plain JSON back. The launch is lazy and guarded by a lock plus a ready flag (seed 000):
concurrent callers share one attempt, a failed attempt leaves the flag unset so the next call
retries, nobody sees a half-started browser, and `close()` resets the flag under the lock.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from enum import Enum
from pathlib import Path
from typing import Any, TypeVar

from playwright.async_api import Browser, Playwright, async_playwright

from client.settings import Settings

from .binary import CANDIDATES, detect_browser  # noqa: F401 - re-exported, Playwright-free
from .policy import guard_navigations
from .warm import WarmPool

__all__ = ["BrowserHost", "BrowserState", "BrowserDied", "detect_browser", "launch_args", "find_pid"]

log = logging.getLogger(__name__)
T = TypeVar("T")

QUIET_FLAGS = (
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-quic",
    "--disable-dev-shm-usage",
)


WARM_AFTER_LAUNCH = 1.0  # seconds: whoever needed the launch (a recovery, say) goes first


class BrowserDied(Exception):
    """The browser disconnected while a guarded call was running."""


class BrowserState(str, Enum):
    idle = "idle"
    starting = "starting"
    ready = "ready"
    crashed = "crashed"
    closed = "closed"


DISABLE = "--disable-features="
# Playwright 1.65 passes these in its own --disable-features, and Chromium honours only the last such
# flag, so ours must repeat them (tests/test_browser_host.py checks the list against Playwright's).
PLAYWRIGHT_DISABLED = (
    "AvoidUnnecessaryBeforeUnloadCheckSync", "DestroyProfileOnBrowserClose", "HttpsUpgrades",
    "HttpsFirstBalancedModeAutoEnable", "LensOverlay", "MediaRouter", "PaintHolding",
    "ThirdPartyStoragePartitioning", "AvoidCorsURLLoaderRestartOnRedirect", "TcpPortRandomizationWin",
    "OptimizationHints", "NetworkTimeServiceQuerying", "AimEnabled", "PreconnectToSearch",
    "msForceBrowserSignIn", "msEdgeUpdateLaunchServicesPreferredVersion",
)
# Headless Chromium builds its address-bar popup as a web page in a renderer of its own for every
# context (about 30 MB PSS per session); the spare renderer is kept for the last context only.
LEAN_DISABLED = ("WebUIOmniboxPopup", "WebUIOmniboxAimPopup", "WebUIOmniboxFullPopup",
                 "SpareRendererForSitePerProcess")


def launch_args(settings: Settings, marker: str) -> list[str]:
    """Chromium's flags; every --disable-features (ours, Playwright's, the user's) merged into one."""
    sandbox = ["--no-sandbox"] if os.geteuid() == 0 else []
    extra = [a for a in settings.browser_args if not a.startswith(DISABLE)]
    wanted = [f for a in settings.browser_args if a.startswith(DISABLE) for f in a[len(DISABLE):].split(",")]
    disabled = ",".join(dict.fromkeys(f for f in (*PLAYWRIGHT_DISABLED, *LEAN_DISABLED, *wanted) if f))
    return [*QUIET_FLAGS, *sandbox, *extra, DISABLE + disabled, f"--browserq-instance={marker}"]


def find_pid(marker: str) -> int | None:
    """The browser's main process: the one whose command line carries our marker and no --type."""
    needle = f"--browserq-instance={marker}".encode()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if needle in argv and not any(a.startswith(b"--type=") for a in argv):
            return int(proc.name)
    return None


class BrowserHost:
    def __init__(self, settings: Settings, name: str) -> None:
        self.settings = settings
        self.name = name
        self.state = BrowserState.idle
        self.pid: int | None = None
        self.binary = detect_browser(settings.browser_bin)
        self.launches = 0
        self.on_disconnect: list[Callable[[], None]] = []
        self._death_watchers: set[asyncio.Future[None]] = set()
        self.warm = WarmPool(self, settings.warm_contexts)
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._ready = False
        self.loop = asyncio.new_event_loop()
        self._lock = asyncio.Lock()
        self._thread = threading.Thread(target=self.loop.run_forever, name="browserq-loop", daemon=True)
        self._thread.start()

    def submit(self, coro: Coroutine[Any, Any, T]) -> Future[T]:
        """Schedule a coroutine on the browser loop from any thread."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    async def browser(self) -> Browser:
        if self._ready and self._browser is not None:
            return self._browser
        async with self._lock:
            if not self._ready:
                self.state = BrowserState.starting
                try:
                    self._browser = await self._launch()
                except BaseException:
                    self.state = BrowserState.crashed if self.launches else BrowserState.idle
                    raise
                self._ready = True
                self.state = BrowserState.ready
                self.warm.fill_soon(delay=WARM_AFTER_LAUNCH)
            assert self._browser is not None
            return self._browser

    async def _launch(self) -> Browser:
        if self._playwright is None:
            self._playwright = await async_playwright().start()
        self.launches += 1
        marker = f"{self.name}.{os.getpid()}.{self.launches}"
        browser = await self._playwright.chromium.launch(
            executable_path=self.binary,
            headless=self.settings.headless,
            args=launch_args(self.settings, marker),
            handle_sigint=False,
            handle_sigterm=False,
            handle_sighup=False,
        )
        browser.on("disconnected", lambda _: self._disconnected(browser))
        await guard_navigations(browser, self.settings)
        self.pid = find_pid(marker)
        log.info("browser %s launched (pid %s, %s)", browser.version, self.pid, self.binary or "bundled")
        return browser

    def _disconnected(self, browser: Browser) -> None:
        if browser is not self._browser:
            return
        self._ready, self._browser, self.pid = False, None, None
        if self.state is not BrowserState.closed:
            self.state = BrowserState.crashed
            log.warning("browser disconnected; the next task relaunches it")
        self._lost()

    def _lost(self) -> None:
        for callback in self.on_disconnect:
            callback()
        for watcher in self._death_watchers:
            if not watcher.done():
                watcher.set_result(None)
        self._death_watchers.clear()

    async def guard(self, work: Coroutine[Any, Any, T], timeout: float) -> T:
        """Run browser work, but give up the moment the browser dies: Playwright can leave a
        call pending forever when Chromium is killed under it (a goto, say)."""
        death: asyncio.Future[None] = self.loop.create_future()
        self._death_watchers.add(death)
        task = asyncio.ensure_future(asyncio.wait_for(work, timeout))
        try:
            await asyncio.wait({task, death}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self._death_watchers.discard(death)
        if task.done():
            return task.result()
        task.cancel()
        raise BrowserDied("the browser died under this call")

    async def discard(self, browser: Browser) -> None:
        """Give up on a browser found dead (perhaps before its `disconnected` event arrived): the
        next `browser()` relaunches. Only that browser: a task that saw the old one die must not
        throw away the one another task has just launched."""
        async with self._lock:
            if browser is not self._browser:
                return
            self._browser, self._ready, self.pid = None, False, None
            self.state = BrowserState.crashed
        self._lost()
        try:
            await asyncio.wait_for(browser.close(), 5)
        except Exception:  # noqa: BLE001 - it is already dead
            pass

    async def close(self) -> None:
        async with self._lock:
            browser, self._browser, self._ready = self._browser, None, False
            self.state = BrowserState.closed
            if browser is not None:
                await browser.close()
            self.pid = None

    def shutdown(self, timeout: float = 15.0) -> None:
        """Close the browser and the driver, then stop the loop thread."""

        async def _all() -> None:
            await self.close()
            if self._playwright is not None:
                await self._playwright.stop()
                self._playwright = None

        try:
            self.submit(_all()).result(timeout)
        except Exception:  # noqa: BLE001 - shutdown goes on whatever Playwright says
            log.exception("error while closing the browser")
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout)
