from __future__ import annotations

from client.tools.navigation import Navigate
from client.tools.pages import Close, Install, Resize, Tabs

from ..errors import BadInput, LimitExceeded
from ..policy import check_url
from .context import Outcome, ToolContext, handler
from .navigation import go


@handler(Close)
async def close(ctx: ToolContext, model: Close) -> Outcome:
    url = ctx.page.url
    await ctx.page.close()
    ctx.session.prune()
    left = len(ctx.session.tabs)
    return Outcome(text=f"Closed the tab at {url}; {left} tab(s) left", data={"closed": url, "tabs": left})


@handler(Resize)
async def resize(ctx: ToolContext, model: Resize) -> Outcome:
    size = {"width": model.width, "height": model.height}
    for tab in ctx.session.tabs:
        await tab.page.set_viewport_size(size)
    ctx.session.ctx.viewport = size
    return Outcome(text=f"Resized the viewport to {model.width}x{model.height}", data=size)


@handler(Tabs)
async def tabs(ctx: ToolContext, model: Tabs) -> Outcome:
    session = ctx.session
    if model.action == "new":
        if len(session.tabs) >= ctx.settings.max_tabs:
            raise LimitExceeded(f"this context already has {len(session.tabs)} tabs, the limit "
                                f"({ctx.settings.max_tabs}); close one first", field="action")
        if model.url:
            check_url(model.url, ctx.settings)  # before a tab is opened for it
        tab = session.add_tab(await ctx.session.context.new_page())  # type: ignore[union-attr]
        session.active = len(session.tabs) - 1
        if model.url and tab is not None:
            await go(ctx, tab, Navigate(url=model.url).url, ctx.timeout_ms(model))
    elif model.action in ("close", "select"):
        index = session.active if model.index is None else model.index
        if index >= len(session.tabs):
            raise BadInput(f"index: there is no tab {index}; there are {len(session.tabs)}", field="index")
        if model.action == "close":
            await session.tabs[index].page.close()
            session.prune()
        else:
            session.active = index
            await session.tabs[index].page.bring_to_front()
    listing = [{"index": i, "title": await t.page.title(), "url": t.page.url, "active": i == session.active}
               for i, t in enumerate(session.tabs)]
    lines = [f"{'*' if t['active'] else ' '} {t['index']}: {t['title']!r} {t['url']}" for t in listing]
    return Outcome(text="Tabs:\n" + "\n".join(lines), data=listing)


@handler(Install)
async def install(ctx: ToolContext, model: Install) -> Outcome:
    browser = await ctx.host.browser()
    data = {"ready": browser.is_connected(), "binary": ctx.host.binary or "bundled",
            "version": browser.version, "downloaded": False}
    return Outcome(text=f"Browser ready: Chromium {browser.version} at {data['binary']} "
                        "(nothing downloaded)", data=data)
