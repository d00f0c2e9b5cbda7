"""`browserq init` driven the way a person uses it: the real command under a pseudo-terminal,
keystrokes in, a TOML file out, read back through the same Settings every component uses."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pexpect
import pytest

from client import Settings
from worker.cluster import RedisServer, browserq_command, free_port
from worker.wizard import QUESTIONS, format_duration

PROMPT_ORDER = list(QUESTIONS)


def spawn_init(*args: str, cwd: Path) -> pexpect.spawn:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BROWSERQ_")}
    env.update(NO_COLOR="1", TERM="dumb", COLUMNS="200")
    cmd, *rest = [*browserq_command(), "init", *args]
    return pexpect.spawn(cmd, rest, cwd=str(cwd), env=env, encoding="utf-8", timeout=30,
                         dimensions=(40, 200))


def answer(child: pexpect.spawn, prompt: str, keys: str, seen: list[str],
           offered: str | None = None) -> None:
    """Wait for the prompt whose label is `prompt` (failing on any other label), check the
    default it offers in brackets, then type."""
    labels = [p for p in PROMPT_ORDER if p != prompt]
    index = child.expect([prompt, *labels, pexpect.EOF])
    assert index == 0, f"expected the {prompt!r} prompt, got {([prompt, *labels, 'EOF'])[index]!r}"
    if offered is not None:
        child.expect_exact(f"({offered}):")
    seen.append(prompt)
    child.sendline(keys)


def load_settings(path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    for key in list(os.environ):
        if key.startswith("BROWSERQ_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("BROWSERQ_CONFIG", str(path))
    return Settings()


def test_wizard_asks_in_seed_order_reasks_bad_duration_and_writes_loadable_toml(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, redis_server: RedisServer
) -> None:
    out = tmp_path / "conf" / "bq.toml"
    child = spawn_init("--path", str(out), cwd=tmp_path)
    seen: list[str] = []
    answer(child, "Redis URL", "not a url", seen)
    child.expect("Not a Redis URL")                    # re-asked, nothing written yet
    answer(child, "Redis URL", redis_server.url, seen)
    child.expect("Redis answers")
    answer(child, "Browser Enabled", "y", seen)
    answer(child, "Browser Headless", "n", seen)
    answer(child, "Browser Session Timeout", "five minutes", seen)
    child.expect("not a duration")                     # the invalid duration is re-asked
    answer(child, "Browser Session Timeout", "1h30m", seen)
    answer(child, "Browser binary", "/no/such/chrome", seen)
    child.expect("not an executable")
    answer(child, "Browser binary", "", seen)          # Enter takes the auto-detected default
    child.expect("wrote")
    child.expect(pexpect.EOF)
    child.close()

    assert child.exitstatus == 0
    assert seen == ["Redis URL", "Redis URL", "Browser Enabled", "Browser Headless",
                    "Browser Session Timeout", "Browser Session Timeout", "Browser binary", "Browser binary"]
    assert [p for i, p in enumerate(seen) if p not in seen[:i]] == PROMPT_ORDER
    settings = load_settings(out, monkeypatch)
    assert settings.redis_url == redis_server.url
    assert settings.enabled is True
    assert settings.headless is False
    assert settings.session_timeout == 5400.0
    assert settings.browser_bin == shutil.which("chromium")
    assert 'session_timeout = "1h30m"' in out.read_text()


def test_wizard_offers_the_detected_browser_and_keeps_other_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "browserq.toml"
    out.write_text('max_sessions = 7\nsession_timeout = "5m"\nenabled = true\n')
    child = spawn_init(cwd=tmp_path)                   # default --path: ./browserq.toml
    child.expect("exists: update it")
    child.sendline("")
    unreachable = f"redis://127.0.0.1:{free_port()}/3"
    seen: list[str] = []
    answer(child, "Redis URL", unreachable, seen)
    child.expect("does not answer")                    # a warning, not a refusal
    answer(child, "Browser Enabled", "", seen, offered="y")     # the file's value is the default
    answer(child, "Browser Headless", "", seen, offered="y")
    answer(child, "Browser Session Timeout", "", seen, offered="5m")
    answer(child, "Browser binary", "auto", seen, offered=shutil.which("chromium"))  # detected one
    # `auto` means detect at run time: an empty browser_bin
    child.expect(pexpect.EOF)
    child.close()

    assert child.exitstatus == 0 and seen == PROMPT_ORDER
    settings = load_settings(out, monkeypatch)
    assert settings.redis_url == unreachable
    assert settings.max_sessions == 7                  # untouched keys survive
    assert settings.enabled is True and settings.headless is True
    assert settings.session_timeout == 300.0
    assert settings.browser_bin == ""


def test_ctrl_c_writes_nothing(tmp_path: Path) -> None:
    child = spawn_init(cwd=tmp_path)
    child.expect("Redis URL")
    child.sendintr()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 1
    assert not (tmp_path / "browserq.toml").exists()


def test_format_duration_round_trips_through_the_settings_parser() -> None:
    from client.settings import parse_duration

    for seconds in (0.25, 1, 90, 300, 600, 5400, 3661):
        assert parse_duration(format_duration(seconds)) == seconds
    assert format_duration(5400) == "1h30m" and format_duration(600) == "10m"


def test_init_is_playwright_free() -> None:
    """The wizard must start on a machine without the worker extra."""
    import subprocess

    code = "import sys, worker.wizard, worker.cli; assert 'playwright' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
