"""The URL policy: which URLs a session may be navigated to by a tool.

Schemes outside `allowed_schemes` (default http, https, about, data) and the cloud metadata address
are refused unless configured; `deny_hosts` always refuses, and a non-empty `allow_hosts` admits only
its hosts. Host patterns: `example.com` (exactly), `*.example.com` or `.example.com` (subdomains).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from client.settings import Settings

from .errors import HandlerError

__all__ = ["UrlRefused", "check_url", "METADATA_HOSTS"]

METADATA_HOSTS = ("169.254.169.254", "metadata.google.internal", "[fd00:ec2::254]")
WEB = ("http", "https", "ws", "wss")


class UrlRefused(HandlerError):
    type = "url_refused"


def check_url(url: str, settings: Settings, field: str = "url") -> None:
    reason = _refusal(url, settings)
    if reason:
        raise UrlRefused(f"{field}: {url!r} is refused by the URL policy: {reason}", field=field)


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
