from __future__ import annotations

import asyncio

from client.tools import WaitFor

from .context import Outcome, ToolContext, handler


@handler(WaitFor)
async def wait_for(ctx: ToolContext, model: WaitFor) -> Outcome:
    timeout = ctx.timeout_ms(model, ctx.settings.wait_timeout)
    done = []
    if model.time is not None:
        await asyncio.sleep(model.time)
        done.append(f"waited {model.time:g}s")
    if model.textGone is not None:
        await ctx.page.get_by_text(model.textGone).first.wait_for(state="hidden", timeout=timeout)
        done.append(f"text {model.textGone!r} is gone")
    if model.text is not None:
        await ctx.page.get_by_text(model.text).first.wait_for(state="visible", timeout=timeout)
        done.append(f"text {model.text!r} appeared")
    return Outcome(text="Done: " + ", ".join(done), data={"url": ctx.page.url})
