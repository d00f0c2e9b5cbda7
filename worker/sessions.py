"""Per-session browser state on a worker, and the order its tasks run in.

A session owns one browser context with its tabs. Its tasks carry sequence numbers handed out by
the routing script; `Turns` runs them one at a time in that order even though Celery's pool
threads pick them up in any order. A number that never arrives (a client died between routing
and publishing) is skipped after `GAP_TIMEOUT`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from playwright.async_api import Browser, BrowserContext, Page

from .browser import BrowserHost
from .tabs import PageState
from .checkpoints import Checkpoint, CheckpointStore, refresh, restore

__all__ = ["Turns", "PageState", "BrowserSession", "SessionManager", "GAP_TIMEOUT"]

log = logging.getLogger(__name__)
GAP_TIMEOUT = 5.0


class Turns:
    def __init__(self, next_seq: int) -> None:
        self.next = next_seq
        self._busy = False
        self._waiting: set[int] = set()
        self._cond = asyncio.Condition()

    @property
    def busy(self) -> bool:
        return self._busy or bool(self._waiting)

    def _may_run(self, seq: int) -> bool:
        return not self._busy and (seq == 0 or seq <= self.next)

    async def _wait_turn(self, seq: int) -> None:
        while not self._may_run(seq):
            try:
                await asyncio.wait_for(self._cond.wait(), GAP_TIMEOUT)
            except asyncio.TimeoutError:
                if seq and not self._busy and seq == min(self._waiting):
                    log.warning("seq %s waited %.0fs for seq %s; skipping the gap", seq, GAP_TIMEOUT, self.next)
                    self.next = seq

    async def acquire(self, seq: int) -> None:
        """Wait for this task's turn: all lower sequence numbers done (or given up on)."""
        async with self._cond:
            if seq:
                self._waiting.add(seq)
            try:
                await self._wait_turn(seq)
            finally:
                self._waiting.discard(seq)
            self._busy = True

    async def release(self, seq: int) -> None:
        async with self._cond:
            self._busy = False
            self.next = max(self.next, seq + 1)
            self._cond.notify_all()

    @asynccontextmanager
    async def turn(self, seq: int) -> AsyncIterator[None]:
        await self.acquire(seq)
        try:
            yield
        finally:
            await self.release(seq)


@dataclass
class BrowserSession:
    id: str
    turns: Turns
    context: BrowserContext | None = None
    tabs: list[PageState] = field(default_factory=list)
    active: int = 0
    snapshots: int = 0
    viewport: dict[str, int] | None = None
    proxy: dict[str, str] | None = None
    checkpoint: Checkpoint | None = None
    recovery: str | None = None
    created: float = field(default_factory=time.time)
    last_used: float = field(default_factory=time.time)

    async def tab(self, host: BrowserHost) -> PageState:
        """The active tab; the context is rebuilt from the checkpoint when there is none."""
        if self.context is None:
            self.tabs, self.active = [], 0
            self.context = await restore(await host.browser(), self.checkpoint, self)
            self.context.on("page", self.add_tab)
        self.prune()
        if not self.tabs:
            self.add_tab(await self.context.new_page())
            self.active = 0
        return self.tabs[self.active]

    def add_tab(self, page: Page) -> PageState:
        """Track a tab: one browserq opened, or one the page opened (a popup)."""
        for tab in self.tabs:
            if tab.page is page:
                return tab
        state = PageState(page)
        self.tabs.append(state)
        return state

    def prune(self) -> None:
        """Drop tabs the page closed itself. Done lazily, at the start of a task: when the whole
        browser dies its pages report closed too, and those must stay in the checkpoint."""
        if any(t.closed for t in self.tabs):
            current = self.tabs[self.active] if self.active < len(self.tabs) else None
            self.tabs = [t for t in self.tabs if not t.closed]
            self.active = self.tabs.index(current) if current in self.tabs else max(0, len(self.tabs) - 1)

    @property
    def crashed(self) -> bool:
        return any(t.crashed for t in self.tabs)

    async def drop_context(self) -> Browser | None:
        """Forget a broken context (closing it if the browser still answers); returns the
        browser it belonged to, so the caller can tell whether that browser is dead too."""
        context, self.context, self.tabs, self.active = self.context, None, [], 0
        if context is None:
            return None
        try:
            await asyncio.wait_for(context.close(), 5)
        except Exception:  # noqa: BLE001 - it is broken; that is why it goes
            pass
        return context.browser

    def forget_browser(self) -> None:
        """The browser died: its context and pages are gone; the next task rebuilds them."""
        if self.context is not None:
            self.recovery = "browser_crash"
        self.context, self.tabs, self.active = None, [], 0

    def take_recovery(self) -> str | None:
        """What this session was rebuilt from since the last result said so (said once)."""
        recovery, self.recovery = self.recovery, None
        return recovery

    async def close(self) -> None:
        context, self.context, self.tabs = self.context, None, []
        if context is not None:
            await context.close()


class SessionManager:
    """The sessions on this worker. Lives on the browser loop."""

    def __init__(self, host: BrowserHost, store: CheckpointStore) -> None:
        self.host = host
        self.store = store
        self.sessions: dict[str, BrowserSession] = {}
        self._refreshing: set[asyncio.Task[None]] = set()
        host.on_disconnect.append(self._browser_lost)

    def get(self, sid: str) -> BrowserSession | None:
        return self.sessions.get(sid)

    def create(self, sid: str, base: int, checkpoint: Checkpoint | None) -> BrowserSession:
        session = BrowserSession(sid, Turns(max(base, 1)), checkpoint=checkpoint,
                                 recovery="worker_lost" if checkpoint else None)
        self.sessions[sid] = session
        return session

    async def close(self, sid: str) -> bool:
        session = self.sessions.pop(sid, None)
        if session is not None:
            await session.close()
        await self.store.delete(sid)
        return session is not None

    def idle(self, timeout: float) -> list[str]:
        cutoff = time.time() - timeout
        return [sid for sid, s in self.sessions.items() if s.last_used < cutoff and not s.turns.busy]

    def refresh_then_release(self, session: BrowserSession, seq: int) -> None:
        """Checkpoint after a state-changing task, then let the session's next task run; in the
        background, so the task's result does not wait for it."""
        task = asyncio.get_running_loop().create_task(self._refresh(session, seq))
        self._refreshing.add(task)
        task.add_done_callback(self._refreshing.discard)

    async def _refresh(self, session: BrowserSession, seq: int) -> None:
        try:
            await refresh(session, self.store)
        finally:
            await session.turns.release(seq)

    async def checkpoint_all(self) -> None:
        for session in list(self.sessions.values()):
            async with session.turns.turn(0):
                await refresh(session, self.store)

    async def close_all(self) -> None:
        for sid, session in list(self.sessions.items()):
            try:
                await session.close()
            except Exception:  # noqa: BLE001 - keep closing the others
                log.exception("closing session %s", sid)
        self.sessions.clear()

    def _browser_lost(self) -> None:
        for session in self.sessions.values():
            session.forget_browser()
