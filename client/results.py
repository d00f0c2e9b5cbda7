"""What a tool call returns, as plain JSON on the wire and as models in Python."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from .errors import ToolFailed

__all__ = ["ToolResult", "Image", "ErrorInfo", "Timings"]


class Image(BaseModel):
    mime: str = Field(..., description="e.g. image/png")
    data: str = Field(..., description="base64")


class ErrorInfo(BaseModel):
    type: str
    message: str
    field: str | None = None


class Timings(BaseModel):
    """Milliseconds. `queued`: publish to start of execution; `total`: as the client saw it."""

    queued: float = 0.0
    executed: float = 0.0
    total: float = 0.0


class ToolResult(BaseModel):
    ok: bool
    tool: str
    session: str
    worker: str | None = None
    data: Any = None
    text: str = ""
    images: list[Image] = Field(default_factory=list)
    error: ErrorInfo | None = None
    retried: bool = False
    recovered: Literal["browser_crash", "worker_lost"] | None = None
    notice: str | None = Field(None, description="Something the caller should know, e.g. a fresh session")
    timings: Timings = Field(default_factory=Timings)

    def raise_for_error(self) -> ToolResult:
        """Raise ToolFailed when the tool failed, else return self (for chaining)."""
        if not self.ok:
            err = self.error or ErrorInfo(type="tool_error", message="failed")
            raise ToolFailed(
                err.message, error_type=err.type, session=self.session, tool=self.tool
            )
        return self

    @classmethod
    def failure(
        cls, tool: str, session: str, error_type: str, message: str, field: str | None = None,
        **kw: Any,
    ) -> ToolResult:
        return cls(
            ok=False, tool=tool, session=session, text=f"Error: {message}",
            error=ErrorInfo(type=error_type, message=message, field=field), **kw,
        )
