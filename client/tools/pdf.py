from __future__ import annotations

from pydantic import Field

from .base import Tool

__all__ = ["PdfSave"]


class PdfSave(Tool):
    """Save the page as a PDF (capability: pdf). Returns it base64-encoded with its artifact name."""

    name = "browser_pdf_save"
    capability = "pdf"
    changes_state = False

    filename: str | None = Field(None, max_length=200, pattern=r"^[A-Za-z0-9._-]+\.pdf$",
                                 description="Artifact file name, e.g. page.pdf (default: generated).")
