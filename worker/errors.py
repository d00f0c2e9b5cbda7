"""Errors raised inside the worker; the task boundary turns them into ToolResult errors."""

from __future__ import annotations

__all__ = ["HandlerError", "StaleRef", "BadInput", "LimitExceeded", "BrowserCrashed", "StaleTask", "Retried"]


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


class LimitExceeded(HandlerError):
    """A configured limit (tabs, contexts, result size) would be exceeded."""

    type = "limit_exceeded"


class BrowserCrashed(HandlerError):
    """Chromium or the tab's renderer died under the task: recover and retry once."""

    type = "browser_crashed"


class StaleTask(HandlerError):
    """A copy of a task for a session this worker does not own (it moved): never run."""

    type = "stale_task"


class Retried(Exception):
    """The retry after a recovery failed too: carries the final error and what was recovered."""

    def __init__(self, error: BaseException, recovered: str) -> None:
        super().__init__(str(error))
        self.error = error
        self.recovered = recovered
