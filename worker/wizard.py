"""`browserq init`: the onboarding wizard (seed 000's form) that writes `browserq.toml`.

The questions come in the seed's order: Redis URL, "Browser Enabled" (before "Browser Headless"),
"Browser Headless", "Browser Session Timeout" (after it; Go-style durations, re-asked until valid),
then the browser binary with the auto-detected one offered. Prompting and re-asking are rich's
(`rich.prompt`); each answer is checked with the same parsing `Settings` applies when it reads the
file, and the finished file is loaded back through `Settings` before it replaces anything, so a
file the wizard writes is one every component accepts.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

import tomli_w
from pydantic import ValidationError
from rich.console import Console
from rich.prompt import Confirm, InvalidResponse, PromptBase

from client.settings import Settings, parse_duration

from .binary import detect_browser

__all__ = ["run_wizard", "format_duration", "QUESTIONS"]

# The prompt labels, in the order they are asked (tests drive the wizard by these).
QUESTIONS = ("Redis URL", "Browser Enabled", "Browser Headless", "Browser Session Timeout", "Browser binary")
REDIS_SCHEMES = ("redis", "rediss", "unix")
AUTO = "auto"


class RedisUrlPrompt(PromptBase[str]):
    """A Redis URL: checked for a scheme Celery and redis-py understand, so a typo is re-asked."""

    validate_error_message = "[prompt.invalid]Please enter a Redis URL"

    def process_response(self, value: str) -> str:
        url = value.strip()
        if urlparse(url).scheme not in REDIS_SCHEMES:
            raise InvalidResponse(
                "[prompt.invalid]Not a Redis URL: use redis://host:6379/0, rediss:// (TLS), "
                "unix:///path/redis.sock"
            )
        return url


class DurationPrompt(PromptBase[str]):
    """A Go-style duration ("90s", "5m", "1h30m"); kept as typed, since the file is for people."""

    def process_response(self, value: str) -> str:
        text = value.strip()
        try:
            seconds = parse_duration(text)
        except ValueError as exc:
            raise InvalidResponse(f"[prompt.invalid]{exc}") from None
        if seconds <= 0:
            raise InvalidResponse("[prompt.invalid]The session timeout must be longer than 0s")
        return text


class BinaryPrompt(PromptBase[str]):
    """A Chromium executable (a path or a name on PATH), or `auto` to detect it at run time."""

    def process_response(self, value: str) -> str:
        text = value.strip()
        if text.lower() in (AUTO, ""):
            return AUTO
        if shutil.which(text) is None:
            raise InvalidResponse(
                f"[prompt.invalid]{text!r} is not an executable file or a command on PATH "
                f"(enter {AUTO!r} to detect Chromium when the worker starts)"
            )
        return text


def run_wizard(path: Path, console: Console) -> int:
    """Ask, validate, write; 0 when the file was written, 1 when the user stopped."""
    existing = _read(path, console)
    if existing is None:
        return 2
    console.print(f"[bold]browserq setup[/bold] — writes {path} (Enter keeps the value in brackets)\n")
    if existing and not Confirm.ask(f"{path} exists: update it", default=True, console=console):
        console.print("nothing written")
        return 1
    try:
        answers = _ask(console, _current(existing))
    except (KeyboardInterrupt, EOFError):
        console.print("\ncancelled, nothing written")
        return 1
    return _write(path, {**existing, **answers}, console)


def _ask(console: Console, current: dict[str, Any]) -> dict[str, Any]:
    redis_url = RedisUrlPrompt.ask("Redis URL", default=str(current["redis_url"]), console=console)
    _report_reachability(redis_url, console)
    console.print("[dim]Browser tools stay hidden from agents until enabled (seed 000's opt-in).[/dim]")
    enabled = Confirm.ask("Browser Enabled", default=bool(current["enabled"]), console=console)
    headless = Confirm.ask("Browser Headless", default=bool(current["headless"]), console=console)
    console.print("[dim]Idle sessions are closed after this; e.g. 90s, 5m, 1h30m.[/dim]")
    timeout = DurationPrompt.ask(
        "Browser Session Timeout", default=current["session_timeout"], console=console
    )
    detected = detect_browser(str(current["browser_bin"]))
    if detected is None:
        console.print("[dim]No Chromium found on PATH: Playwright's bundled browser would be used.[/dim]")
    console.print(f"[dim]A path, a command on PATH, or {AUTO!r} to detect Chromium at run time.[/dim]")
    binary = BinaryPrompt.ask("Browser binary", default=detected or AUTO, console=console)
    return {
        "redis_url": redis_url,
        "enabled": enabled,
        "headless": headless,
        "session_timeout": timeout,
        "browser_bin": "" if binary == AUTO else binary,
    }


def _read(path: Path, console: Console) -> dict[str, Any] | None:
    """The file's current contents (kept: the wizard edits five keys, not the whole file)."""
    if not path.exists():
        return {}
    try:
        return tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        console.print(f"[red]cannot read {path}:[/red] {exc}")
        return None


def _current(existing: dict[str, Any]) -> dict[str, Any]:
    """Defaults to offer: the existing file's values, else the built-in defaults (not the
    environment: the file should say what the user chose, not what this shell happens to set)."""
    fields = Settings.model_fields
    current = {k: existing.get(k, fields[k].get_default(call_default_factory=True))
               for k in ("redis_url", "enabled", "headless", "session_timeout", "browser_bin")}
    try:
        current["session_timeout"] = format_duration(parse_duration(current["session_timeout"]))
    except ValueError:
        current["session_timeout"] = format_duration(fields["session_timeout"].default)
    return current


def _write(path: Path, data: dict[str, Any], console: Console) -> int:
    """Validate the whole file through Settings, then replace it atomically."""
    text = tomli_w.dumps(data)
    try:
        Settings.model_validate(tomllib.loads(text))
    except ValidationError as exc:
        console.print(f"[red]not written, the file would be invalid:[/red] {exc}")
        return 2
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)
    hint = "" if path.resolve() == Path("browserq.toml").resolve() else f"  (export BROWSERQ_CONFIG={path})"
    console.print(f"\n[green]✓[/green] wrote {path}{hint}")
    return 0


def _report_reachability(url: str, console: Console) -> None:
    from .cluster import redis_reachable

    if redis_reachable(url):
        console.print("[green]✓[/green] Redis answers at that URL")
    else:
        console.print("[yellow]![/yellow] Redis does not answer there now (saved anyway; "
                      "`browserq up` starts an embedded one when it is unreachable)")


def format_duration(seconds: float) -> str:
    """Seconds as the Go-style string a person would type (600 -> "10m", 5400 -> "1h30m")."""
    if seconds != int(seconds):
        return f"{round(seconds * 1000)}ms"
    rest, out = int(seconds), ""
    for unit, size in (("h", 3600), ("m", 60), ("s", 1)):
        if rest >= size:
            out += f"{rest // size}{unit}"
            rest %= size
    return out or "0s"
