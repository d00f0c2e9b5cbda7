"""The tool contract, the wire payload and settings: pure validation, no Redis, no browser."""

from __future__ import annotations

import os

import pytest
from pydantic import ValidationError

from client.errors import InvalidInput, InvalidSessionId, UnknownTool
from client.protocol import TaskPayload, check_session_id
from client.settings import Settings, parse_duration
from client.tools import Click, Navigate, WaitFor, validate_call


@pytest.fixture(autouse=True)
def clean_settings_env(monkeypatch, tmp_path):
    """No BROWSERQ_* variables and no ./browserq.toml leak into these tests."""
    for name in list(os.environ):
        if name.startswith("BROWSERQ_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)


def refused(tool, args, **kw) -> InvalidInput:
    with pytest.raises(InvalidInput) as info:
        validate_call(tool, args, **kw)
    return info.value


# --- validate_call ------------------------------------------------------------------------------


def test_valid_calls_return_the_model():
    nav = validate_call("browser_navigate", {"url": "https://example.com/a?b=1"})
    assert isinstance(nav, Navigate) and nav.url == "https://example.com/a?b=1"
    click = validate_call("browser_click", {"ref": "s1e5", "doubleClick": True})
    assert isinstance(click, Click) and click.ref == "s1e5" and click.doubleClick is True
    assert isinstance(validate_call("browser_wait_for", {"time": 1}), WaitFor)
    assert validate_call("browser_navigate_back", None).name == "browser_navigate_back"


def test_unknown_tool():
    err = refused("browser_teleport", {}, session="conv-1")
    assert isinstance(err, UnknownTool)
    assert err.field == "tool"
    assert err.session == "conv-1"
    assert "browser_teleport" in err.message
    assert "browser_navigate" in err.message  # lists the known tools


@pytest.mark.parametrize("tool", [None, 5, ["browser_navigate"]])
def test_non_string_tool_is_unknown(tool):
    assert isinstance(refused(tool, {}), UnknownTool)


def test_missing_field():
    err = refused("browser_navigate", {})
    assert type(err) is InvalidInput
    assert err.field == "url"
    assert "missing" in err.problem
    assert err.tool == "browser_navigate"
    assert "url" in err.message


@pytest.mark.parametrize(
    ("args", "field", "shown"),
    [
        ({"ref": "s1e1", "doubleClick": "yes please"}, "doubleClick", "yes please"),
        ({"ref": 5}, "ref", "5"),
        ({"ref": "s1e1", "button": "top"}, "button", "top"),
        ({"ref": "s1e1", "modifiers": ["Hyper"]}, "modifiers.0", "Hyper"),
    ],
)
def test_wrong_type_names_the_field(args, field, shown):
    err = refused("browser_click", args)
    assert err.field == field
    assert shown in err.problem  # the offending value is echoed back
    assert field in err.message


def test_extra_field():
    err = refused("browser_click", {"ref": "s1e1", "force": True})
    assert err.field == "force"
    assert err.problem == "unknown field"


def test_timeout_bounds():
    assert refused("browser_navigate", {"url": "https://x.org", "timeout": 0}).field == "timeout"
    assert refused("browser_navigate", {"url": "https://x.org", "timeout": 301}).field == "timeout"
    assert validate_call("browser_navigate", {"url": "https://x.org", "timeout": 300}).timeout == 300


def test_url_without_scheme():
    err = refused("browser_navigate", {"url": "example.com"})
    assert err.field == "url"
    assert "scheme" in err.problem
    assert "https://example.com" in err.problem  # tells the model the fix


def test_url_without_host():
    err = refused("browser_navigate", {"url": "http://"})
    assert err.field == "url"
    assert "no host" in err.problem


def test_url_with_whitespace_in_host():
    err = refused("browser_navigate", {"url": "https://exa mple.com"})
    assert err.field == "url"
    assert "whitespace" in err.problem


def test_url_with_whitespace_in_scheme_says_whitespace():
    # "ht tp://x" is not a URL without a scheme: suggesting "https://ht tp://x" would be wrong.
    err = refused("browser_navigate", {"url": "ht tp://x"})
    assert err.field == "url"
    assert "whitespace" in err.problem
    assert "https://ht tp://x" not in err.problem


def test_url_is_stripped():
    assert validate_call("browser_navigate", {"url": "  https://example.com  "}).url == "https://example.com"


def test_click_with_both_ref_and_selector():
    err = refused("browser_click", {"ref": "s1e1", "selector": "#go"})
    assert "ref" in err.problem and "selector" in err.problem
    assert "not both" in err.problem


def test_click_with_neither_ref_nor_selector():
    err = refused("browser_click", {"element": "the button"})
    assert "ref" in err.problem and "selector" in err.problem
    assert "required" in err.problem


def test_snapshot_target_is_optional_but_exclusive():
    validate_call("browser_snapshot", {})
    err = refused("browser_snapshot", {"ref": "s1e1", "selector": "main"})
    assert "not both" in err.problem


def test_wait_for_needs_a_condition():
    err = refused("browser_wait_for", {})
    for name in ("text", "textGone", "time"):
        assert name in err.problem
    assert refused("browser_wait_for", {"text": ""}).field == "text"


@pytest.mark.parametrize("args", [["https://example.com"], "url=https://example.com", 5])
def test_arguments_must_be_an_object(args):
    err = refused("browser_navigate", args)
    assert err.field == "arguments"
    assert "object" in err.problem
    assert type(args).__name__ in err.message


# --- session ids and the payload ----------------------------------------------------------------


@pytest.mark.parametrize("sid", ["conv-42", "a.b:c_d-1", "x" * 128, "A", "0"])
def test_valid_session_ids(sid):
    assert check_session_id(sid) == sid


@pytest.mark.parametrize("sid", ["", "x" * 129, "a b", "x/y", None, 5, "conv-1\n", "é", "a*"])
def test_invalid_session_ids(sid):
    with pytest.raises(InvalidSessionId) as info:
        check_session_id(sid)
    assert info.value.field == "session"
    assert isinstance(info.value, InvalidInput)


def test_task_payload_defaults_and_roundtrip():
    p = TaskPayload(tool="browser_navigate", session="conv-1", args={"url": "https://x.org"}, seq=3, base=1)
    assert TaskPayload.model_validate(p.model_dump()) == p
    assert TaskPayload(tool="t", session="s").seq == 0


def test_task_payload_rejects_extra_keys():
    with pytest.raises(ValidationError) as info:
        TaskPayload(tool="browser_navigate", session="conv-1", priority=9)
    assert "priority" in str(info.value)


@pytest.mark.parametrize("sid", ["", "a b", "x/y", "x" * 129, "../../etc", "ok\n"])
def test_task_payload_rejects_bad_sessions(sid):
    with pytest.raises(ValidationError) as info:
        TaskPayload(tool="browser_navigate", session=sid)
    assert "session" in str(info.value)


def test_task_payload_rejects_negative_seq():
    with pytest.raises(ValidationError):
        TaskPayload(tool="t", session="s", seq=-1)


# --- durations and settings ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("90s", 90), ("5m", 300), ("1h30m", 5400), ("250ms", 0.25), (12, 12), ("12", 12),
     (1.5, 1.5), ("1.5s", 1.5), (" 5m ", 300), (0, 0)],
)
def test_parse_duration(value, seconds):
    assert parse_duration(value) == pytest.approx(seconds)


@pytest.mark.parametrize("value", ["5 minutes", "", "   ", "-5s", "1x", -5, "5m5", "h", None, True])
def test_parse_duration_rejects(value):
    with pytest.raises(ValueError):
        parse_duration(value)


def test_settings_durations_from_keywords():
    s = Settings(session_timeout="5m", capacity_wait=0)
    assert s.session_timeout == 300
    assert s.capacity_wait == 0


def test_settings_duration_from_env(monkeypatch):
    monkeypatch.setenv("BROWSERQ_SESSION_TIMEOUT", "1h")
    assert Settings().session_timeout == 3600


def test_settings_bad_duration_names_the_field():
    with pytest.raises(ValidationError) as info:
        Settings(session_timeout="soon")
    assert "session_timeout" in str(info.value)


def test_settings_reject_unknown_keywords():
    with pytest.raises(ValidationError):
        Settings(max_session=3)


def test_settings_lists_from_keywords_are_split():
    s = Settings(caps="vision, pdf", browser_args="--disable-gpu,--mute-audio")
    assert s.caps == ["vision", "pdf"]
    assert s.browser_args == ["--disable-gpu", "--mute-audio"]


def test_settings_comma_separated_list_from_env(monkeypatch):
    # README: "BROWSERQ_BROWSER_ARGS | extra Chromium flags, comma separated".
    monkeypatch.setenv("BROWSERQ_BROWSER_ARGS", "--disable-gpu,--mute-audio")
    monkeypatch.setenv("BROWSERQ_CAPS", "vision, pdf")
    s = Settings()
    assert s.browser_args == ["--disable-gpu", "--mute-audio"]
    assert s.caps == ["vision", "pdf"]


def test_settings_from_toml_and_precedence(monkeypatch, tmp_path):
    cfg = tmp_path / "custom.toml"
    cfg.write_text('redis_url = "redis://cache.internal:6380/3"\nmax_sessions = 7\nsession_timeout = "2m"\n')
    monkeypatch.setenv("BROWSERQ_CONFIG", str(cfg))

    s = Settings()
    assert s.redis_url == "redis://cache.internal:6380/3"
    assert s.max_sessions == 7
    assert s.session_timeout == 120

    monkeypatch.setenv("BROWSERQ_MAX_SESSIONS", "9")
    s = Settings()
    assert s.max_sessions == 9  # env beats the file
    assert s.redis_url == "redis://cache.internal:6380/3"  # the rest still comes from the file

    assert Settings(max_sessions=11).max_sessions == 11  # keywords beat both


def test_settings_local_toml_is_read(tmp_path):
    (tmp_path / "browserq.toml").write_text("max_sessions = 4\n")  # cwd is tmp_path
    assert Settings().max_sessions == 4


def test_settings_defaults_without_any_file():
    s = Settings()
    assert s.redis_url == "redis://127.0.0.1:6379/0"
    assert s.session_timeout == 600
    assert s.heartbeat_ttl == 3.0
