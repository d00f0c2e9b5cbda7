"""The URL policy: which URLs a session's pages may load as documents.

It is checked twice: before a tool navigates (`check_url`, a clear error naming the field), and
inside Chromium for every document request, so redirect hops, script navigations, iframes and
popups obey it too (`guard_navigations`). Subresources (images, fetch) are not filtered.

Schemes outside `allowed_schemes` (default http, https, about, data) and the cloud metadata address
are refused unless configured; `deny_hosts` always refuses, and a non-empty `allow_hosts` admits only
its hosts. Host patterns: `example.com` (exactly), `*.example.com` or `.example.com` (subdomains).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any
from urllib.parse import urlsplit

from playwright.async_api import Browser, CDPSession
from playwright.async_api import Error as PlaywrightError

from client.settings import Settings

from .errors import HandlerError

__all__ = ["UrlRefused", "check_url", "guard_navigations", "METADATA_HOSTS", "BLOCKED"]

log = logging.getLogger(__name__)

METADATA_HOSTS = ("169.254.169.254", "metadata.google.internal", "[fd00:ec2::254]")
WEB = ("http", "https", "ws", "wss")
BLOCKED = "net::ERR_BLOCKED_BY_CLIENT"
DOCUMENTS = {"patterns": [{"urlPattern": "*", "resourceType": "Document", "requestStage": "Request"}]}


class UrlRefused(HandlerError):
    type = "url_refused"


def check_url(url: str, settings: Settings, field: str = "url") -> None:
    reason = _refusal(url, settings)
    if reason:
        raise UrlRefused(f"{field}: {url!r} is refused by the URL policy: {reason}", field=field)


async def guard_navigations(browser: Browser, settings: Settings) -> None:
    """Hold every document request at the browser until the policy admits it.

    Playwright's routes never see redirect hops (by design, microsoft/playwright#3993); the Fetch
    domain of the browser target pauses each hop, and filtering to documents keeps the cost of a
    navigation unchanged (measured). A refused request fails with `net::ERR_BLOCKED_BY_CLIENT`.
    """
    cdp = await browser.new_browser_cdp_session()
    pending: set[asyncio.Task[None]] = set()

    def paused(event: dict[str, Any]) -> None:
        task = asyncio.ensure_future(_decide(cdp, event, settings))
        pending.add(task)
        task.add_done_callback(pending.discard)

    cdp.on("Fetch.requestPaused", paused)
    await cdp.send("Fetch.enable", DOCUMENTS)


async def _decide(cdp: CDPSession, event: dict[str, Any], settings: Settings) -> None:
    request_id = event["requestId"]
    reason = _refusal(event["request"]["url"], settings)
    try:
        if reason is None:
            await cdp.send("Fetch.continueRequest", {"requestId": request_id})
            return
        log.warning("refused a document request by the URL policy: %s", reason)
        await cdp.send("Fetch.failRequest", {"requestId": request_id, "errorReason": "BlockedByClient"})
    except PlaywrightError as exc:  # the page or the browser went away meanwhile
        log.debug("URL policy decision not delivered: %s", exc)


def _refusal(url: str, settings: Settings) -> str | None:
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    if scheme not in {s.lower() for s in settings.allowed_schemes}:
        allowed = ", ".join(settings.allowed_schemes)
        return f"scheme {scheme}: is not allowed (allowed: {allowed}; BROWSERQ_ALLOWED_SCHEMES changes it)"
    if scheme not in WEB:
        return None
    host = (parts.hostname or "").lower()
    if _matches(host, settings.deny_hosts):
        return f"host {host} is on the deny list"
    if host in METADATA_HOSTS and not _matches(host, settings.allow_hosts):
        return f"{host} is the cloud metadata address (add it to BROWSERQ_ALLOW_HOSTS to allow it)"
    if settings.allow_hosts and not _matches(host, settings.allow_hosts):
        return f"host {host} is not on the allow list"
    return None


def _matches(host: str, patterns: list[str]) -> bool:
    for pattern in (p.lower().strip() for p in patterns):
        if host == pattern or (pattern.startswith(("*.", ".")) and host.endswith(pattern.lstrip("*"))):
            return True
    return False
