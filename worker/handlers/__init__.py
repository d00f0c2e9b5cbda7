"""Tool handlers, one module per family mirroring `client.tools`; importing them registers them."""

from . import contexts, dialects, dialogs, inspection, interaction, navigation, pages, pdf, vision, waiting  # noqa: F401
from .context import HANDLERS, Outcome, ToolContext

__all__ = ["HANDLERS", "Outcome", "ToolContext"]
