"""browserq's caller side: the tool contract and the clients. Imports without Playwright."""

from ._async import AsyncBrowserClient, AsyncPendingCall
from ._sync import BrowserClient, PendingCall
from .errors import (
    BrokerUnavailable, BrowserQError, InfrastructureError, InvalidInput, InvalidSessionId,
    NoCapacity, NoWorkers, TaskTimeout, ToolFailed, UnknownTool,
)
from .handles import AsyncSession, Session
from .results import ErrorInfo, Image, Timings, ToolResult
from .routing import SessionInfo, WorkerInfo
from .settings import Settings

__all__ = [
    "BrowserClient", "AsyncBrowserClient", "PendingCall", "AsyncPendingCall",
    "Session", "AsyncSession", "ToolResult", "Image", "ErrorInfo", "Timings",
    "SessionInfo", "WorkerInfo", "Settings",
    "BrowserQError", "InvalidInput", "UnknownTool", "InvalidSessionId", "ToolFailed",
    "InfrastructureError", "NoWorkers", "NoCapacity", "BrokerUnavailable", "TaskTimeout",
]
