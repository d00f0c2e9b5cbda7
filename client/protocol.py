"""The wire contract between client and worker: task names, queues and the task payload.

Both sides validate the payload with the same model; the worker never trusts the queue.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .errors import InvalidSessionId

__all__ = [
    "SESSION_ID",
    "GENERIC_TASK",
    "TaskPayload",
    "check_session_id",
    "queue_name",
    "task_name",
]

SESSION_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
GENERIC_TASK = "browserq.call"


def task_name(tool: str) -> str:
    """Per-tool task names make Flower and logs show which tool ran."""
    return f"browserq.{tool}"


def queue_name(worker: str) -> str:
    return f"browserq.worker.{worker}"


def check_session_id(session: Any) -> str:
    if not isinstance(session, str) or not SESSION_ID.fullmatch(session):
        raise InvalidSessionId(
            f"session: {session!r} is not a valid session id "
            "(1-128 characters of letters, digits, '.', '_', ':', '-')",
            field="session", problem="invalid session id",
        )
    return session


class TaskPayload(BaseModel):
    """Keyword arguments of every browserq task."""

    model_config = ConfigDict(extra="forbid")

    tool: str = Field(..., max_length=128)
    session: str = Field(..., pattern=f"^{SESSION_ID.pattern}$")
    args: dict[str, Any] = Field(default_factory=dict)
    seq: int = Field(0, ge=0, description="Position in the session's order; 0 = unordered")
    base: int = Field(0, ge=0, description="First seq the owning worker will see")
    sent_at: float = Field(0.0, ge=0, description="Client clock at publish, epoch seconds")
    attempt: int = Field(1, ge=1, le=2, description="2 when resent after the worker was lost")
