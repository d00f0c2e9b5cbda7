"""Finding the processes a test started, by what their command lines carry (never by name)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path


def cmdlines() -> dict[int, list[bytes]]:
    found = {}
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                found[int(proc.name)] = (proc / "cmdline").read_bytes().split(b"\0")
            except OSError:
                pass
    return found


def browser_pids(worker: str, worker_pid: int) -> list[int]:
    """Main Chromium processes launched by one worker process (its launch marker, no --type)."""
    marker = f"--browserq-instance={worker}.{worker_pid}.".encode()
    return [pid for pid, argv in cmdlines().items()
            if any(a.startswith(marker) for a in argv) and not any(a.startswith(b"--type=") for a in argv)]


def chromium_of(worker: str, worker_pid: int) -> list[int]:
    """Every Chromium process (main and children) of one worker process."""
    marker = f"--browserq-instance={worker}.{worker_pid}.".encode()
    return [pid for pid, argv in cmdlines().items() if any(a.startswith(marker) for a in argv)]


def kill_browser(worker: str, worker_pid: int, timeout: float = 10) -> int:
    """kill -9 the worker's current Chromium (waiting for it to exist); returns its pid."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pids = browser_pids(worker, worker_pid)
        if pids:
            os.kill(pids[0], signal.SIGKILL)
            return pids[0]
        time.sleep(0.02)
    raise AssertionError(f"no Chromium of {worker} to kill")


def wait_until(predicate, timeout: float, what: str) -> None:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")
