from __future__ import annotations

import asyncio
import time
from typing import Any

import redis.asyncio as aioredis

from ._base import CAPACITY_POLL, BaseClient, Message, Prepared, broker_errors
from .handles import AsyncSession
from .protocol import check_session_id
from .results import ToolResult
from .routing import (
    CLOSE_SCRIPT, PREFIX, ROUTE_SCRIPT, Route, RouteStatus, SessionInfo, WorkerInfo, keys,
    parse_sessions, parse_workers, queue_keys, route_args, sum_queue_depths,
)
from .transport import make_celery, reply_key

__all__ = ["AsyncBrowserClient", "AsyncPendingCall"]


class AsyncPendingCall:
    """A published call; `result()` waits for the worker's answer, and resends the call once,
    to whichever worker the session moves to, if its worker dies meanwhile."""

    def __init__(self, client: AsyncBrowserClient, call: Prepared, msg: Message) -> None:
        self._client, self._call, self._msg = client, call, msg

    @property
    def task_id(self) -> str:
        return self._msg.task_id

    async def result(self) -> ToolResult:
        deadline = time.monotonic() + self._call.timeout
        r = self._client._redis
        with broker_errors(self._call.session, self._call.tool):
            while (wait := self._client._wait_slice(deadline)) is not None:
                if (raw := await r.blpop([reply_key(self.task_id)], wait)) is not None:
                    return self._client._finish(raw, self._call, self._msg)
                if self._client._lost(self._msg, await r.hget(keys.worker(self._msg.route.worker), "boot")):
                    self._msg = await self._client._resend(self._call, self._msg)
        return self._client._finish(None, self._call, self._msg)


class AsyncBrowserClient(BaseClient):
    """asyncio client: the same calls as BrowserClient, awaited."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._redis = aioredis.Redis.from_url(self.settings.redis_url, socket_connect_timeout=5)
        self._route_script = self._redis.register_script(ROUTE_SCRIPT)
        self._close_script = self._redis.register_script(CLOSE_SCRIPT)
        self._celery = make_celery(self.settings, "browserq-client", results=False)

    async def call(
        self, tool: str, args: dict[str, Any] | None = None, *, session: str | None = None
    ) -> ToolResult:
        return await (await self.submit(tool, args, session=session)).result()

    async def submit(
        self, tool: str, args: dict[str, Any] | None = None, *, session: str | None = None
    ) -> AsyncPendingCall:
        call = self._prepare(tool, args, session)
        with broker_errors(call.session, call.tool):
            return await self._send(call, await self._route(call.session))

    def session(self, session_id: str | None = None) -> AsyncSession:
        return AsyncSession(self, check_session_id(session_id or self.default_session))

    async def close_session(self, session_id: str | None = None) -> bool:
        sid = check_session_id(session_id or self.default_session)
        with broker_errors(sid):
            route = await self._route(sid, claim=False)
            if route.status is RouteStatus.pinned:
                call = Prepared("close_session", sid, {}, self.settings.result_timeout)
                pending = await self._send(call, route, "browserq.close_session")
                return (await pending.result()).ok
            return bool(await self._close_script(args=[PREFIX, sid]))

    async def workers(self) -> list[WorkerInfo]:
        with broker_errors():
            names = sorted(await self._redis.smembers(keys.workers))
            pipe = self._redis.pipeline(transaction=False)
            for name in names:
                pipe.hgetall(keys.worker(name.decode()))
                pipe.scard(keys.worker_sessions(name.decode()))
            replies = await pipe.execute()
        return parse_workers(names, replies[0::2], replies[1::2])

    async def sessions(self) -> list[SessionInfo]:
        alive = {w.name for w in await self.workers() if w.alive}
        with broker_errors():
            ids = sorted(await self._redis.smembers(keys.sessions))
            pipe = self._redis.pipeline(transaction=False)
            for sid in ids:
                pipe.hgetall(keys.session(sid.decode()))
            return parse_sessions(ids, await pipe.execute(), alive)

    async def queue_depths(self) -> dict[str, int]:
        """Messages waiting in each registered worker's queue (a growing number means that
        worker is behind, or dead with work still addressed to it)."""
        with broker_errors():
            names = sorted(await self._redis.smembers(keys.workers))
            pipe = self._redis.pipeline(transaction=False)
            for name in names:
                for key in queue_keys(name.decode()):
                    pipe.llen(key)
            return sum_queue_depths(names, await pipe.execute())

    async def aclose(self) -> None:
        await self._redis.aclose()
        self._celery.close()

    async def __aenter__(self) -> AsyncBrowserClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _route(self, session: str, claim: bool = True) -> Route:
        since = time.monotonic()
        while (route := self._routed(await self._route_script(args=route_args(session, claim)), session, since)) is None:
            await asyncio.sleep(CAPACITY_POLL)
        return route

    async def _send(self, call: Prepared, route: Route, name: str | None = None) -> AsyncPendingCall:
        return AsyncPendingCall(self, call, await self._publish(call, route, name))

    async def _resend(self, call: Prepared, lost: Message) -> Message:
        return await self._publish(call, await self._route(call.session), lost.name, attempt=2)

    async def _publish(self, call: Prepared, route: Route, name: str | None, attempt: int = 1) -> Message:
        msg = self._message(call, route, name, attempt)
        await asyncio.to_thread(self._celery.send_task, msg.name, **self._publish_options(msg, call))
        return msg
