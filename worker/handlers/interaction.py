from __future__ import annotations

from client.tools import Click, PressKey, Type

from .context import Outcome, ToolContext, handler


@handler(Click)
async def click(ctx: ToolContext, model: Click) -> Outcome:
    target = ctx.locate(model)
    options = {"button": model.button, "modifiers": model.modifiers, "timeout": ctx.timeout_ms(model)}
    action = target.dblclick(**options) if model.doubleClick else target.click(**options)
    await ctx.settled(action, model)
    verb = "Double-clicked" if model.doubleClick else "Clicked"
    return Outcome(text=f"{verb} {_name(model)}\n{await ctx.page_line()}", data={"url": ctx.page.url})


@handler(Type)
async def type_text(ctx: ToolContext, model: Type) -> Outcome:
    target = ctx.locate(model)
    timeout = ctx.timeout_ms(model)
    if model.slowly:
        await target.fill("", timeout=timeout)
        await target.press_sequentially(model.text, timeout=timeout)
    else:
        await target.fill(model.text, timeout=timeout)
    if model.submit:
        await ctx.settled(target.press("Enter", timeout=timeout), model)
    submitted = " and pressed Enter" if model.submit else ""
    text = f"Typed {len(model.text)} characters into {_name(model)}{submitted}\n{await ctx.page_line()}"
    return Outcome(text=text, data={"url": ctx.page.url})


@handler(PressKey)
async def press_key(ctx: ToolContext, model: PressKey) -> Outcome:
    # A locator's press waits for the navigation it starts (a form submit); keyboard.press does not.
    focused = ctx.page.locator(":focus")
    if await focused.count():
        action = focused.first.press(model.key, timeout=ctx.timeout_ms(model))
    else:
        action = ctx.page.keyboard.press(model.key)
    await ctx.settled(action, model)
    return Outcome(text=f"Pressed {model.key}\n{await ctx.page_line()}", data={"url": ctx.page.url})


def _name(model: Click | Type) -> str:
    return model.element or model.ref or model.selector or "the element"
