"""Operations: configuration, `browserq status`, queue depths, `browserq up --flower`, redaction."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
import redis
from kombu import Queue

from client import BrowserClient, InvalidInput, Settings, ToolResult
from client.protocol import queue_name
from client.redact import REDACTED, is_secret_field, secret_values
from client.routing import keys
from client.transport import make_celery
from worker.cluster import RedisServer, WorkerProcess, browserq_command, free_port
from worker.tasks import redact

from .conftest import db_url
from .site import FixtureSite

ROOT = Path(__file__).resolve().parent.parent


def browserq(*args: str, redis_url: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "BROWSERQ_REDIS_URL": redis_url, "COLUMNS": "200"}
    return subprocess.run([*browserq_command(), *args], env=env, capture_output=True, text=True,
                          timeout=timeout)


# --- configuration -------------------------------------------------------------------------------


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    for key in list(os.environ):
        if key.startswith("BROWSERQ_"):
            monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)
    return monkeypatch


def test_toml_env_and_keyword_precedence(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / "browserq.toml").write_text(
        'redis_url = "redis://file:6379/1"\nsession_timeout = "1h30m"\nmax_sessions = 5\n'
        'allowed_schemes = ["https"]\ndeny_hosts = ["169.254.169.254"]\n'
    )
    from_file = Settings()
    assert (from_file.redis_url, from_file.session_timeout, from_file.max_sessions) == (
        "redis://file:6379/1", 5400.0, 5)
    assert from_file.allowed_schemes == ["https"] and from_file.deny_hosts == ["169.254.169.254"]
    clean_env.setenv("BROWSERQ_MAX_SESSIONS", "9")
    clean_env.setenv("BROWSERQ_ALLOW_HOSTS", "example.com, intra.example")
    env_wins = Settings()
    assert env_wins.max_sessions == 9 and env_wins.allow_hosts == ["example.com", "intra.example"]
    assert env_wins.session_timeout == 5400.0                    # not overridden: still the file's
    assert Settings(max_sessions=11).max_sessions == 11           # keywords win over both


def test_url_policy_defaults_and_explicit_config_file(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    defaults = Settings()
    assert defaults.allowed_schemes == ["http", "https", "about", "data"]
    assert defaults.allow_hosts == [] and defaults.deny_hosts == []
    elsewhere = tmp_path / "conf" / "fleet.toml"
    elsewhere.parent.mkdir()
    elsewhere.write_text('action_timeout = "45s"\n')
    clean_env.setenv("BROWSERQ_CONFIG", str(elsewhere))
    assert Settings().action_timeout == 45.0


def test_bad_values_are_named_clearly(clean_env: pytest.MonkeyPatch, tmp_path: Path) -> None:
    clean_env.setenv("BROWSERQ_SESSION_TIMEOUT", "five minutes")
    with pytest.raises(ValueError, match=r"session_timeout[\s\S]*'five minutes' is not a duration"):
        Settings()
    clean_env.delenv("BROWSERQ_SESSION_TIMEOUT")
    (tmp_path / "browserq.toml").write_text("max_sesions = 3\n")
    with pytest.raises(ValueError, match="max_sesions"):
        Settings()
    bad = browserq("status", redis_url="redis://127.0.0.1:1/0")  # the CLI says so and exits 2
    assert bad.returncode == 2 and "max_sesions" in bad.stderr


def test_only_settings_reads_the_environment() -> None:
    """Every component takes configuration from Settings; the two exceptions are where the config
    file lives (read before Settings exists) and the environment handed to child processes."""
    readers = set()
    for path in [*ROOT.glob("client/**/*.py"), *ROOT.glob("worker/**/*.py")]:
        text = path.read_text()
        if re.search(r"os\.environ|os\.getenv|getenv\(", text):
            readers.add(str(path.relative_to(ROOT)))
    assert readers == {"client/settings.py", "worker/cluster.py"}
    cluster = (ROOT / "worker/cluster.py").read_text()
    assert re.findall(r"os\.environ[^,}]*", cluster) == ["os.environ"] * cluster.count("os.environ")


# --- status ---------------------------------------------------------------------------------------


def test_status_json_table_and_healthcheck(
    redis_server: RedisServer, client: BrowserClient, fleet: list[WorkerProcess], site: FixtureSite
) -> None:
    client.call("browser_navigate", {"url": site.url + "/"}, session="status-1")
    time.sleep(1.2)
    out = browserq("status", "--json", redis_url=redis_server.url)
    assert out.returncode == 0, out.stderr
    snap = json.loads(out.stdout)
    workers = {w["name"]: w for w in snap["workers"]}
    assert {"w-a", "w-b"} <= set(workers)
    owner = next(s for s in snap["sessions"] if s["id"] == "status-1")
    w = workers[owner["worker"]]
    assert w["alive"] and w["state"] == "running" and w["browser"] == "ready" and w["browser_pid"]
    assert w["sessions"] == 1 and w["local_sessions"] == 1 and w["capacity"] == 50
    assert 0 <= w["heartbeat_age"] < 3 and w["host"] == socket.gethostname()
    assert w["crashes"] == next(x.crashes for x in client.workers() if x.name == w["name"])  # shared fleet
    assert 1.0 <= owner["idle"] < 30 and owner["seq"] == 1 and owner["worker_alive"]
    assert snap["queues"]["w-a"] == 0 and snap["queues"]["w-b"] == 0

    table = browserq("status", redis_url=redis_server.url)
    assert table.returncode == 0
    for needle in ("workers (", "w-a", "w-b", "running", "status-1", "sessions (", "1/50", "ready (pid"):
        assert needle in table.stdout, needle

    assert browserq("status", "--healthcheck", redis_url=redis_server.url).returncode == 0
    empty = db_url(redis_server, 9)
    assert browserq("status", "--healthcheck", redis_url=empty).returncode == 1
    down = browserq("status", redis_url=f"redis://127.0.0.1:{free_port()}/0", timeout=30)
    assert down.returncode == 2 and "BrokerUnavailable" in down.stderr


def test_queue_depths_count_real_kombu_messages(redis_server: RedisServer) -> None:
    """Messages published by Celery (as the client does) to a registered worker that is not
    consuming, including a prioritised one, which kombu keeps in a separate list."""
    url = db_url(redis_server, 7)
    r = redis.Redis.from_url(url)
    r.flushdb()
    r.sadd(keys.workers, "ghost", "idle")
    celery = make_celery(Settings(redis_url=url))
    try:
        for priority in (None, None, 9):
            celery.send_task("browserq.browser_snapshot", kwargs={}, queue=Queue(queue_name("ghost")),
                             priority=priority)
        with BrowserClient(Settings(redis_url=url)) as c:
            assert c.queue_depths() == {"ghost": 3, "idle": 0}
    finally:
        celery.close()
        r.flushdb()


def test_async_client_reads_the_same_status(redis_server: RedisServer, client: BrowserClient) -> None:
    import asyncio

    from client import AsyncBrowserClient

    async def read() -> tuple[dict[str, int], list[str]]:
        async with AsyncBrowserClient(Settings(redis_url=redis_server.url)) as c:
            return await c.queue_depths(), [w.name for w in await c.workers()]

    depths, names = asyncio.run(read())
    assert depths == client.queue_depths() and names == [w.name for w in client.workers()]


# --- up --flower ---------------------------------------------------------------------------------


def test_up_with_flower_shows_each_component_and_stops_them(tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "BROWSERQ_REDIS_URL": f"redis://127.0.0.1:{free_port()}/0"}
    env.pop("FLOWER_BASIC_AUTH", None)
    up = subprocess.Popen([*browserq_command(), "up", "--workers", "1", "--flower", "--flower-port", str(port)],
                          env=env, cwd=tmp_path, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    try:
        for line in up.stderr:
            lines.append(line)
            if "browserq is up" in line:
                break
        text = "".join(lines)
        assert "embedded redis-server" in text and "worker up" in text
        assert f"flower at http://127.0.0.1:{port} (no auth, loopback only)" in text
        assert text.index("worker up") < text.index("flower at") < text.index("browserq is up")
        deadline = time.monotonic() + 30
        while True:  # Flower's inspect sees the worker once it answers a broadcast
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/workers?refresh=1", timeout=20) as resp:
                workers = json.load(resp)
            if any(name.startswith(f"up{up.pid}-1@") for name in workers) or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert any(name.startswith(f"up{up.pid}-1@") for name in workers)
        up.send_signal(signal.SIGINT)
        assert up.wait(60) == 0
    finally:
        if up.poll() is None:
            up.kill()
    with pytest.raises(OSError):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/healthcheck", timeout=2)


# --- redaction ------------------------------------------------------------------------------------


def test_secret_fields_and_values() -> None:
    assert is_secret_field("text") and is_secret_field("fields.0.value") and is_secret_field("proxy.password")
    assert is_secret_field("promptText") and is_secret_field("storage_state")
    assert not is_secret_field("selector") and not is_secret_field("url") and not is_secret_field("")
    args = {"selector": "#pw", "text": "hunter2", "proxy": {"server": "http://p:3128", "username": "bob",
            "password": "pa55word"}, "fields": [{"ref": "s1e2", "value": "4111 1111"}]}
    assert secret_values(args) == ["http://p:3128", "4111 1111", "pa55word", "hunter2", "bob"]


def test_task_boundary_scrubs_secrets_an_error_quotes() -> None:
    """A handler or Playwright error that quotes its input loses the secret before the result
    leaves the worker; the rest of the message stays useful."""
    quoted = ToolResult.failure("browser_type", "s1", "browser_error",
                                'fill("hunter2-SECRET") failed: element #pw is not an <input>')
    clean = redact(quoted, {"selector": "#pw", "text": "hunter2-SECRET"})
    assert "hunter2-SECRET" not in clean.model_dump_json()
    assert clean.error.message == f'fill("{REDACTED}") failed: element #pw is not an <input>'
    assert clean.text == f"Error: {clean.error.message}"
    ok = ToolResult(ok=True, tool="browser_evaluate", session="s1", data="hunter2-SECRET")
    assert redact(ok, {"text": "hunter2-SECRET"}).data == "hunter2-SECRET"  # asked-for data is kept


def test_validation_errors_never_quote_a_secret_field() -> None:
    with BrowserClient(Settings(redis_url="redis://127.0.0.1:1/0")) as c:
        for args in ({"selector": "#x", "text": "hunter2-SECRET" * 10_000},
                     {"selector": "#x", "text": ["hunter2-SECRET"]}):
            with pytest.raises(InvalidInput) as err:
                c.call("browser_type", args, session="v1")
            assert err.value.field == "text" and "hunter2-SECRET" not in str(err.value)
            assert "hunter2-SECRET" not in err.value.problem and err.value.problem
        with pytest.raises(InvalidInput) as other:  # other fields still say what they got
            c.call("browser_type", {"selector": "#x", "text": "a", "submit": "maybe"}, session="v1")
        assert "(got 'maybe')" in str(other.value)
