from __future__ import annotations

import asyncio
import json
import re

from client.tools.inspection import (
    ConsoleMessages, Evaluate, Find, NetworkRequests, Snapshot, TakeScreenshot,
)

from ..errors import LimitExceeded
from ..refs import tag_refs
from ..tabs import LEVELS
from .context import Outcome, ToolContext, handler


@handler(Snapshot)
async def snapshot(ctx: ToolContext, model: Snapshot) -> Outcome:
    scope = ctx.locate(model) if (model.ref or model.selector) else ctx.page
    raw, title = await asyncio.gather(
        scope.aria_snapshot(mode="ai", depth=model.depth, timeout=ctx.timeout_ms(model)), ctx.page.title())
    ctx.session.snapshots += 1
    number = ctx.session.snapshots
    ctx.tab.snapshot, ctx.tab.snapshot_navigations = number, ctx.tab.navigations
    tree = tag_refs(raw, number)
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
    if len(rendered.encode()) > ctx.settings.max_eval_bytes:
        raise LimitExceeded(f"the function returned {len(rendered.encode())} bytes of JSON, over the "
                            f"{ctx.settings.max_eval_bytes} byte limit; return less (e.g. slice or summarise)")
    return Outcome(text=f"Result: {rendered}", data=value)


@handler(ConsoleMessages)
async def console_messages(ctx: ToolContext, model: ConsoleMessages) -> Outcome:
    allowed = LEVELS[: LEVELS.index(model.level) + 1]
    messages = [m for m in ctx.tab.console if m["level"] in allowed]
    lines = [f"[{m['level']}] {m['text']}" for m in messages]
    return Outcome(text="\n".join(lines) or f"No console messages at level {model.level} or above.",
                   data=messages)


@handler(NetworkRequests)
async def network_requests(ctx: ToolContext, model: NetworkRequests) -> Outcome:
    reqs = list(ctx.tab.requests)
    lines = [f"[{r['method']}] {r['url']} => {r['status'] or 'pending'} ({r['resourceType']})" for r in reqs]
    return Outcome(text="\n".join(lines) or "No requests since the page loaded.", data=reqs)


@handler(Find)
async def find(ctx: ToolContext, model: Find) -> Outcome:
    """Matches come from a fresh snapshot, so their refs are usable right away."""
    tree = (await snapshot(ctx, Snapshot())).data["snapshot"]
    pattern = re.compile(model.text if model.regex else re.escape(model.text), re.IGNORECASE)
    hits = [line.strip() for line in tree.splitlines() if "[ref=" in line and pattern.search(line)]
    hits = hits[: model.limit]
    text = "\n".join(hits) if hits else f"No element matches {model.text!r}."
    return Outcome(text=text, data={"matches": hits, "snapshot": ctx.tab.snapshot})
