"""`browserq mcp`: an MCP server whose tools enqueue into browserq (official `mcp` SDK, 2.x low-level API).

One browserq session per MCP connection, so two agents never share cookies or tabs:

- stdio: the connection is the process's stdin/stdout, so one session for the process's lifetime;
- streamable HTTP (stateful mode): one session per MCP session id (`Mcp-Session-Id`).

Each connection's session id is `mcp-<uuid>`, created at its first tool call and kept in the SDK's
per-connection `Connection.state`. It is closed from the connection's `exit_stack`, which the SDK
unwinds when the connection ends: stdin closing, an HTTP `DELETE` of the MCP session, or the
manager's idle timeout (`--idle-timeout`) for HTTP clients that vanish without a DELETE. With
`keep_alive` > 0 the close is delayed that long (a reconnecting operator can still inspect it with
`browserq status`); sessions still lingering when the server stops are closed then.

Clients that skip the `initialize` handshake (the 2026-07-28 per-request protocol era) have no
connection that outlives a request, so each of their calls would get a fresh browser; use the
handshake (every MCP SDK's `initialize()`) for a browser that persists across calls.

A tool that is not visible (unknown, another dialect, or a capability not enabled) is refused with a
JSON-RPC error -32601 (METHOD_NOT_FOUND), raised as `MCPError` from the handler: the SDK turns
`MCPError` into a JSON-RPC error response, anything returned into a tool result. Tool failures and
invalid arguments are results with `isError: true` and a text the model can act on.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp.types as types
from anyio.abc import TaskGroup
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from ._async import AsyncBrowserClient
from .agents import definition, mcp_content, visible_tools
from .errors import BrowserQError, InvalidInput
from .settings import Settings

__all__ = ["BrowserqMCP", "run_stdio", "run_http", "DEFAULT_PORT", "SESSION_KEY"]

log = logging.getLogger("browserq.mcp")

DEFAULT_PORT = 8931
SESSION_KEY = "browserq_session"
INSTRUCTIONS = (
    "A real Chromium browser, kept for this connection. Navigate, then call browser_snapshot to get "
    "the page's accessibility tree with element refs (e.g. s1e3) and pass a ref to click, type or "
    "hover. Refs go stale after the page changes: snapshot again when told to."
)


class BrowserqMCP:
    """The MCP server's state: the visible tools, one AsyncBrowserClient, and lingering sessions."""

    def __init__(self, settings: Settings, caps: Iterable[str] = (), dialect: str = "full",
                 keep_alive: float = 0.0) -> None:
        self.settings = settings
        self.caps = set(caps)
        self.dialect = dialect
        self.keep_alive = keep_alive
        self.tools = visible_tools(self.caps, dialect)
        self._listing = types.ListToolsResult(
            tools=[types.Tool.model_validate(definition(t, "mcp")) for t in self.tools.values()])
        self.client: AsyncBrowserClient | None = None
        self._lingering: set[str] = set()
        self._tg: TaskGroup | None = None
        self.server: Server[Any] = Server(
            "browserq", version="0.1.0", instructions=INSTRUCTIONS, lifespan=self._lifespan,
            on_list_tools=self._list_tools, on_call_tool=self._call_tool,
        )

    @asynccontextmanager
    async def _lifespan(self, _server: Server[Any]) -> AsyncIterator[dict[str, Any]]:
        """One client and one task group (for delayed closes) for the server's lifetime."""
        self.client = AsyncBrowserClient(self.settings, caps=self.caps)
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                try:
                    yield {}
                finally:
                    tg.cancel_scope.cancel()
        finally:
            self._tg = None
            with anyio.CancelScope(shield=True):
                for sid in list(self._lingering):
                    await self._close(sid)
                await self.client.aclose()

    async def _list_tools(self, ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return self._listing  # built once: the visible tools never change for a server

    async def _call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name not in self.tools:
            raise MCPError(code=types.METHOD_NOT_FOUND, message=f"Unknown tool: {params.name}",
                           data=params.name)
        assert self.client is not None
        sid = self._session_for(ctx)
        try:
            result = await self.client.call(params.name, params.arguments or {}, session=sid)
        except InvalidInput as exc:
            return _error_result(f"Error: {exc}. Fix the arguments and call again.")
        except BrowserQError as exc:
            return _error_result(f"Error ({type(exc).__name__}): {exc}. The browser service is "
                                 "unavailable or overloaded; try again later.")
        content = [types.TextContent(text=b["text"]) if b["type"] == "text"
                   else types.ImageContent(data=b["data"], mime_type=b["mimeType"])
                   for b in mcp_content(result)]
        return types.CallToolResult(content=content, is_error=not result.ok)

    def _session_for(self, ctx: Any) -> str:
        """This connection's browserq session, created on first use and closed when it ends."""
        connection = _connection_of(ctx)
        sid = connection.state.get(SESSION_KEY)
        if sid is None:
            sid = connection.state[SESSION_KEY] = f"mcp-{uuid.uuid4().hex}"
            connection.exit_stack.push_async_callback(self._release, sid)
            log.info("MCP connection %s -> browserq session %s", connection.session_id or "stdio", sid)
        return sid

    async def _release(self, sid: str) -> None:
        """The connection ended: close its session now, or after the keep-alive."""
        if self.keep_alive <= 0 or self._tg is None:
            await self._close(sid)
            return
        self._lingering.add(sid)
        self._tg.start_soon(self._close_later, sid)

    async def _close_later(self, sid: str) -> None:
        await anyio.sleep(self.keep_alive)
        if sid in self._lingering:
            await self._close(sid)

    async def _close(self, sid: str) -> None:
        self._lingering.discard(sid)
        try:
            assert self.client is not None
            await self.client.close_session(sid)
            log.info("closed browserq session %s", sid)
        except BrowserQError as exc:  # the worker's idle timeout closes it anyway
            log.warning("could not close browserq session %s: %s", sid, exc)


def _connection_of(ctx: Any) -> Any:
    """The SDK's per-connection `Connection` (its `state` and `exit_stack` outlive one request).

    The low-level handler context of mcp 2.3 reaches it only through its per-request
    `ServerSession` (the high-level Context's `connection` is not offered to low-level handlers),
    hence the private attribute; `mcp>=2.3,<3` is pinned and tests/test_mcp.py covers it."""
    connection = getattr(ctx, "connection", None) or getattr(ctx.session, "_connection", None)
    if connection is None:
        raise MCPError(code=types.INTERNAL_ERROR, message="browserq: this MCP SDK exposes no connection")
    return connection


def _error_result(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)


async def run_stdio(app: BrowserqMCP) -> None:
    """Serve one connection over stdin/stdout until the client closes stdin."""
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await app.server.run(read_stream, write_stream, app.server.create_initialization_options())


async def run_http(app: BrowserqMCP, host: str = "127.0.0.1", port: int = DEFAULT_PORT,
                   idle_timeout: float | None = 1800.0) -> None:
    """Serve streamable HTTP at http://host:port/mcp, stateful (one MCP session per connection).

    Loopback binds get the SDK's DNS-rebinding protection (Host and Origin checked)."""
    import uvicorn

    starlette_app = app.server.streamable_http_app(
        host=host, stateless_http=False, session_idle_timeout=idle_timeout or None,
    )
    config = uvicorn.Config(starlette_app, host=host, port=port, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve()
