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


def _stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, start time) of a live process."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[1]), int(fields[19])


def descendants(root: int) -> dict[int, int]:
    """Every live process below `root` (pid -> start time, so a reused pid is not mistaken)."""
    stats = {pid: st for pid in cmdlines() if (st := _stat(pid))}
    found: dict[int, int] = {}
    frontier = [root]
    while frontier:
        parent = frontier.pop()
        for pid, (ppid, start) in stats.items():
            if ppid == parent and pid not in found:
                found[pid] = start
                frontier.append(pid)
    return found


def still_running(processes: dict[int, int]) -> list[int]:
    return [pid for pid, start in processes.items() if (st := _stat(pid)) and st[1] == start]


def renderers_of(browser_pid: int) -> list[int]:
    argvs = cmdlines()
    # Chromium rewrites its children's command lines into one space-separated string
    return [pid for pid in descendants(browser_pid) if b"--type=renderer" in b" ".join(argvs.get(pid, []))]


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
