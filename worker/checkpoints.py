"""Session checkpoints: enough to rebuild a session in a new browser or on another worker.

Per context: storage state (cookies, local storage), viewport, proxy, tab URLs and the active tab.
A checkpoint is captured after state-changing actions by a per-session flusher that coalesces
bursts (one capture in flight, one trailing), kept in memory for browser-crash recovery and
mirrored to Redis with a TTL for worker loss. It holds secrets (cookies): never logged.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any

import redis.asyncio as aioredis
from playwright.async_api import Browser, BrowserContext
from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from .sessions import BrowserSession

__all__ = ["ContextState", "Checkpoint", "CheckpointStore", "capture", "restore", "checkpoint_key"]

log = logging.getLogger(__name__)
BLANK = ("", "about:blank")


def checkpoint_key(sid: str) -> str:
    return f"bq:checkpoint:{sid}"


class ContextState(BaseModel):
    storage: dict[str, Any] | None = None
    viewport: dict[str, int] | None = None
    proxy: dict[str, str] | None = None
    tabs: list[str] = Field(default_factory=list)
    active: int = 0


class Checkpoint(BaseModel):
    session: str
    contexts: dict[str, ContextState] = Field(default_factory=dict)
    active_context: str = "default"
    saved_at: float = 0.0


async def capture(session: BrowserSession) -> Checkpoint:
    """The session as it is now (a storage-state read of a few ms, URLs for free)."""
    state = ContextState(tabs=[t.page.url for t in session.tabs], active=session.active,
                         viewport=session.viewport, proxy=session.proxy)
    if session.context is not None:
        state.storage = dict(await session.context.storage_state())
    return Checkpoint(session=session.id, contexts={"default": state}, saved_at=time.time())


async def restore(browser: Browser, checkpoint: Checkpoint | None, session: BrowserSession) -> BrowserContext:
    """A new context carrying the checkpoint's state, with its tabs reopened."""
    state = (checkpoint.contexts.get(checkpoint.active_context) if checkpoint else None) or ContextState()
    options: dict[str, Any] = {}
    if state.storage:
        options["storage_state"] = state.storage
    if state.viewport:
        options["viewport"] = state.viewport
    if state.proxy:
        options["proxy"] = state.proxy
    context = await browser.new_context(**options)
    session.viewport, session.proxy = state.viewport, state.proxy
    for url in state.tabs:
        page = await context.new_page()
        session.add_tab(page)
        if url not in BLANK:
            try:
                await page.goto(url, wait_until="load")
            except Exception as exc:  # noqa: BLE001 - a tab that will not reload stays blank
                log.warning("session %s: could not reopen a tab (%s)", session.id, type(exc).__name__)
    session.active = min(state.active, max(len(session.tabs) - 1, 0))
    return context


class CheckpointStore:
    """The Redis mirror, used from the browser loop."""

    def __init__(self, redis_url: str, ttl: float) -> None:
        self.redis = aioredis.Redis.from_url(redis_url, socket_connect_timeout=5)
        self.ttl = int(ttl)

    async def save(self, checkpoint: Checkpoint) -> None:
        await self.redis.set(checkpoint_key(checkpoint.session), checkpoint.model_dump_json(), ex=self.ttl)

    async def load(self, sid: str) -> Checkpoint | None:
        raw = await self.redis.get(checkpoint_key(sid))
        return Checkpoint.model_validate_json(raw) if raw else None

    async def delete(self, sid: str) -> None:
        await self.redis.delete(checkpoint_key(sid))

    async def close(self) -> None:
        await self.redis.aclose()


class Flusher:
    """Coalesces checkpoint refreshes: at most one capture in flight, plus one trailing."""

    def __init__(self, session: BrowserSession, store: CheckpointStore) -> None:
        self.session = session
        self.store = store
        self._dirty = False
        self._task: asyncio.Task[None] | None = None

    def mark(self) -> None:
        self._dirty = True
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        while self._dirty:
            self._dirty = False
            await self.flush()

    async def flush(self) -> None:
        try:
            self.session.checkpoint = await capture(self.session)
            await self.store.save(self.session.checkpoint)
        except Exception as exc:  # noqa: BLE001 - a checkpoint is best effort; the next one retries
            log.debug("checkpoint of %s skipped: %s", self.session.id, type(exc).__name__)

    async def settle(self) -> None:
        """Wait for a capture in flight (before shutdown or a move)."""
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)
