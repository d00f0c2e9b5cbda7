from __future__ import annotations

import base64
import time

from client.tools.pdf import PdfSave

from ..paths import confined
from .context import Outcome, ToolContext, handler


@handler(PdfSave)
async def pdf_save(ctx: ToolContext, model: PdfSave) -> Outcome:
    name = model.filename or f"{ctx.session.id}-{int(time.time() * 1000)}.pdf"
    path = confined(ctx.settings.artifact_dir, name, "filename")
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = await ctx.page.pdf(path=str(path))
    return Outcome(text=f"Saved the page as PDF artifact {name} ({len(raw)} bytes)",
                   data={"artifact": name, "bytes": len(raw), "pdf": base64.b64encode(raw).decode()})
