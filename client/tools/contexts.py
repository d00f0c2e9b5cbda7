"""Named browser contexts within a session: separate cookies, storage, proxy and tabs."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .base import Tool

__all__ = ["Proxy", "ContextCreate", "ContextSwitch", "ContextList", "ContextClose", "ContextSaveStorage"]

CONTEXT_NAME = r"^[A-Za-z0-9._-]{1,64}$"


class Proxy(BaseModel):
    model_config = ConfigDict(extra="forbid")

    server: str = Field(..., pattern=r"^(https?|socks5)://[^\s/]+(:\d+)?/?$",
                        description="e.g. http://proxy.example.com:3128 or socks5://host:1080")
    username: str | None = Field(None, max_length=256)
    password: str | None = Field(None, max_length=256)
    bypass: str | None = Field(None, max_length=2000, description="Comma-separated hosts not to proxy.")


class ContextCreate(Tool):
    """Create an isolated browser context (own cookies, storage, tabs), optionally behind a proxy
    or starting from a saved storage state, and make it active."""

    name = "browser_context_create"

    name_: str = Field(..., alias="name", pattern=CONTEXT_NAME, description="Context name.")
    proxy: Proxy | None = None
    storageState: dict[str, Any] | str | None = Field(
        None, description="A storage state object, or a file name inside the worker's state directory.")


class ContextSwitch(Tool):
    """Make another context active; later tools act on its tabs."""

    name = "browser_context_switch"

    name_: str = Field(..., alias="name", pattern=CONTEXT_NAME)


class ContextList(Tool):
    """List the session's contexts: name, isActive, pageCount, currentUrl, proxy server."""

    name = "browser_context_list"
    changes_state = False


class ContextClose(Tool):
    """Close a context and its tabs (not the only one); closing the active one activates default."""

    name = "browser_context_close"

    name_: str = Field(..., alias="name", pattern=CONTEXT_NAME)


class ContextSaveStorage(Tool):
    """Return a context's storage state (cookies, local storage), optionally also saved to a file
    inside the worker's state directory, for browser_context_create's storageState later."""

    name = "browser_context_save_storage"
    changes_state = False

    name_: str | None = Field(None, alias="name", pattern=CONTEXT_NAME, description="Default: the active one.")
    path: str | None = Field(None, max_length=255, description="File name inside the state directory.")
