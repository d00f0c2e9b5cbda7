"""`browserq mcp` driven by the official MCP SDK's own clients, over stdio and streamable HTTP,
against the shared real fleet."""

from __future__ import annotations

import base64
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from client import BrowserClient
from worker.cluster import RedisServer, WorkerProcess, browserq_command, free_port

from .site import FixtureSite
from .test_tools import ref_of

pytestmark = pytest.mark.timeout(120)


def mcp_sessions(client: BrowserClient) -> set[str]:
    return {s.id for s in client.sessions() if s.id.startswith("mcp-")}


def wait_until(predicate: Any, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


def text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if c.type == "text")


def stdio_params(redis_url: str, *args: str) -> StdioServerParameters:
    cmd = browserq_command()
    return StdioServerParameters(command=cmd[0], args=[*cmd[1:], "mcp", *args],
                                 env={**os.environ, "BROWSERQ_REDIS_URL": redis_url, "BROWSERQ_CAPS": ""})


def test_stdio_navigate_snapshot_click_screenshot_and_session_closed_on_disconnect(
    client: BrowserClient, redis_server: RedisServer, site: FixtureSite
) -> None:
    seen: dict[str, Any] = {}

    async def run() -> None:
        async with stdio_client(stdio_params(redis_server.url, "--caps", "vision")) as (r, w), \
                ClientSession(r, w) as s:
            await s.initialize()
            names = {t.name for t in (await s.list_tools()).tools}
            assert "browser_mouse_click_xy" in names and "browser_pdf_save" not in names
            nav = await s.call_tool("browser_navigate", {"url": site.url + "/"})
            assert not nav.is_error and "Fixture Home" in text(nav)
            snap = await s.call_tool("browser_snapshot", {})
            click = await s.call_tool("browser_click", {"ref": ref_of(text(snap), "link", "Next page")})
            assert not click.is_error and "Page Two" in text(click)
            shot = await s.call_tool("browser_take_screenshot", {})
            image = [c for c in shot.content if c.type == "image"][0]
            assert image.mime_type == "image/png" and base64.b64decode(image.data)[:4] == b"\x89PNG"
            bad = await s.call_tool("browser_click", {"ref": 7})
            assert bad.is_error and "ref" in text(bad)
            seen["during"] = await anyio.to_thread.run_sync(mcp_sessions, client)
            with pytest.raises(MCPError) as hidden:
                await s.call_tool("browser_pdf_save", {})
            assert hidden.value.code == -32601

    anyio.run(run)
    assert len(seen["during"]) == 1
    assert wait_until(lambda: not mcp_sessions(client) & seen["during"]), "session not closed on disconnect"


def test_stdio_lists_no_capability_tools_unless_asked(redis_server: RedisServer, fleet: list[WorkerProcess]) -> None:
    async def run() -> None:
        async with stdio_client(stdio_params(redis_server.url, "--dialect", "go-rod")) as (r, w), \
                ClientSession(r, w) as s:
            await s.initialize()
            names = [t.name for t in (await s.list_tools()).tools]
            assert names == ["browser_navigate", "browser_action", "browser_screenshot"]
            with pytest.raises(MCPError) as hidden:
                await s.call_tool("browser_mouse_click_xy", {"x": 1, "y": 1})
            assert hidden.value.code == -32601

    anyio.run(run)


@pytest.fixture
def http_server(redis_server: RedisServer, fleet: list[WorkerProcess]) -> Iterator[str]:
    port = free_port()
    env = {**os.environ, "BROWSERQ_REDIS_URL": redis_server.url, "BROWSERQ_CAPS": ""}
    proc = subprocess.Popen([*browserq_command(), "mcp", "--transport", "http", "--port", str(port),
                             "--caps", "vision", "--keep-alive", "3s"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        assert wait_until(lambda: _listening(port) or proc.poll() is not None, 30) and proc.poll() is None
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(15)


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_http_connections_get_separate_sessions_closed_after_the_keep_alive(
    client: BrowserClient, http_server: str, site: FixtureSite
) -> None:
    seen: dict[str, Any] = {}

    async def agent(name: str, first: str, ready: anyio.Event, other_ready: anyio.Event) -> None:
        async with streamable_http_client(http_server) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            names = {t.name for t in (await s.list_tools()).tools}
            assert "browser_mouse_move_xy" in names and "browser_pdf_save" not in names
            await s.call_tool("browser_navigate", {"url": site.url + first})
            ready.set()
            await other_ready.wait()
            seen[name] = text(await s.call_tool("browser_navigate", {"url": site.url + "/cookies"}))
            if name == "a":
                shot = await s.call_tool("browser_take_screenshot", {})
                assert [c.type for c in shot.content] == ["text", "image"]
                with pytest.raises(MCPError) as hidden:
                    await s.call_tool("browser_pdf_save", {})
                assert hidden.value.code == -32601
            seen[f"sessions-{name}"] = await anyio.to_thread.run_sync(mcp_sessions, client)

    async def run() -> None:
        a_ready, b_ready = anyio.Event(), anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(agent, "a", "/set-cookie?name=mcpa&value=1", a_ready, b_ready)
            tg.start_soon(agent, "b", "/", b_ready, a_ready)

    anyio.run(run)
    assert "cookies: mcpa" in seen["a"] and "cookies: none" in seen["b"]
    both = seen["sessions-a"] | seen["sessions-b"]
    assert len(both) == 2
    assert mcp_sessions(client) & both, "keep-alive: sessions should outlive the disconnect briefly"
    assert wait_until(lambda: not mcp_sessions(client) & both, 15), "sessions not closed after keep-alive"
