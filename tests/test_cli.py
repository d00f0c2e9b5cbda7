"""The `browserq` command line as a user runs it: real processes, real exit codes."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

from worker.cluster import RedisServer, WorkerProcess, browserq_command, free_port

from .site import FixtureSite


def browserq(*args: str, redis_url: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "BROWSERQ_REDIS_URL": redis_url, "COLUMNS": "200"}
    return subprocess.run([*browserq_command(), *args], env=env, capture_output=True, text=True,
                          timeout=timeout)


def test_call_navigate_snapshot_click(redis_server: RedisServer, fleet: list[WorkerProcess], site: FixtureSite) -> None:
    url = redis_server.url
    nav = browserq("call", "browser_navigate", json.dumps({"url": site.url + "/"}), "--session", "cli-s1", redis_url=url)
    assert nav.returncode == 0, nav.stderr
    assert json.loads(nav.stdout)["data"]["title"] == "Fixture Home"

    snap = browserq("call", "browser_snapshot", "--session", "cli-s1", redis_url=url)
    assert snap.returncode == 0
    tree = json.loads(snap.stdout)["data"]["snapshot"]
    ref = re.search(r'button "Rename" \[ref=(s\d+e\d+)\]', tree).group(1)

    click = browserq("call", "browser_click", json.dumps({"ref": ref}), "--session", "cli-s1", redis_url=url)
    assert click.returncode == 0 and json.loads(click.stdout)["ok"]
    title = browserq("call", "browser_evaluate", '{"function": "() => document.title"}', "--session", "cli-s1", redis_url=url)
    assert json.loads(title.stdout)["data"] == "Renamed"


def test_call_exit_codes(redis_server: RedisServer, fleet: list[WorkerProcess], site: FixtureSite) -> None:
    url = redis_server.url
    tool_error = browserq("call", "browser_click", '{"selector": "#nope", "timeout": 0.3}', "-s", "cli-s2", redis_url=url)
    assert tool_error.returncode == 1 and json.loads(tool_error.stdout)["error"]["type"] == "timeout"
    bad = browserq("call", "browser_navigate", '{"url": "example.com"}', "-s", "cli-s2", redis_url=url)
    assert bad.returncode == 2 and "url" in bad.stderr and bad.stdout == ""
    not_json = browserq("call", "browser_navigate", "{url:", redis_url=url)
    assert not_json.returncode == 2 and "JSON" in not_json.stderr
    nobody = browserq("call", "browser_snapshot", redis_url=f"redis://127.0.0.1:{free_port()}/0", timeout=30)
    assert nobody.returncode == 2 and "BrokerUnavailable" in nobody.stderr


def _processes_mentioning(needle: str) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and needle.encode() in (proc / "cmdline").read_bytes():
                found.append(int(proc.name))
        except OSError:
            pass
    return found


def test_up_starts_embedded_redis_and_ctrl_c_stops_everything(site: FixtureSite, tmp_path: Path) -> None:
    unreachable = f"redis://127.0.0.1:{free_port()}/0"
    env = {**os.environ, "BROWSERQ_REDIS_URL": unreachable}
    up = subprocess.Popen([*browserq_command(), "up", "--workers", "1"], env=env, cwd=tmp_path,
                          stderr=subprocess.PIPE, text=True)
    try:
        lines = []
        for line in up.stderr:
            lines.append(line)
            if "browserq is up" in line:
                break
        embedded = re.search(r"BROWSERQ_REDIS_URL=(\S+)", "".join(lines)).group(1)
        assert embedded != unreachable
        call = browserq("call", "browser_navigate", json.dumps({"url": site.url + "/page2"}), redis_url=embedded)
        assert json.loads(call.stdout)["data"]["title"] == "Page Two"
        marker = f"up{up.pid}-"
        assert _processes_mentioning(marker), "the worker and its Chromium should be running"
        up.send_signal(signal.SIGINT)
        assert up.wait(60) == 0
    finally:
        if up.poll() is None:
            up.kill()
    time.sleep(0.5)
    port = embedded.rsplit(":", 1)[1].split("/")[0]
    assert _processes_mentioning(marker) == []
    assert [p for p in _processes_mentioning(port) if b"redis-server" in Path(f"/proc/{p}/cmdline").read_bytes()] == []
