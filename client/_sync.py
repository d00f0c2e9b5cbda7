from __future__ import annotations

import time
from typing import Any

import redis

from ._base import CAPACITY_POLL, BaseClient, Message, Prepared, broker_errors
from .handles import Session
from .protocol import check_session_id
from .results import ToolResult
from .routing import (
    CLOSE_SCRIPT, PREFIX, ROUTE_SCRIPT, Route, RouteStatus, SessionInfo, WorkerInfo, keys,
    parse_sessions, parse_workers, queue_keys, route_args, sum_queue_depths,
)
from .transport import make_celery, reply_key

__all__ = ["BrowserClient", "PendingCall"]


class PendingCall:
    """A published call; `result()` waits for the worker's answer, and resends the call once,
    to whichever worker the session moves to, if its worker dies meanwhile."""

    def __init__(self, client: BrowserClient, call: Prepared, msg: Message) -> None:
        self._client, self._call, self._msg = client, call, msg

    @property
    def task_id(self) -> str:
        return self._msg.task_id

    def result(self) -> ToolResult:
        deadline = time.monotonic() + self._call.timeout
        r = self._client._redis
        with broker_errors(self._call.session, self._call.tool):
            while (wait := self._client._wait_slice(deadline)) is not None:
                if (raw := r.blpop([reply_key(self.task_id)], wait)) is not None:
                    return self._client._finish(raw, self._call, self._msg)
                if self._client._lost(self._msg, r.hget(keys.worker(self._msg.route.worker), "boot")):
                    self._msg = self._client._resend(self._call, self._msg)
        return self._client._finish(None, self._call, self._msg)


class BrowserClient(BaseClient):
    """Blocking client. Thread-safe: share one per process."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._redis = redis.Redis.from_url(self.settings.redis_url, socket_connect_timeout=5)
        self._route_script = self._redis.register_script(ROUTE_SCRIPT)
        self._close_script = self._redis.register_script(CLOSE_SCRIPT)
        self._celery = make_celery(self.settings, "browserq-client", results=False)

    def call(
        self, tool: str, args: dict[str, Any] | None = None, *, session: str | None = None
    ) -> ToolResult:
        """Run one tool in a session (the implicit one by default) and wait for its result."""
        return self.submit(tool, args, session=session).result()

    def submit(
        self, tool: str, args: dict[str, Any] | None = None, *, session: str | None = None
    ) -> PendingCall:
        """Publish without waiting; calls to one session run in the order they were submitted."""
        call = self._prepare(tool, args, session)
        with broker_errors(call.session, call.tool):
            return self._send(call, self._route(call.session))

    def session(self, session_id: str | None = None) -> Session:
        return Session(self, check_session_id(session_id or self.default_session))

    def close_session(self, session_id: str | None = None) -> bool:
        """Close a session everywhere; False when it did not exist."""
        sid = check_session_id(session_id or self.default_session)
        with broker_errors(sid):
            route = self._route(sid, claim=False)
            if route.status is RouteStatus.pinned:
                call = Prepared("close_session", sid, {}, self.settings.result_timeout)
                return self._send(call, route, "browserq.close_session").result().ok
            return bool(self._close_script(args=[PREFIX, sid]))

    def workers(self) -> list[WorkerInfo]:
        with broker_errors():
            names = sorted(self._redis.smembers(keys.workers))
            pipe = self._redis.pipeline(transaction=False)
            for name in names:
                pipe.hgetall(keys.worker(name.decode()))
                pipe.scard(keys.worker_sessions(name.decode()))
            replies = pipe.execute()
        return parse_workers(names, replies[0::2], replies[1::2])

    def sessions(self) -> list[SessionInfo]:
        alive = {w.name for w in self.workers() if w.alive}
        with broker_errors():
            ids = sorted(self._redis.smembers(keys.sessions))
            pipe = self._redis.pipeline(transaction=False)
            for sid in ids:
                pipe.hgetall(keys.session(sid.decode()))
            return parse_sessions(ids, pipe.execute(), alive)

    def queue_depths(self) -> dict[str, int]:
        """Messages waiting in each registered worker's queue (a growing number means that
        worker is behind, or dead with work still addressed to it)."""
        with broker_errors():
            names = sorted(self._redis.smembers(keys.workers))
            pipe = self._redis.pipeline(transaction=False)
            for name in names:
                for key in queue_keys(name.decode()):
                    pipe.llen(key)
            return sum_queue_depths(names, pipe.execute())

    def close(self) -> None:
        self._redis.close()
        self._celery.close()

    def __enter__(self) -> BrowserClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _route(self, session: str, claim: bool = True) -> Route:
        since = time.monotonic()
        while (route := self._routed(self._route_script(args=route_args(session, claim)), session, since)) is None:
            time.sleep(CAPACITY_POLL)
        return route

    def _send(self, call: Prepared, route: Route, name: str | None = None) -> PendingCall:
        return PendingCall(self, call, self._publish(call, route, name))

    def _resend(self, call: Prepared, lost: Message) -> Message:
        return self._publish(call, self._route(call.session), lost.name, attempt=2)

    def _publish(self, call: Prepared, route: Route, name: str | None, attempt: int = 1) -> Message:
        msg = self._message(call, route, name, attempt)
        self._celery.send_task(msg.name, **self._publish_options(msg, call))
        return msg
