"""The exceptions browserq raises to callers.

    BrowserQError                 every browserq error; carries `session` and `tool` when known
    ├── InvalidInput              the call was refused before anything ran (`field`, `problem`)
    │   ├── UnknownTool           no such tool (or hidden by capabilities)
    │   └── InvalidSessionId      the session id breaks `[A-Za-z0-9._:-]{1,128}`
    ├── ToolFailed                the tool ran and failed (`ToolResult.raise_for_error()`)
    └── InfrastructureError       the fleet could not run the call; retrying later may help
        ├── NoWorkers             no live worker is heartbeating
        ├── NoCapacity            every live worker is full, even after `capacity_wait`
        ├── BrokerUnavailable     Redis could not be reached
        └── TaskTimeout           no result arrived in time

Tool-level failures (a missing element, a navigation error) are not raised by `call`: they come
back as `ToolResult(ok=False)` so an agent loop can hand the message to its model.
"""

from __future__ import annotations

__all__ = [
    "BrowserQError",
    "InvalidInput",
    "UnknownTool",
    "InvalidSessionId",
    "ToolFailed",
    "InfrastructureError",
    "NoWorkers",
    "NoCapacity",
    "BrokerUnavailable",
    "TaskTimeout",
]


class BrowserQError(Exception):
    """Root of the tree; `session` and `tool` say which call failed."""

    def __init__(self, message: str, *, session: str | None = None, tool: str | None = None):
        super().__init__(message)
        self.message = message
        self.session = session
        self.tool = tool


class InvalidInput(BrowserQError):
    """Bad arguments: `field` names the offending parameter (dotted for nested ones)."""

    def __init__(self, message: str, *, field: str = "", problem: str = "", **kw: str | None):
        super().__init__(message, **kw)
        self.field = field
        self.problem = problem or message


class UnknownTool(InvalidInput):
    pass


class InvalidSessionId(InvalidInput):
    pass


class ToolFailed(BrowserQError):
    """A tool ran and reported failure; `error_type` is the result's `error.type`."""

    def __init__(self, message: str, *, error_type: str = "tool_error", **kw: str | None):
        super().__init__(message, **kw)
        self.error_type = error_type


class InfrastructureError(BrowserQError):
    pass


class NoWorkers(InfrastructureError):
    pass


class NoCapacity(InfrastructureError):
    pass


class BrokerUnavailable(InfrastructureError):
    pass


class TaskTimeout(InfrastructureError):
    pass
