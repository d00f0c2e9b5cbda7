from __future__ import annotations

from client.tools.vision import MouseClickXY, MouseDragXY, MouseMoveXY

from .context import Outcome, ToolContext, handler


@handler(MouseClickXY)
async def mouse_click_xy(ctx: ToolContext, model: MouseClickXY) -> Outcome:
    await ctx.settled(ctx.page.mouse.click(model.x, model.y), model)
    return Outcome(text=f"Clicked at ({model.x:g}, {model.y:g})\n{await ctx.page_line()}", data={"url": ctx.page.url})


@handler(MouseMoveXY)
async def mouse_move_xy(ctx: ToolContext, model: MouseMoveXY) -> Outcome:
    await ctx.page.mouse.move(model.x, model.y)
    return Outcome(text=f"Moved the mouse to ({model.x:g}, {model.y:g})", data={"url": ctx.page.url})


@handler(MouseDragXY)
async def mouse_drag_xy(ctx: ToolContext, model: MouseDragXY) -> Outcome:
    mouse = ctx.page.mouse
    await mouse.move(model.startX, model.startY)
    await mouse.down()
    await mouse.move(model.endX, model.endY, steps=5)
    await mouse.up()
    return Outcome(text=f"Dragged from ({model.startX:g}, {model.startY:g}) to ({model.endX:g}, {model.endY:g})",
                   data={"url": ctx.page.url})
