"""The browser host's guarded lazy launch (seed 000's lock + ready flag), with real Chromium."""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Iterator

import pytest

from client import Settings
from worker.browser import BrowserHost, BrowserState, detect_browser, find_pid


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
