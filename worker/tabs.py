"""What browserq watches in each tab: navigations (for ref staleness and settling), console
messages and requests since the page loaded, dialogs, file choosers, renderer crashes."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any

from playwright.async_api import ConsoleMessage, Dialog, FileChooser, Page, Request, Response

from .policy import BLOCKED

__all__ = ["PageState", "LEVELS", "level_of"]

log = logging.getLogger(__name__)

LEVELS = ("error", "warning", "info", "debug")
_CONSOLE_LEVEL = {"error": "error", "assert": "error", "warning": "warning", "info": "info", "log": "info"}
MAX_ENTRIES = 1000


def level_of(console_type: str) -> str:
    return _CONSOLE_LEVEL.get(console_type, "debug")


@dataclass
class PageState:
    page: Page
    navigations: int = 0
    snapshot: int = 0
    snapshot_navigations: int = -1
    crashed: bool = False
    closed: bool = False
    console: list[dict[str, str]] = field(default_factory=list)
    reported_errors: int = 0
    requests: list[dict[str, Any]] = field(default_factory=list)
    dialog: Dialog | None = None
    dialog_answer: tuple[bool, str | None] | None = None
    dialog_opened: asyncio.Event = field(default_factory=asyncio.Event)
    file_chooser: FileChooser | None = None
    refused: list[str] = field(default_factory=list)
    _by_request: dict[int, dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        page = self.page
        page.on("request", self._on_request)
        page.on("response", self._on_response)
        page.on("requestfailed", self._on_request_failed)
        page.on("console", self._on_console)
        page.on("pageerror", lambda error: self._log("error", f"Uncaught {error}"))
        page.on("dialog", self._on_dialog)
        page.on("filechooser", self._on_file_chooser)
        page.on("crash", lambda _: setattr(self, "crashed", True))
        page.on("close", lambda _: setattr(self, "closed", True))

    def _on_request(self, request: Request) -> None:
        if request.is_navigation_request() and request.frame == self.page.main_frame:
            self.navigations += 1
            self.console, self.requests, self._by_request, self.reported_errors = [], [], {}, 0
        entry = {"method": request.method, "url": request.url, "resourceType": request.resource_type,
                 "status": None}
        if len(self.requests) < MAX_ENTRIES:
            self.requests.append(entry)
            self._by_request[id(request)] = entry

    def _on_response(self, response: Response) -> None:
        entry = self._by_request.get(id(response.request))
        if entry is not None:
            entry["status"] = response.status

    def _on_request_failed(self, request: Request) -> None:
        if request.failure == BLOCKED and request.is_navigation_request() and len(self.refused) < MAX_ENTRIES:
            self.refused.append(request.url)

    def take_refused(self) -> list[str]:
        """Document URLs the URL policy refused since the last call (redirects, popups, scripts)."""
        refused, self.refused = self.refused, []
        return refused

    def _on_console(self, message: ConsoleMessage) -> None:
        self._log(level_of(message.type), message.text)

    def _log(self, level: str, text: str) -> None:
        if len(self.console) < MAX_ENTRIES:
            self.console.append({"level": level, "text": text[:2000]})

    def _on_dialog(self, dialog: Dialog) -> None:
        if self.dialog_answer is not None:
            accept, text = self.dialog_answer
            self.dialog_answer = None
            asyncio.ensure_future(answer(dialog, accept, text))
            return
        self.dialog = dialog
        self.dialog_opened.set()

    def _on_file_chooser(self, chooser: FileChooser) -> None:
        self.file_chooser = chooser

    def new_errors(self) -> list[str]:
        """Console errors not yet reported in a result."""
        errors = [m["text"] for m in self.console[self.reported_errors:] if m["level"] == "error"]
        self.reported_errors = len(self.console)
        return errors

    async def settle_dialog(self) -> str | None:
        """Dismiss a dialog nobody handled, so it cannot block this tool; say what it was."""
        dialog, self.dialog = self.dialog, None
        self.dialog_opened.clear()
        if dialog is None:
            return None
        await answer(dialog, dialog.type == "alert", None)
        return f"A {dialog.type} dialog ({dialog.message!r}) was open and has been dismissed."


async def answer(dialog: Dialog, accept: bool, text: str | None) -> None:
    try:
        if accept:
            await dialog.accept(text) if text is not None else await dialog.accept()
        else:
            await dialog.dismiss()
    except Exception as exc:  # noqa: BLE001 - the page may have gone meanwhile
        log.debug("dialog answer failed: %s", exc)
