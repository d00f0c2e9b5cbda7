"""One worker's moving parts (browser host, sessions, registry) and how a call executes.

Everything here runs on the browser loop except `call`, which Celery's pool threads use to hand
work over and wait for it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from client.protocol import TaskPayload
from client.results import Timings, ToolResult
from client.settings import Settings
from client.tools import Tool

from .browser import BrowserHost
from .handlers import HANDLERS, ToolContext
from .registry import Registry
from .sessions import SessionManager

__all__ = ["Runtime"]

log = logging.getLogger(__name__)

GRACE = 5.0


class Runtime:
    def __init__(self, settings: Settings, name: str) -> None:
        self.settings = settings
        self.name = name
        self.host = BrowserHost(settings, name)
        self.sessions = SessionManager(self.host)
        self.registry = Registry(settings, name, self.status)

    def status(self) -> dict[str, Any]:
        return {
            "browser": self.host.state.value,
            "browser_pid": self.host.pid or "",
            "launches": self.host.launches,
            "local_sessions": len(self.sessions.sessions),
        }

    def call(self, payload: TaskPayload, model: Tool | None) -> ToolResult:
        """From a pool thread: run on the loop and wait (bounded, in case the loop is wedged)."""
        limit = (model.timeout if model and model.timeout else self.settings.action_timeout)
        future = self.host.submit(self._execute(payload, model))
        return future.result(timeout=limit + self.settings.result_timeout)

    async def _execute(self, payload: TaskPayload, model: Tool | None) -> ToolResult:
        session = self.sessions.obtain(payload.session, payload.base)
        async with session.turns.turn(payload.seq):
            started = time.time()
            if model is None:
                data = await self._close(payload.session)
                outcome_text, outcome_data, images = f"Session {payload.session} closed", data, []
            else:
                tab = await session.tab(self.host)
                ctx = ToolContext(session, tab, self.host, self.settings)
                limit = (model.timeout or self.settings.action_timeout) + GRACE
                outcome = await asyncio.wait_for(HANDLERS[model.name](ctx, model), limit)
                outcome_text, outcome_data, images = outcome.text, outcome.data, outcome.images
            session.last_used = finished = time.time()
        return ToolResult(
            ok=True, tool=payload.tool, session=payload.session, worker=self.name,
            data=outcome_data, text=outcome_text, images=images,
            timings=Timings(
                queued=round(max(0.0, started - payload.sent_at) * 1000, 2) if payload.sent_at else 0.0,
                executed=round((finished - started) * 1000, 2),
            ),
        )

    async def _close(self, sid: str) -> dict[str, Any]:
        closed = await self.sessions.close(sid)
        await asyncio.to_thread(self.registry.forget_session, sid)
        return {"closed": closed}

    def start(self) -> None:
        self.registry.start()
        log.info("worker %s ready (capacity %s, concurrency %s)", self.name,
                 self.settings.max_sessions, self.settings.concurrency)

    def stop(self) -> None:
        """Close every session and the browser, then leave the registry."""
        self.registry.stopping()
        try:
            self.host.submit(self.sessions.close_all()).result(timeout=15)
        except Exception:  # noqa: BLE001
            log.exception("closing sessions at shutdown")
        self.host.shutdown()
        self.registry.deregister()
