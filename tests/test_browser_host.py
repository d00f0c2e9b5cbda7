"""The browser host's guarded lazy launch (seed 000's lock + ready flag), with real Chromium."""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from client import Settings
from worker.browser import (
    DISABLE, LEAN_DISABLED, PLAYWRIGHT_DISABLED, BrowserHost, BrowserState, detect_browser, find_pid,
    launch_args,
)


@pytest.fixture
def host() -> Iterator[BrowserHost]:
    h = BrowserHost(Settings(), "guard-test")
    yield h
    h.shutdown()


def run(host: BrowserHost, coro):  # noqa: ANN001, ANN201
    return host.submit(coro).result(60)


def test_detection_prefers_the_configured_binary_then_path(monkeypatch: pytest.MonkeyPatch) -> None:
    assert detect_browser("/opt/custom/chrome") == "/opt/custom/chrome"
    assert detect_browser("") == shutil.which("chromium")
    monkeypatch.setenv("PATH", "/nonexistent")
    assert detect_browser("") is None  # Playwright's bundled browser


def test_launch_is_lazy_shared_and_restartable(host: BrowserHost) -> None:
    assert host.state is BrowserState.idle and host.launches == 0

    async def five_at_once() -> set[int]:
        browsers = await asyncio.gather(*(host.browser() for _ in range(5)))
        return {id(b) for b in browsers}

    assert len(run(host, five_at_once())) == 1
    assert host.launches == 1 and host.state is BrowserState.ready
    assert host.pid is not None and find_pid(f"guard-test.{os.getpid()}.1") == host.pid

    run(host, host.close())
    assert host.state is BrowserState.closed and host.pid is None
    run(host, host.browser())
    assert host.launches == 2 and host.state is BrowserState.ready


def test_failed_launch_leaves_no_half_started_browser_and_is_retried(host: BrowserHost) -> None:
    real = host.binary
    host.binary = "/nonexistent/chromium"
    with pytest.raises(Exception, match="nonexistent"):
        run(host, host.browser())
    assert host._browser is None and not host._ready and host.state is not BrowserState.ready
    host.binary = real
    browser = run(host, host.browser())
    assert browser.is_connected() and host.launches == 2


def _disabled_features(pid: int) -> list[list[str]]:
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    return [a.split("=", 1)[1].split(",") for a in argv if a.startswith(DISABLE)]


def test_our_disable_features_keeps_playwrights_own(host: BrowserHost) -> None:
    """Chromium honours only the last --disable-features: ours must carry everything Playwright's
    carries (a Playwright upgrade that changes its list fails here), plus the memory savers."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        bare = pw.chromium.launch(executable_path=detect_browser(""), args=["--browserq-instance=bare-pw"])
        playwrights = _disabled_features(find_pid("bare-pw"))[-1]
        bare.close()
    assert set(playwrights) <= set(PLAYWRIGHT_DISABLED)
    run(host, host.browser())
    ours = _disabled_features(host.pid)[-1]
    assert set(PLAYWRIGHT_DISABLED) | set(LEAN_DISABLED) <= set(ours)


def test_user_disable_features_are_merged_not_lost() -> None:
    args = launch_args(Settings(browser_args=["--mute-audio", "--disable-features=Foo", "--disable-features=Bar"]), "m")
    merged = [a for a in args if a.startswith(DISABLE)]
    assert len(merged) == 1 and "--mute-audio" in args
    assert {"Foo", "Bar", "MediaRouter", "WebUIOmniboxPopup"} <= set(merged[0][len(DISABLE):].split(","))
