from __future__ import annotations

from client.tools import Close

from .context import Outcome, ToolContext, handler


@handler(Close)
async def close(ctx: ToolContext, model: Close) -> Outcome:
    url = ctx.page.url
    await ctx.page.close()
    ctx.session.prune()
    left = len(ctx.session.tabs)
    return Outcome(text=f"Closed the tab at {url}; {left} tab(s) left", data={"closed": url, "tabs": left})
