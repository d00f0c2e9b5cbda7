from __future__ import annotations

from client.tools.dialogs import HandleDialog

from ..tabs import answer
from .context import Outcome, ToolContext, handler


@handler(HandleDialog)
async def handle_dialog(ctx: ToolContext, model: HandleDialog) -> Outcome:
    dialog, ctx.tab.dialog = ctx.tab.dialog, None
    ctx.tab.dialog_opened.clear()
    verb = "Accepted" if model.accept else "Dismissed"
    if dialog is None:
        ctx.tab.dialog_answer = (model.accept, model.promptText)
        return Outcome(text=f"No dialog is open; the next one will be {verb.lower()}.",
                       data={"armed": True})
    await answer(dialog, model.accept, model.promptText)
    await ctx.page.wait_for_load_state("load", timeout=ctx.timeout_ms(model))
    return Outcome(text=f"{verb} the {dialog.type} dialog {dialog.message!r}\n{await ctx.page_line()}",
                   data={"type": dialog.type, "message": dialog.message, "accepted": model.accept})
