"""Errors raised inside the worker; the task boundary turns them into ToolResult errors."""

from __future__ import annotations

__all__ = ["HandlerError", "StaleRef", "BadInput"]


class HandlerError(Exception):
    """A tool failed in a way the model can act on; `type` goes into `ToolResult.error.type`."""

    type = "tool_error"

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class StaleRef(HandlerError):
    type = "stale_ref"


class BadInput(HandlerError):
    type = "invalid_input"
