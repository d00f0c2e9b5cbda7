"""`browserq demo` end to end, as a user runs it: real subprocess, embedded Redis, real workers."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from worker.cluster import free_port

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

pytestmark = pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server")


def _cmdlines() -> dict[int, list[str]]:
    """Every other process's argv, read from /proc (processes may vanish while we look)."""
    found: dict[int, list[str]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            raw = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if raw:
            found[int(entry.name)] = raw.rstrip(b"\0").decode(errors="replace").split("\0")
    return found


def _mentions(argv: list[str], prefix: str, ports: set[int]) -> bool:
    if any(prefix in arg for arg in argv):
        return True
    port_args = {argv[i + 1] for i, arg in enumerate(argv[:-1]) if arg == "--port"}
    return any(str(p) in port_args or any(f":{p}" in arg for arg in argv) for p in ports)


def test_demo_runs_agents_on_a_fleet_and_cleans_up(tmp_path: Path) -> None:
    unused_port = free_port()  # nothing listens there, so the demo embeds its own redis-server
    env = {**os.environ, "BROWSERQ_REDIS_URL": f"redis://127.0.0.1:{unused_port}/0", "COLUMNS": "200"}
    argv = [sys.executable, "-m", "worker", "demo", "--agents", "2", "--workers", "2",
            "--out", str(tmp_path)]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        stdout, stderr = proc.communicate(timeout=180)
    except subprocess.TimeoutExpired:
        proc.kill()
        stdout, stderr = proc.communicate()
        pytest.fail(f"demo timed out\nstdout:\n{stdout}\nstderr:\n{stderr}")
    output = stdout + stderr
    assert proc.returncode == 0, output

    prefix = f"demo{proc.pid}"
    assert "agent-1" in stdout and "agent-2" in stdout, output
    # Least-loaded routing puts two new sessions on two different workers.
    assert f"{prefix}-1" in stdout and f"{prefix}-2" in stdout, output
    for name in ("agent-1.png", "agent-2.png"):
        assert (tmp_path / name).read_bytes().startswith(PNG_MAGIC), name

    embedded = {int(p) for p in re.findall(r"redis://127\.0\.0\.1:(\d+)", stderr)}
    assert embedded, f"no embedded redis-server reported\n{stderr}"
    leftovers = {pid: argv for pid, argv in _cmdlines().items()
                 if _mentions(argv, prefix, embedded | {unused_port})}
    assert not leftovers, f"processes left running: {leftovers}"
