"""One settings object for every component.

Precedence, highest first: keyword arguments, `BROWSERQ_*` environment variables, the TOML file
(`BROWSERQ_CONFIG`, else `./browserq.toml` when present), defaults. Build it once at the entry point
and pass it down.
"""

from __future__ import annotations

import os
import re
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any

from pydantic import BeforeValidator, Field
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    NoDecode,
    TomlConfigSettingsSource,
)

__all__ = ["Settings", "parse_duration"]

_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")


def parse_duration(value: Any) -> float:
    """Seconds from a number or a Go-style duration ("90s", "5m", "1h30m", "250ms")."""
    if isinstance(value, timedelta):
        return value.total_seconds()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
    elif isinstance(value, str) and value.strip():
        text = value.strip()
        if re.fullmatch(r"\d+(\.\d+)?", text):
            seconds = float(text)
        elif "".join(m.group(0) for m in _DURATION.finditer(text)) == text:
            seconds = sum(float(n) * _UNITS[u] for n, u in _DURATION.findall(text))
        else:
            raise ValueError(f"{value!r} is not a duration; use e.g. 90s, 5m, 1h30m or seconds")
    else:
        raise ValueError(f"{value!r} is not a duration; use e.g. 90s, 5m, 1h30m or seconds")
    if seconds < 0:
        raise ValueError(f"{value!r} is negative; durations must be >= 0")
    return seconds


Duration = Annotated[float, BeforeValidator(parse_duration)]


def _split_list(value: Any) -> Any:
    return [v.strip() for v in value.split(",") if v.strip()] if isinstance(value, str) else value


StrList = Annotated[list[str], NoDecode, BeforeValidator(_split_list)]


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="BROWSERQ_", extra="forbid")

    redis_url: str = Field("redis://127.0.0.1:6379/0", description="Broker and result backend")
    enabled: bool = Field(False, description="Agent-side opt-in: expose browser tools at all")
    headless: bool = True
    browser_bin: str = Field("", description="Empty: auto-detect chromium on PATH")
    browser_args: StrList = Field(default_factory=list, description="Extra Chromium flags")
    session_timeout: Duration = Field(600.0, description="Idle sessions close after this")
    action_timeout: Duration = Field(30.0, description="Default per-action timeout")
    wait_timeout: Duration = Field(10.0, description="Default wait for elements and text")
    capacity_wait: Duration = Field(10.0, description="How long a new session waits for a slot")
    result_timeout: Duration = Field(
        120.0, description="Client gives up on a result after this (beyond the action timeout)"
    )
    caps: StrList = Field(default_factory=list, description="Capabilities: vision, pdf")
    concurrency: int = Field(8, ge=1, le=256, description="Tasks a worker runs at once")
    max_sessions: int = Field(50, ge=1, le=10_000, description="Sessions a worker holds")
    warm_contexts: int = Field(2, ge=0, le=50, description="Fresh contexts kept ready for new sessions")
    worker_name: str = Field("", description="Empty: <hostname>-<pid>")
    heartbeat_interval: Duration = Field(1.0, gt=0)
    upload_dir: Path = Path("uploads")
    artifact_dir: Path = Path("artifacts")
    state_dir: Path = Path("state")
    # URL policy (SPEC 8): fields only here; the worker enforces them before any navigation.
    allowed_schemes: StrList = Field(
        default_factory=lambda: ["http", "https", "about", "data"],
        description="URL schemes a page may be navigated to",
    )
    allow_hosts: StrList = Field(
        default_factory=list, description="If set, only these hosts may be visited"
    )
    deny_hosts: StrList = Field(default_factory=list, description="Hosts never visited")
    max_tabs: int = Field(20, ge=1, le=500, description="Open tabs per context of a session")
    max_contexts: int = Field(10, ge=1, le=100, description="Browser contexts per session")
    max_eval_bytes: int = Field(1_000_000, ge=1_000, le=12_000_000,
                                description="Largest JSON an evaluate may return")

    @property
    def heartbeat_ttl(self) -> float:
        """A worker missing three beats is dead for routing."""
        return max(3 * self.heartbeat_interval, 2.0)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        toml = TomlConfigSettingsSource(settings_cls, toml_file=_config_file())
        return init_settings, env_settings, toml


def _config_file() -> Path | None:
    # The only environment read outside pydantic-settings: it says where the settings live.
    explicit = os.environ.get("BROWSERQ_CONFIG")
    if explicit:
        return Path(explicit)
    local = Path("browserq.toml")
    return local if local.is_file() else None
