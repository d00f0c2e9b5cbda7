from __future__ import annotations

from client.tools import Navigate, NavigateBack

from .context import Outcome, ToolContext, handler

SNIPPET = 500


@handler(Navigate)
async def navigate(ctx: ToolContext, model: Navigate) -> Outcome:
    response = await ctx.page.goto(model.url, timeout=ctx.timeout_ms(model), wait_until="load")
    ctx.tab.navigations += 1
    return await _arrived(ctx, response.status if response else None)


@handler(NavigateBack)
async def navigate_back(ctx: ToolContext, model: NavigateBack) -> Outcome:
    response = await ctx.page.go_back(timeout=ctx.timeout_ms(model), wait_until="load")
    ctx.tab.navigations += 1
    if response is None and ctx.page.url in ("", "about:blank"):
        return Outcome(text="No previous page in this tab's history.", data={"url": ctx.page.url})
    return await _arrived(ctx, response.status if response else None)


async def _arrived(ctx: ToolContext, status: int | None) -> Outcome:
    title = await ctx.page.title()
    snippet = await ctx.page.evaluate(
        "n => (document.body ? document.body.innerText : '').replace(/\\s+/g, ' ').trim().slice(0, n)",
        SNIPPET,
    )
    data = {"url": ctx.page.url, "title": title, "status": status, "snippet": snippet}
    text = f"Navigated to {ctx.page.url}\nTitle: {title}\nStatus: {status}\n\n{snippet}"
    return Outcome(text=text, data=data)
