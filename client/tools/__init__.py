"""Tool models, one file per family, and the catalogue that names them."""

from .base import OptionalTarget, Target, Tool
from .catalogue import TOOLS, tools_for, validate_call
from .inspection import Evaluate, Snapshot, TakeScreenshot
from .interaction import Click, PressKey, Type
from .navigation import Navigate, NavigateBack
from .pages import Close
from .waiting import WaitFor

__all__ = [
    "Tool", "Target", "OptionalTarget", "TOOLS", "tools_for", "validate_call",
    "Navigate", "NavigateBack", "Snapshot", "TakeScreenshot", "Evaluate",
    "Click", "Type", "PressKey", "WaitFor", "Close",
]
