from __future__ import annotations

import asyncio

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page, Response

from client.tools import Navigate, NavigateBack

from ..policy import BLOCKED, UrlRefused, check_url
from ..tabs import PageState
from .context import Outcome, ToolContext, handler

SNIPPET = 500
ERROR_PAGE_WAIT = 2000


@handler(Navigate)
async def navigate(ctx: ToolContext, model: Navigate) -> Outcome:
    response = await go(ctx, ctx.tab, model.url, ctx.timeout_ms(model))
    return await _arrived(ctx, response.status if response else None)


async def go(ctx: ToolContext, tab: PageState, url: str, timeout_ms: float) -> Response | None:
    """A tool's navigation of one tab: the URL policy first, a refused redirect hop named, and
    Chromium's error page let land after a failure."""
    check_url(url, ctx.settings)
    try:
        return await tab.page.goto(url, timeout=timeout_ms, wait_until="load")
    except PlaywrightError as exc:
        if "net::" in exc.message and "ERR_ABORTED" not in exc.message:
            await _error_page_loaded(tab.page)
        if BLOCKED in exc.message:
            hops = tab.take_refused() or ["a refused URL"]
            raise UrlRefused(f"url: {url!r} led to {hops[-1]}, which the URL policy refuses "
                             "(redirect or page navigation)", field="url") from None
        raise
    finally:
        tab.navigations += 1


async def _ready_for_elements(ctx: ToolContext) -> None:
    """Playwright sets up its element engine in each new document on first use (about 25 ms); do it
    while the title and text are read, so the snapshot or click that usually follows does not wait."""
    try:
        await ctx.page.locator(":root").count()
    except PlaywrightError:
        pass


async def _error_page_loaded(page: Page) -> None:
    """Chromium commits its error page just after goto fails; let it land so the next tool does
    not race it ("Execution context was destroyed")."""
    try:
        await page.wait_for_url("chrome-error://**", wait_until="load", timeout=ERROR_PAGE_WAIT)
    except PlaywrightError:
        pass


@handler(NavigateBack)
async def navigate_back(ctx: ToolContext, model: NavigateBack) -> Outcome:
    response = await ctx.page.go_back(timeout=ctx.timeout_ms(model), wait_until="load")
    ctx.tab.navigations += 1
    if response is None and ctx.page.url in ("", "about:blank"):
        return Outcome(text="No previous page in this tab's history.", data={"url": ctx.page.url})
    return await _arrived(ctx, response.status if response else None)


async def _arrived(ctx: ToolContext, status: int | None) -> Outcome:
    title, snippet, _ = await asyncio.gather(ctx.page.title(), ctx.page.evaluate(
        "n => (document.body ? document.body.innerText : '').replace(/\\s+/g, ' ').trim().slice(0, n)",
        SNIPPET,
    ), _ready_for_elements(ctx))
    data = {"url": ctx.page.url, "title": title, "status": status, "snippet": snippet}
    text = f"Navigated to {ctx.page.url}\nTitle: {title}\nStatus: {status}\n\n{snippet}"
    return Outcome(text=text, data=data)
