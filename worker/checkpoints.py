"""Session checkpoints: enough to rebuild a session in a new browser or on another worker.

Per context: storage state (cookies, local storage), viewport, proxy, tab URLs and the active tab.
A checkpoint is captured after each state-changing action, once its result has been sent and
before the session's next task starts (a few ms, off the caller's path), kept in memory for
browser-crash recovery and
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

__all__ = ["ContextState", "Checkpoint", "CheckpointStore", "capture", "refresh", "restore", "checkpoint_key"]

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


def layout(session: BrowserSession, storage: dict[str, Any] | None) -> Checkpoint:
    """The session's tabs and settings as they are now, with the given storage state."""
    state = ContextState(tabs=[t.page.url for t in session.tabs], active=session.active,
                         viewport=session.viewport, proxy=session.proxy, storage=storage)
    return Checkpoint(session=session.id, contexts={"default": state}, saved_at=time.time())


def stored(checkpoint: Checkpoint | None) -> dict[str, Any] | None:
    state = checkpoint.contexts.get(checkpoint.active_context) if checkpoint else None
    return state.storage if state else None


LOCAL_STORAGE = """() => {
  try {
    return [location.origin, Object.keys(localStorage).map(k => ({name: k, value: localStorage.getItem(k)}))];
  } catch (e) { return [null, []]; }
}"""
PAGE_READ_LIMIT = 0.5


async def capture(session: BrowserSession) -> Checkpoint:
    """The session as it is now: URLs for free, cookies from the browser in about a millisecond,
    local storage from each open tab (a tab busy navigating keeps its origin's previous copy;
    Playwright's storage_state() would wait for it)."""
    context, tabs = session.context, list(session.tabs)
    assert context is not None
    checkpoint = layout(session, None)
    previous = stored(session.checkpoint) or {}
    origins = {o["origin"]: o for o in previous.get("origins", [])}
    cookies = await context.cookies()
    for tab in tabs:
        try:
            origin, items = await asyncio.wait_for(tab.page.evaluate(LOCAL_STORAGE), PAGE_READ_LIMIT)
        except Exception:  # noqa: BLE001 - navigating or crashed: keep what we had
            continue
        if origin and origin != "null":
            origins[origin] = {"origin": origin, "localStorage": items}
    if session.context is not context:
        raise RuntimeError("the context went away during the capture")
    checkpoint.contexts["default"].storage = {"cookies": cookies, "origins": list(origins.values())}
    return checkpoint


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
    if checkpoint is not None:
        log.info("session %s: rebuilding with %d cookie(s), %d origin(s), %d tab(s)", session.id,
                 len((state.storage or {}).get("cookies", [])),
                 len((state.storage or {}).get("origins", [])), len(state.tabs))
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


async def refresh(session: BrowserSession, store: CheckpointStore) -> None:
    """Capture the session and mirror it to Redis; on failure keep the last good checkpoint."""
    if session.context is None:  # crashed or being rebuilt
        return
    session.checkpoint = layout(session, stored(session.checkpoint))  # URLs first: they cannot fail
    try:
        session.checkpoint = await capture(session)
        await store.save(session.checkpoint)
    except Exception as exc:  # noqa: BLE001 - best effort; the next action refreshes again
        log.debug("checkpoint of %s skipped: %s", session.id, type(exc).__name__)
