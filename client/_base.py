"""Everything the sync and async clients share: validation, routing decisions, messages, results.

The two clients only add I/O around these steps (httpx's BaseClient pattern).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from kombu import Queue
from kombu.exceptions import OperationalError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from .errors import BrokerUnavailable, TaskTimeout
from .protocol import TaskPayload, check_session_id, queue_name, task_name
from .redact import redacting
from .results import ToolResult
from .routing import Route, RouteStatus, no_capacity, parse_route
from .settings import Settings
from .tools import validate_call

__all__ = ["BaseClient", "Prepared", "Message", "broker_errors", "CAPACITY_POLL"]

CAPACITY_POLL = 0.05
LOSS_POLL = 1.0
EXPIRED_NOTICE = (
    "The previous browser session with this id was closed after being idle; "
    "this is a fresh session (cookies, tabs and page state start empty)."
)


@dataclass
class Prepared:
    """A validated call, ready to route."""

    tool: str
    session: str
    args: dict[str, Any]
    timeout: float


@dataclass
class Message:
    """A routed call, ready to publish."""

    task_id: str
    name: str
    queue: Queue
    kwargs: dict[str, Any]
    route: Route
    sent_at: float = field(default_factory=time.time)


class BaseClient:
    def __init__(
        self,
        settings: Settings | None = None,
        *,
        redis_url: str | None = None,
        caps: set[str] | None = None,
        session: str | None = None,
    ) -> None:
        if settings is None:
            settings = Settings(**({"redis_url": redis_url} if redis_url else {}))
        self.settings = settings
        self.caps = set(settings.caps if caps is None else caps)
        self.default_session = check_session_id(session or f"implicit-{uuid.uuid4().hex[:12]}")

    def tool_definitions(
        self, format: str = "openai", caps: set[str] | None = None, dialect: str = "full"
    ) -> list[dict[str, Any]]:
        """Tool definitions for a model API (`openai`, `anthropic`, `mcp`) in one dialect; capability
        tools only for `caps` (default: this client's caps). Pure: no Redis, no worker."""
        from .agents import tool_definitions

        return tool_definitions(format, self.caps if caps is None else caps, dialect)  # type: ignore[arg-type]

    def _prepare(self, tool: str, args: Any, session: str | None) -> Prepared:
        sid = check_session_id(self.default_session if session is None else session)
        with redacting():  # a secret field's error must not quote the secret
            model = validate_call(tool, args, self.caps, session=sid)
        timeout = (model.timeout or self.settings.action_timeout) + self.settings.result_timeout
        dumped = model.model_dump(mode="json", exclude_unset=True, by_alias=True)
        return Prepared(tool, sid, dumped, timeout)

    def _routed(self, raw: list[Any], session: str, waiting_since: float) -> Route | None:
        """The route, or None while a new session waits for capacity (NoCapacity past the wait)."""
        route = parse_route(raw, session)
        if route.status is not RouteStatus.no_capacity:
            return route
        waited = time.monotonic() - waiting_since
        if waited >= self.settings.capacity_wait:
            raise no_capacity(session, waited)
        return None

    def _message(self, call: Prepared, route: Route, name: str | None = None, attempt: int = 1) -> Message:
        payload = TaskPayload(
            tool=call.tool, session=call.session, args=call.args,
            seq=route.seq, base=route.base, sent_at=time.time(), attempt=attempt,
        )
        return Message(
            task_id=str(uuid.uuid4()),
            name=name or task_name(call.tool),
            queue=Queue(queue_name(route.worker)),
            kwargs=payload.model_dump(),
            route=route,
        )

    @staticmethod
    def _wait_slice(deadline: float) -> float | None:
        """How long the next blocking read may take; None once the deadline has passed."""
        left = deadline - time.monotonic()
        return min(LOSS_POLL, left) if left > 0 else None

    @staticmethod
    def _lost(msg: Message, boot: Any) -> bool:
        """The worker holding this call stopped beating or restarted, and it was not resent yet."""
        current = boot.decode() if isinstance(boot, bytes) else boot
        return msg.kwargs["attempt"] == 1 and current != msg.route.boot

    def _publish_options(self, msg: Message, call: Prepared) -> dict[str, Any]:
        return {
            "kwargs": msg.kwargs,
            "task_id": msg.task_id,
            "queue": msg.queue,
            "expires": call.timeout,
            "kwargsrepr": json.dumps({"tool": call.tool, "session": call.session}),
        }

    @staticmethod
    def _finish(raw: Any, call: Prepared, msg: Message) -> ToolResult:
        if raw is None:
            raise TaskTimeout(
                f"no result within {call.timeout:.0f}s; the worker may be overloaded or gone",
                session=call.session, tool=call.tool,
            )
        result = ToolResult.model_validate_json(raw[1] if isinstance(raw, (list, tuple)) else raw)
        result.timings.total = round((time.time() - msg.sent_at) * 1000, 2)
        if msg.route.status is RouteStatus.expired:
            result.notice = EXPIRED_NOTICE
            result.text = f"Note: {EXPIRED_NOTICE}\n{result.text}"
        return result


@contextmanager
def broker_errors(session: str | None = None, tool: str | None = None) -> Iterator[None]:
    """Redis or kombu connection failures as BrokerUnavailable, naming the URL's host only."""
    try:
        yield
    except (RedisConnectionError, RedisTimeoutError, OperationalError) as exc:
        raise BrokerUnavailable(
            f"cannot reach Redis: {exc}", session=session, tool=tool
        ) from exc
