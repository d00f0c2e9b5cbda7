"""Session handles: typed methods over `call`, written once for both clients.

`Session` returns results; `AsyncSession` returns awaitables of them. Method keyword arguments
are the tool models' fields (see `client.tools`), validated by the same models.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, Generic, Literal, TypeVar

from .results import ToolResult

__all__ = ["SessionMethods", "Session", "AsyncSession"]

R = TypeVar("R")


def _args(**kw: Any) -> dict[str, Any]:
    return {k: v for k, v in kw.items() if v is not None}


class SessionMethods(Generic[R]):
    id: str

    def call(self, tool: str, args: dict[str, Any] | None = None) -> R:
        raise NotImplementedError

    def navigate(self, url: str, **opts: Any) -> R:
        return self.call("browser_navigate", {"url": url, **opts})

    def navigate_back(self, **opts: Any) -> R:
        return self.call("browser_navigate_back", opts)

    def snapshot(self, *, depth: int | None = None, ref: str | None = None,
                 selector: str | None = None, **opts: Any) -> R:
        return self.call("browser_snapshot", _args(depth=depth, ref=ref, selector=selector, **opts))

    def click(self, *, ref: str | None = None, selector: str | None = None,
              element: str | None = None, **opts: Any) -> R:
        return self.call("browser_click", _args(ref=ref, selector=selector, element=element, **opts))

    def type(self, text: str, *, ref: str | None = None, selector: str | None = None,
             element: str | None = None, submit: bool = False, **opts: Any) -> R:
        args = _args(ref=ref, selector=selector, element=element, **opts)
        return self.call("browser_type", {**args, "text": text, "submit": submit})

    def press_key(self, key: str, **opts: Any) -> R:
        return self.call("browser_press_key", {"key": key, **opts})

    def screenshot(self, *, fullPage: bool = False, type: Literal["png", "jpeg"] = "png",
                   ref: str | None = None, selector: str | None = None, **opts: Any) -> R:
        args = _args(ref=ref, selector=selector, **opts)
        return self.call("browser_take_screenshot", {**args, "fullPage": fullPage, "type": type})

    def evaluate(self, function: str, *, ref: str | None = None, selector: str | None = None,
                 **opts: Any) -> R:
        return self.call("browser_evaluate", _args(function=function, ref=ref, selector=selector, **opts))

    def wait_for(self, *, text: str | None = None, textGone: str | None = None,
                 time: float | None = None, **opts: Any) -> R:
        return self.call("browser_wait_for", _args(text=text, textGone=textGone, time=time, **opts))

    def close_tab(self, **opts: Any) -> R:
        return self.call("browser_close", opts)


class Session(SessionMethods[ToolResult]):
    def __init__(self, client: Any, session_id: str) -> None:
        self._client = client
        self.id = session_id

    def call(self, tool: str, args: dict[str, Any] | None = None) -> ToolResult:
        return self._client.call(tool, args, session=self.id)

    def close(self) -> bool:
        return self._client.close_session(self.id)

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncSession(SessionMethods[Awaitable[ToolResult]]):
    def __init__(self, client: Any, session_id: str) -> None:
        self._client = client
        self.id = session_id

    def call(self, tool: str, args: dict[str, Any] | None = None) -> Awaitable[ToolResult]:
        return self._client.call(tool, args, session=self.id)

    async def close(self) -> bool:
        return await self._client.close_session(self.id)

    async def __aenter__(self) -> AsyncSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
