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
from typing import Any

from playwright.async_api import Browser, BrowserContext, Page

from client.settings import Settings

from .browser import BrowserHost
from .checkpoints import Checkpoint, CheckpointStore, refresh, restore
from .tabs import PageState

__all__ = ["Turns", "PageState", "NamedContext", "BrowserSession", "SessionManager", "GAP_TIMEOUT"]

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
class NamedContext:
    """One of a session's browser contexts: its own cookies, storage, proxy, viewport and tabs."""

    name: str
    context: BrowserContext | None = None
    tabs: list[PageState] = field(default_factory=list)
    active: int = 0
    viewport: dict[str, int] | None = None
    proxy: dict[str, str] | None = None
    storage: dict[str, Any] | None = None  # the storageState it was created with
    max_tabs: int = Settings.model_fields["max_tabs"].default  # the worker's setting replaces it

    def add_tab(self, page: Page) -> PageState | None:
        """Track a tab: one browserq opened, or one the page opened (a popup). A popup past the
        tab limit is closed at once, so a page cannot open tabs without end."""
        for tab in self.tabs:
            if tab.page is page:
                return tab
        if len(self.tabs) >= self.max_tabs:
            log.warning("context %s: closing a popup past the %d-tab limit", self.name, self.max_tabs)
            asyncio.ensure_future(page.close())
            return None
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

    def forget(self) -> bool:
        """Drop the (dead) context and its pages; True if there was one."""
        had = self.context is not None
        self.context, self.tabs, self.active = None, [], 0
        return had

    async def close(self) -> BrowserContext | None:
        context = self.context
        self.forget()
        if context is not None:
            try:
                await asyncio.wait_for(context.close(), 5)
            except Exception:  # noqa: BLE001 - closing a broken context is best effort
                pass
        return context


@dataclass
class BrowserSession:
    id: str
    turns: Turns
    contexts: dict[str, NamedContext] = field(default_factory=lambda: {"default": NamedContext("default")})
    current: str = "default"
    snapshots: int = 0
    checkpoint: Checkpoint | None = None
    mirrored: str | None = None  # the checkpoint as last written to Redis
    recovery: str | None = None
    created: float = field(default_factory=time.time)
    last_used: float = field(default_factory=time.time)

    @property
    def ctx(self) -> NamedContext:
        return self.contexts[self.current]

    @property
    def context(self) -> BrowserContext | None:
        return self.ctx.context

    @property
    def tabs(self) -> list[PageState]:
        return self.ctx.tabs

    @property
    def active(self) -> int:
        return self.ctx.active

    @active.setter
    def active(self, index: int) -> None:
        self.ctx.active = index

    async def tab(self, host: BrowserHost) -> PageState:
        """The active tab of the active context; a context that has none (new, or lost with a
        browser) is built from the checkpoint."""
        nc = self.ctx
        if nc.context is None:
            nc.forget()
            nc.context = await restore(host, self.checkpoint, nc)
            nc.context.on("page", nc.add_tab)
        nc.prune()
        if not nc.tabs:
            nc.add_tab(await nc.context.new_page())
            nc.active = 0
        return nc.tabs[nc.active]

    def add_tab(self, page: Page) -> PageState | None:
        return self.ctx.add_tab(page)

    def prune(self) -> None:
        self.ctx.prune()

    @property
    def crashed(self) -> bool:
        return any(t.crashed for t in self.tabs)

    async def drop_context(self) -> Browser | None:
        """Forget the active context after a crash; returns the browser it belonged to, so the
        caller can tell whether that browser is dead too."""
        context = await self.ctx.close()
        return context.browser if context is not None else None

    def forget_browser(self) -> None:
        """The browser died: every context and page is gone; the next task rebuilds them."""
        if any([nc.forget() for nc in self.contexts.values()]):
            self.recovery = "browser_crash"

    def take_recovery(self) -> str | None:
        """What this session was rebuilt from since the last result said so (said once)."""
        recovery, self.recovery = self.recovery, None
        return recovery

    async def close(self) -> None:
        for nc in self.contexts.values():
            await nc.close()


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
        if checkpoint is not None:
            session.contexts = {name: NamedContext(name, viewport=state.viewport, proxy=state.proxy)
                                for name, state in checkpoint.contexts.items()} or session.contexts
            session.current = checkpoint.active_context if checkpoint.active_context in session.contexts \
                else next(iter(session.contexts))
        for nc in session.contexts.values():
            nc.max_tabs = self.host.settings.max_tabs
        self.sessions[sid] = session
        return session

    async def close(self, sid: str) -> bool:
        session = self.sessions.pop(sid, None)
        if session is not None:
            await session.close()
        return session is not None  # its checkpoint goes with its registry entry (CLOSE_SCRIPT)

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
