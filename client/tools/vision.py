"""Coordinate-based mouse tools, for models that work from screenshots (capability: vision)."""

from __future__ import annotations

from pydantic import Field

from .base import Tool

__all__ = ["MouseClickXY", "MouseMoveXY", "MouseDragXY"]

_X = "X coordinate in CSS pixels of the viewport."
_Y = "Y coordinate in CSS pixels of the viewport."


class MouseClickXY(Tool):
    """Click at a point of the viewport."""

    name = "browser_mouse_click_xy"
    capability = "vision"

    x: float = Field(..., ge=0, le=10_000, description=_X)
    y: float = Field(..., ge=0, le=10_000, description=_Y)


class MouseMoveXY(Tool):
    """Move the mouse to a point of the viewport."""

    name = "browser_mouse_move_xy"
    capability = "vision"

    x: float = Field(..., ge=0, le=10_000, description=_X)
    y: float = Field(..., ge=0, le=10_000, description=_Y)


class MouseDragXY(Tool):
    """Press the mouse at one point, move to another and release."""

    name = "browser_mouse_drag_xy"
    capability = "vision"

    startX: float = Field(..., ge=0, le=10_000)
    startY: float = Field(..., ge=0, le=10_000)
    endX: float = Field(..., ge=0, le=10_000)
    endY: float = Field(..., ge=0, le=10_000)
