"""Session checkpoints: enough to rebuild a session in a new browser or on another worker.

Per context: storage state (cookies, local storage), viewport, proxy, tab URLs and the active tab.
A checkpoint is captured after each state-changing action, once its result has been sent and
before the session's next task starts (a few ms, off the caller's path). It is kept in memory for
browser-crash recovery and mirrored to Redis with a TTL for worker loss, only when it changed (most
evaluates change nothing). It holds secrets (cookies): never logged.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING, Any

import redis.asyncio as aioredis
from playwright.async_api import BrowserContext, Page
from pydantic import BaseModel, Field

from client.routing import keys

if TYPE_CHECKING:
    from .browser import BrowserHost
    from .sessions import BrowserSession, NamedContext

__all__ = ["ContextState", "Checkpoint", "CheckpointStore", "capture", "refresh", "restore"]

log = logging.getLogger(__name__)
BLANK = ("", "about:blank")


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


def layout(session: BrowserSession) -> Checkpoint:
    """The session's contexts, tabs and settings as they are now. A context with no live browser
    context (not built yet, or lost with a browser) keeps what the last checkpoint said."""
    previous = session.checkpoint.contexts if session.checkpoint else {}
    contexts = {}
    for name, nc in session.contexts.items():
        before = previous.get(name)
        if nc.context is None:
            contexts[name] = before or ContextState(viewport=nc.viewport, proxy=nc.proxy, storage=nc.storage)
            continue
        contexts[name] = ContextState(tabs=[t.page.url for t in nc.tabs], active=nc.active,
                                      viewport=nc.viewport, proxy=nc.proxy,
                                      storage=before.storage if before else nc.storage)
    return Checkpoint(session=session.id, contexts=contexts, active_context=session.current,
                      saved_at=time.time())


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
    checkpoint = layout(session)
    live = {name: nc.context for name, nc in session.contexts.items() if nc.context is not None}
    for name, context in live.items():
        state = checkpoint.contexts[name]
        state.storage = await _storage(context, session.contexts[name].tabs, state.storage)
    if any(session.contexts.get(n) is None or session.contexts[n].context is not c for n, c in live.items()):
        raise RuntimeError("a context went away during the capture")
    return checkpoint


async def _storage(context: BrowserContext, tabs: list[Any], before: dict[str, Any] | None) -> dict[str, Any]:
    origins = {o["origin"]: o for o in (before or {}).get("origins", [])}
    cookies, *reads = await asyncio.gather(context.cookies(), *(_local_storage(t.page) for t in tabs))
    for origin, items in filter(None, reads):
        if origin and origin != "null":
            origins[origin] = {"origin": origin, "localStorage": items}
    return {"cookies": cookies, "origins": list(origins.values())}


async def _local_storage(page: Page) -> tuple[str | None, list[dict[str, str]]] | None:
    """One tab's origin and local storage; None while it navigates or after it crashed."""
    try:
        return await asyncio.wait_for(page.evaluate(LOCAL_STORAGE), PAGE_READ_LIMIT)
    except Exception:  # noqa: BLE001 - keep what we had for its origin
        return None


async def restore(host: BrowserHost, checkpoint: Checkpoint | None, nc: NamedContext) -> BrowserContext:
    """A new browser context for `nc`, carrying its checkpointed state, with its tabs reopened.
    A context with nothing to carry comes from the warm pool when one is ready."""
    state = (checkpoint.contexts.get(nc.name) if checkpoint else None) or ContextState(
        viewport=nc.viewport, proxy=nc.proxy, storage=nc.storage)
    options: dict[str, Any] = {}
    if state.storage:
        options["storage_state"] = state.storage
    if state.viewport:
        options["viewport"] = state.viewport
    if state.proxy:
        options["proxy"] = state.proxy
    browser = await host.browser()
    if not options and not state.tabs and (warm := host.warm.take(browser)) is not None:
        context, page = warm
        nc.add_tab(page)
        return context
    if checkpoint is not None and state.tabs:
        log.info("context %s: rebuilding with %d cookie(s), %d origin(s), %d tab(s)", nc.name,
                 len((state.storage or {}).get("cookies", [])),
                 len((state.storage or {}).get("origins", [])), len(state.tabs))
    context = await browser.new_context(**options)
    nc.viewport, nc.proxy = state.viewport, state.proxy
    for url in state.tabs:
        page = await context.new_page()
        nc.add_tab(page)
        if url not in BLANK:
            try:
                await page.goto(url, wait_until="load")
            except Exception as exc:  # noqa: BLE001 - a tab that will not reload stays blank
                log.warning("context %s: could not reopen a tab (%s)", nc.name, type(exc).__name__)
    nc.active = min(state.active, max(len(nc.tabs) - 1, 0))
    return context


class CheckpointStore:
    """The Redis mirror, used from the browser loop."""

    def __init__(self, redis_url: str, ttl: float) -> None:
        self.redis = aioredis.Redis.from_url(redis_url, socket_connect_timeout=5)
        self.ttl = int(ttl)

    async def save(self, checkpoint: Checkpoint) -> None:
        await self.redis.set(keys.checkpoint(checkpoint.session), checkpoint.model_dump_json(), ex=self.ttl)

    async def load(self, sid: str) -> Checkpoint | None:
        raw = await self.redis.get(keys.checkpoint(sid))
        return Checkpoint.model_validate_json(raw) if raw else None


async def refresh(session: BrowserSession, store: CheckpointStore) -> None:
    """Capture the session and mirror it to Redis; on failure keep the last good checkpoint."""
    if session.context is None:  # crashed or being rebuilt
        return
    session.checkpoint = layout(session)  # URLs first: they cannot fail
    try:
        session.checkpoint = await capture(session)
        mirrored = session.checkpoint.model_dump_json(exclude={"saved_at"})
        if mirrored != session.mirrored:
            await store.save(session.checkpoint)
            session.mirrored = mirrored
    except Exception as exc:  # noqa: BLE001 - best effort; the next action refreshes again
        log.debug("checkpoint of %s skipped: %s", session.id, type(exc).__name__)
