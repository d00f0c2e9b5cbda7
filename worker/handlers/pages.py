from __future__ import annotations

from client.tools import Close

from .context import Outcome, ToolContext, handler


@handler(Close)
async def close(ctx: ToolContext, model: Close) -> Outcome:
    url = ctx.page.url
    ctx.session.tabs.remove(ctx.tab)
    ctx.session.active = max(0, min(ctx.session.active, len(ctx.session.tabs) - 1))
    await ctx.page.close()
    left = len(ctx.session.tabs)
    return Outcome(text=f"Closed the tab at {url}; {left} tab(s) left", data={"closed": url, "tabs": left})
