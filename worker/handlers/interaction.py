from __future__ import annotations

import base64
import mimetypes
from pathlib import Path
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Locator

from client.tools.interaction import (
    Click, Drag, FileUpload, FillForm, FormField, Hover, PressKey, SelectOption, Type,
)

from ..errors import BadInput
from ..paths import confined
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


def _name(model: Click | Type | Hover | SelectOption) -> str:
    return model.element or model.ref or model.selector or "the element"


@handler(Hover)
async def hover(ctx: ToolContext, model: Hover) -> Outcome:
    await ctx.locate(model).hover(timeout=ctx.timeout_ms(model))
    return Outcome(text=f"Hovered over {_name(model)}\n{await ctx.page_line()}", data={"url": ctx.page.url})


@handler(Drag)
async def drag(ctx: ToolContext, model: Drag) -> Outcome:
    source = ctx.target(model.startRef, model.startSelector)
    target = ctx.target(model.endRef, model.endSelector)
    await ctx.settled(source.drag_to(target, timeout=ctx.timeout_ms(model)), model)
    start = model.startElement or model.startRef or model.startSelector
    end = model.endElement or model.endRef or model.endSelector
    return Outcome(text=f"Dragged {start} to {end}\n{await ctx.page_line()}", data={"url": ctx.page.url})


@handler(SelectOption)
async def select_option(ctx: ToolContext, model: SelectOption) -> Outcome:
    target = ctx.locate(model)
    try:
        chosen = await target.select_option(model.values, timeout=ctx.timeout_ms(model))
    except PlaywrightError:
        chosen = await target.select_option(label=model.values, timeout=ctx.timeout_ms(model))
    return Outcome(text=f"Selected {chosen} in {_name(model)}", data={"selected": chosen})


@handler(FillForm)
async def fill_form(ctx: ToolContext, model: FillForm) -> Outcome:
    timeout = ctx.timeout_ms(model)
    for f in model.fields:
        await _fill(ctx.target(f.ref, f.selector), f, timeout)
    names = ", ".join(f.name for f in model.fields)
    return Outcome(text=f"Filled {len(model.fields)} field(s): {names}\n{await ctx.page_line()}",
                   data={"filled": [f.name for f in model.fields]})


async def _fill(target: Locator, f: FormField, timeout: float) -> None:
    if f.type == "textbox":
        await target.fill(f.value, timeout=timeout)
    elif f.type == "checkbox":
        await target.set_checked(f.value.strip().lower() in ("true", "1", "yes", "on"), timeout=timeout)
    elif f.type == "radio":
        await target.check(timeout=timeout)
    elif f.type == "combobox":
        try:
            await target.select_option(f.value, timeout=timeout)
        except PlaywrightError:
            await target.select_option(label=f.value, timeout=timeout)
    else:  # slider
        await target.evaluate(SET_VALUE, f.value, timeout=timeout)


SET_VALUE = """(el, v) => { el.value = v; el.dispatchEvent(new Event('input', {bubbles: true}));
el.dispatchEvent(new Event('change', {bubbles: true})); }"""


@handler(FileUpload)
async def file_upload(ctx: ToolContext, model: FileUpload) -> Outcome:
    payloads: list[Any] = [
        {"name": f.name, "mimeType": mimetypes.guess_type(f.name)[0] or "application/octet-stream",
         "buffer": base64.b64decode(f.content)} for f in model.files
    ]
    payloads += [str(_upload_path(ctx, p)) for p in model.paths]
    if model.ref or model.selector:
        await ctx.locate(model).set_input_files(payloads, timeout=ctx.timeout_ms(model))
    elif ctx.tab.file_chooser is not None:
        chooser, ctx.tab.file_chooser = ctx.tab.file_chooser, None
        await chooser.set_files(payloads, timeout=ctx.timeout_ms(model))
    else:
        raise BadInput("no file chooser is open: give the file input's ref or selector, or click "
                       "the upload button first", field="ref")
    names = [f.name for f in model.files] + [Path(p).name for p in model.paths]
    return Outcome(text=f"Uploaded {', '.join(names)}", data={"files": names})


def _upload_path(ctx: ToolContext, name: str) -> Path:
    path = confined(ctx.settings.upload_dir, name, "paths")
    if not path.is_file():
        raise BadInput(f"paths: {name!r} is not a file in the upload directory", field="paths")
    return path
