"""What a handler gets (the session's active tab, timeouts, element lookup) and returns."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from playwright.async_api import Locator, Page

from client.settings import Settings
from client.tools import OptionalTarget, Tool

from ..browser import BrowserHost
from ..refs import resolve_ref
from ..sessions import BrowserSession, PageState

__all__ = ["ToolContext", "Outcome", "HANDLERS", "handler"]

M = TypeVar("M", bound=Tool)


@dataclass
class Outcome:
    text: str = ""
    data: Any = None
    images: list[dict[str, str]] = field(default_factory=list)

    def add_image(self, raw: bytes, mime: str) -> None:
        self.images.append({"mime": mime, "data": base64.b64encode(raw).decode()})


@dataclass
class ToolContext:
    session: BrowserSession
    tab: PageState
    host: BrowserHost
    settings: Settings

    @property
    def page(self) -> Page:
        return self.tab.page

    def timeout_ms(self, model: Tool, default: float | None = None) -> float:
        return 1000 * (model.timeout or default or self.settings.action_timeout)

    def locate(self, model: OptionalTarget) -> Locator:
        return self.target(model.ref, model.selector)

    def target(self, ref: str | None, selector: str | None) -> Locator:
        """An element by snapshot ref (refused when stale) or by CSS selector."""
        if ref is not None:
            fresh = self.tab.snapshot_navigations == self.tab.navigations
            return self.page.locator(resolve_ref(ref, self.tab.snapshot, fresh))
        assert selector is not None
        return self.page.locator(selector).first

    async def settled(self, action: Awaitable[Any], model: Tool) -> None:
        """Run an action; if it started a navigation, return once the new page has loaded; if it
        opened a dialog, return at once (the page is blocked until someone answers it)."""
        before = self.tab.navigations
        work = asyncio.ensure_future(action)
        opened = asyncio.ensure_future(self.tab.dialog_opened.wait())
        try:
            await asyncio.wait({work, opened}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            opened.cancel()
        if not work.done():  # blocked by the dialog; it finishes once the dialog is answered
            work.add_done_callback(lambda t: t.cancelled() or t.exception())
            return
        work.result()
        await asyncio.sleep(0)
        if self.tab.navigations != before:
            await self.page.wait_for_load_state("load", timeout=self.timeout_ms(model))

    async def notes(self) -> list[str]:
        """What a model should know after any tool: new console errors, URLs the policy refused in
        any tab (a popup's too), an open dialog."""
        notes = [f"Console error: {e}" for e in self.tab.new_errors()[:5]]
        refused = [url for tab in self.session.tabs for url in tab.take_refused()]
        notes += [f"Navigation to {url} was refused by the URL policy." for url in refused[:5]]
        if self.tab.dialog is not None:
            d = self.tab.dialog
            notes.append(f"A {d.type} dialog is open: {d.message!r}. Answer it with browser_handle_dialog.")
        return notes

    async def page_line(self) -> str:
        return f"Page: {await self.page.title()!r} at {self.page.url}"


Handler = Callable[[ToolContext, Any], Awaitable[Outcome]]
HANDLERS: dict[str, Handler] = {}


def handler(model: type[M]) -> Callable[[Callable[[ToolContext, M], Awaitable[Outcome]]], Any]:
    def register(fn: Callable[[ToolContext, M], Awaitable[Outcome]]) -> Any:
        HANDLERS[model.name] = fn
        return fn

    return register
