"""One worker's moving parts (browser host, sessions, registry) and how a call executes.

Everything here runs on the browser loop except `call`, `start` and `stop`, which Celery's
threads use. A call that hits a browser crash (Chromium killed, disconnected, a renderer crash)
rebuilds its session from the checkpoint in a relaunched browser and is retried exactly once.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Any

from playwright.async_api import Error as PlaywrightError

from client.protocol import TaskPayload
from client.results import Timings, ToolResult
from client.settings import Settings
from client.tools import Tool

from .browser import BrowserDied, BrowserHost
from .checkpoints import CheckpointStore
from .errors import BrowserCrashed, Retried, StaleTask
from .handlers import HANDLERS, Outcome, ToolContext
from .registry import Registry
from .sessions import BrowserSession, SessionManager

__all__ = ["Runtime", "is_crash"]

log = logging.getLogger(__name__)

GRACE = 5.0
CRASH_MARKERS = (
    "Target page, context or browser has been closed",
    "Target crashed",
    "Page crashed",
    "Browser has been closed",
    "Browser closed",
    "browser has disconnected",
    "Target closed",
)


def is_crash(exc: BaseException, session: BrowserSession) -> bool:
    if isinstance(exc, (BrowserCrashed, BrowserDied)):
        return True
    return isinstance(exc, PlaywrightError) and (
        session.crashed or any(marker in exc.message for marker in CRASH_MARKERS)
    )


@dataclass
class Done:
    outcome: Outcome
    recovered: str | None


class Runtime:
    def __init__(self, settings: Settings, name: str) -> None:
        self.settings = settings
        self.name = name
        self.crashes = 0
        self.host = BrowserHost(settings, name)
        self.checkpoints = CheckpointStore(settings.redis_url, settings.session_timeout + 60)
        self.sessions = SessionManager(self.host, self.checkpoints)
        self.registry = Registry(settings, name, self.status)
        self._sweeper: asyncio.Future[None] | None = None

    def status(self) -> dict[str, Any]:
        return {
            "browser": self.host.state.value,
            "browser_pid": self.host.pid or "",
            "launches": self.host.launches,
            "crashes": self.crashes,
            "local_sessions": len(self.sessions.sessions),
            "warm_contexts": len(self.host.warm),
        }

    def call(self, payload: TaskPayload, model: Tool | None) -> ToolResult:
        """From a pool thread: run on the loop and wait (bounded, in case the loop is wedged)."""
        limit = model.timeout if model and model.timeout else self.settings.action_timeout
        future = self.host.submit(self._execute(payload, model))
        return future.result(timeout=2 * limit + self.settings.result_timeout)

    async def _execute(self, payload: TaskPayload, model: Tool | None) -> ToolResult:
        session = await self._session_for(payload)
        await session.turns.acquire(payload.seq)
        try:
            started = time.time()
            if model is None:
                closed = await self._close(payload.session)
                done = Done(Outcome(f"Session {payload.session} closed", closed), None)
            else:
                done = await self._run_tool(session, model)
            session.last_used = finished = time.time()
        except BaseException:
            await session.turns.release(payload.seq)
            raise
        if model is not None and (model.changes_state or done.recovered):
            self.sessions.refresh_then_release(session, payload.seq)
        else:
            await session.turns.release(payload.seq)
        return self._result(payload, done, session, started, finished)

    def _result(self, payload: TaskPayload, done: Done, session: BrowserSession,
                started: float, finished: float) -> ToolResult:
        outcome = done.outcome
        return ToolResult(
            ok=True, tool=payload.tool, session=payload.session, worker=self.name,
            data=outcome.data, text=outcome.text, images=outcome.images,
            retried=done.recovered is not None or payload.attempt > 1,
            recovered=done.recovered or session.take_recovery(),
            timings=Timings(
                queued=round(max(0.0, started - payload.sent_at) * 1000, 2) if payload.sent_at else 0.0,
                executed=round((finished - started) * 1000, 2),
            ),
        )

    async def _session_for(self, payload: TaskPayload) -> BrowserSession:
        """The local session; or, on its first task here, one adopted after a fencing check
        (a stale copy of a task for a session that has since moved is refused, never run)."""
        session = self.sessions.get(payload.session)
        if session is not None:
            return session
        owner, base = await self.registry.owner(payload.session)
        if owner != self.name or base != payload.base:
            raise StaleTask(
                f"session {payload.session} is owned by {owner or 'nobody'} (base {base}), "
                f"not by {self.name} (base {payload.base}); this copy of the task was dropped"
            )
        session = self.sessions.get(payload.session)  # another task may have adopted it meanwhile
        if session is not None:
            return session
        checkpoint = await self.checkpoints.load(payload.session)
        return self.sessions.create(payload.session, payload.base, checkpoint)

    async def _run_tool(self, session: BrowserSession, model: Tool) -> Done:
        try:
            return Done(await self._attempt(session, model), None)
        except Exception as exc:
            if not is_crash(exc, session):
                raise
            self.crashes += 1
            log.warning("session %s: browser crash during %s; rebuilding and retrying once",
                        session.id, model.name)
        try:
            await self._recover(session)
            outcome = await self._attempt(session, model)
            session.take_recovery()  # this result already says so
            return Done(outcome, "browser_crash")
        except Exception as exc:
            if is_crash(exc, session):
                exc = BrowserCrashed(f"the browser crashed again while retrying {model.name}: {exc}")
            raise Retried(exc, "browser_crash") from exc

    async def _attempt(self, session: BrowserSession, model: Tool) -> Outcome:
        """The tool once, bounded as a whole: a browser dying under Playwright can leave a call
        that never settles, and the session's turn must come back."""
        limit = (model.timeout or self.settings.action_timeout) + GRACE
        try:
            return await self.host.guard(self._run_handler(session, model), limit)
        except BrowserDied:
            raise BrowserCrashed(f"the browser died during {model.name}") from None

    async def _run_handler(self, session: BrowserSession, model: Tool) -> Outcome:
        tab = await session.tab(self.host)
        if tab.crashed:
            raise BrowserCrashed("the tab's renderer crashed")
        ctx = ToolContext(session, tab, self.host, self.settings)
        dismissed = None if model.name == "browser_handle_dialog" else await tab.settle_dialog()
        outcome = await HANDLERS[model.name](ctx, model)
        notes = ([dismissed] if dismissed else []) + await ctx.notes()
        if notes:
            outcome.text = "\n".join([outcome.text, *notes])
        return outcome

    async def _recover(self, session: BrowserSession) -> None:
        """One shared relaunch if the browser is gone, then the session from its checkpoint."""
        dead = await session.drop_context()
        if dead is not None and not dead.is_connected():
            await self.host.discard(dead)
        for attempt in (1, 2):
            browser = await self.host.browser()
            try:
                await self.host.guard(session.tab(self.host), self.settings.action_timeout)
                return
            except (PlaywrightError, BrowserDied) as exc:
                if attempt == 2 or not (isinstance(exc, BrowserDied) or is_crash(exc, session)):
                    raise
                await self.host.discard(browser)

    async def _close(self, sid: str) -> dict[str, Any]:
        closed = await self.sessions.close(sid)
        await self.registry.forget(sid)
        return {"closed": closed}

    async def _expire_idle(self) -> None:
        interval = min(30.0, max(self.settings.session_timeout / 4, 0.5))
        while True:
            await asyncio.sleep(interval)
            for sid in self.sessions.idle(self.settings.session_timeout):
                log.info("session %s idle for %.0fs: closing it", sid, self.settings.session_timeout)
                try:
                    await self.sessions.close(sid)
                    await self.registry.expire(sid)
                except Exception:  # noqa: BLE001 - the sweep goes on
                    log.exception("expiring session %s", sid)

    def prepare(self) -> None:
        """Before consuming: whatever a previous worker of this name held is gone."""
        self.registry.adopt_name()

    def start(self) -> None:
        self.registry.start()
        self._sweeper = self.host.submit(self._expire_idle())
        log.info("worker %s ready (capacity %s, concurrency %s)", self.name,
                 self.settings.max_sessions, self.settings.concurrency)

    def stop(self) -> None:
        """Checkpoint every session to Redis so it can move, close everything, leave the registry."""
        self.registry.stopping()
        if self._sweeper is not None:
            self._sweeper.cancel()
        try:
            self.host.submit(self.sessions.checkpoint_all()).result(timeout=15)
            self.host.submit(self.sessions.close_all()).result(timeout=15)
        except Exception:  # noqa: BLE001
            log.exception("closing sessions at shutdown")
        self.host.shutdown()
        self.registry.release()
