"""The compact dialects, each action delegated to the full catalogue's handler."""

from __future__ import annotations

from client.tools.dialects import Browser, BrowserAction, BrowserScreenshot
from client.tools.inspection import Evaluate, TakeScreenshot
from client.tools.interaction import Click, Type
from client.tools.navigation import Navigate

from .context import Outcome, ToolContext, handler
from .inspection import evaluate, take_screenshot
from .interaction import click, type_text
from .navigation import navigate

ELEMENT_INFO = """el => ({tagName: el.tagName, id: el.id, className: typeof el.className === 'string' ?
  el.className : '', innerText: el.innerText, href: el.href ?? null, value: el.value ?? null})"""
READABLE = """el => (el.innerText || '').split('\\n').map(l => l.replace(/\\s+/g, ' ').trim())
  .filter(Boolean).join('\\n')"""


@handler(BrowserAction)
async def browser_action(ctx: ToolContext, model: BrowserAction) -> Outcome:
    common = {"timeout": model.timeout}
    if model.action == "click":
        return await click(ctx, Click(selector=model.selector, **common))
    if model.action == "type":
        return await type_text(ctx, Type(selector=model.selector, text=model.text or "", **common))
    if model.action == "eval":
        return await evaluate(ctx, Evaluate(function=model.text or "", **common))
    target = ctx.page.locator(model.selector or "").first
    if model.action == "wait":
        seconds = model.timeout or 10.0
        await target.wait_for(state="visible", timeout=seconds * 1000)
        return Outcome(text=f"Element {model.selector} is visible", data={"selector": model.selector})
    if model.action == "get_text":
        text = await target.text_content(timeout=ctx.timeout_ms(model)) or ""
        return Outcome(text=text, data={"text": text})
    info = await target.evaluate(ELEMENT_INFO, timeout=ctx.timeout_ms(model))
    return Outcome(text=", ".join(f"{k}={v!r}" for k, v in info.items()), data=info)


@handler(BrowserScreenshot)
async def browser_screenshot(ctx: ToolContext, model: BrowserScreenshot) -> Outcome:
    return await take_screenshot(ctx, TakeScreenshot(fullPage=model.fullPage, timeout=model.timeout))


@handler(Browser)
async def browser(ctx: ToolContext, model: Browser) -> Outcome:
    common = {"timeout": model.timeout}
    if model.action == "navigate":
        return await navigate(ctx, Navigate(url=model.url or "", **common))
    if model.action == "click":
        return await click(ctx, Click(selector=model.selector, **common))
    if model.action == "type":
        return await type_text(ctx, Type(selector=model.selector, text=model.text or "", **common))
    if model.action == "screenshot":
        return await take_screenshot(ctx, TakeScreenshot(**common))
    if model.action == "evaluate":
        return await evaluate(ctx, Evaluate(function=model.script or "", **common))
    scope = ctx.page.locator(model.selector).first if model.selector else ctx.page.locator("body")
    text = await scope.evaluate(READABLE, timeout=ctx.timeout_ms(model))
    return Outcome(text=text, data={"url": ctx.page.url, "text": text})
