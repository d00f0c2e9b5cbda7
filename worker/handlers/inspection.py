from __future__ import annotations

import json

from client.tools import Evaluate, Snapshot, TakeScreenshot

from ..refs import tag_refs
from .context import Outcome, ToolContext, handler


@handler(Snapshot)
async def snapshot(ctx: ToolContext, model: Snapshot) -> Outcome:
    scope = ctx.locate(model) if (model.ref or model.selector) else ctx.page
    raw = await scope.aria_snapshot(mode="ai", depth=model.depth, timeout=ctx.timeout_ms(model))
    ctx.session.snapshots += 1
    number = ctx.session.snapshots
    ctx.tab.snapshot, ctx.tab.snapshot_navigations = number, ctx.tab.navigations
    tree = tag_refs(raw, number)
    title = await ctx.page.title()
    data = {"url": ctx.page.url, "title": title, "snapshot": tree, "number": number}
    return Outcome(text=f"Page URL: {ctx.page.url}\nPage Title: {title}\nSnapshot:\n{tree}", data=data)


@handler(TakeScreenshot)
async def take_screenshot(ctx: ToolContext, model: TakeScreenshot) -> Outcome:
    options = {"type": model.type, "timeout": ctx.timeout_ms(model)}
    if model.ref or model.selector:
        raw = await ctx.locate(model).screenshot(**options)
        what = f"element {model.element or model.ref or model.selector}"
    else:
        raw = await ctx.page.screenshot(full_page=model.fullPage, **options)
        what = "full page" if model.fullPage else "viewport"
    outcome = Outcome(text=f"Screenshot of the {what} of {ctx.page.url} ({len(raw)} bytes, {model.type})")
    outcome.data = {"url": ctx.page.url, "bytes": len(raw), "type": model.type}
    outcome.add_image(raw, f"image/{model.type}")
    return outcome


@handler(Evaluate)
async def evaluate(ctx: ToolContext, model: Evaluate) -> Outcome:
    if model.ref or model.selector:
        value = await ctx.locate(model).evaluate(model.function, timeout=ctx.timeout_ms(model))
    else:
        value = await ctx.page.evaluate(model.function)
    rendered = json.dumps(value, ensure_ascii=False, default=str)
    return Outcome(text=f"Result: {rendered}", data=value)
