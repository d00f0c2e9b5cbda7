"""What every benchmark shares: its own Redis and workers on loopback, a tiny local site,
statistics, and one JSON file per benchmark under `bench/results/`."""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from worker.cluster import RedisServer, WorkerProcess

RESULTS = Path(__file__).parent / "results"
LOGS = RESULTS / "logs"

PAGES = {
    "/": """<!doctype html><title>Bench</title><h1>Bench page</h1>
<button id="go" onclick="this.dataset.n = (+this.dataset.n || 0) + 1">Go</button>
<input aria-label="Name" id="name"><a href="/page2">Next</a>""",
    "/page2": "<!doctype html><title>Two</title><h1>Second</h1><a href='/'>Home</a>",
}


class QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A browser killed mid-response (the crash benchmark) is expected, not news."""


class Site:
    """A loopback HTTP server with two small pages, and `/hold?token=T`, whose first request per
    token answers only after HOLD seconds (a task that is surely in flight when a test kills)."""

    HOLD = 5.0

    def __init__(self) -> None:
        self.held: set[str] = set()
        site = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                path, _, query = self.path.partition("?")
                if path == "/hold":
                    site.hold(query)
                body = PAGES.get(path, "<title>Held</title>done" if path == "/hold" else None)
                if body is None:
                    self.send_error(404)
                    return
                data = body.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = QuietServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def hold(self, token: str) -> None:
        if token not in self.held:
            self.held.add(token)
            time.sleep(self.HOLD)

    def close(self) -> None:
        self.server.shutdown()


@contextmanager
def site() -> Iterator[Site]:
    s = Site()
    try:
        yield s
    finally:
        s.close()


@contextmanager
def fleet(workers: int = 1, env: Mapping[str, str] | None = None,
          prefix: str = "bench") -> Iterator[tuple[str, list[WorkerProcess]]]:
    """A fresh Redis plus N ready `browserq worker` processes, all stopped on exit."""
    LOGS.mkdir(parents=True, exist_ok=True)
    server = RedisServer().start()
    procs = [WorkerProcess(server.url, f"{prefix}-{i + 1}", env=env, log_dir=LOGS)
             for i in range(workers)]
    try:
        for p in procs:
            p.start()
        for p in procs:
            p.wait_ready(60)
        yield server.url, procs
    finally:
        for p in procs:
            p.stop()
        server.stop()


def cpu_ms(pid: int) -> float:
    """CPU time (user + system) a process has used, in ms."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def children() -> dict[int, list[int]]:
    """Every live process's children, by parent pid (from /proc)."""
    kids: dict[int, list[int]] = defaultdict(list)
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            kids[int(stat.rsplit(")", 1)[1].split()[1])].append(int(entry.name))
    return kids


def tree(root: int, kids: dict[int, list[int]]) -> list[int]:
    """`root` and everything below it."""
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(kids.get(pid, ()))
    return out


def process_groups(worker_pids: list[int]) -> dict[str, list[int]]:
    """This process (the client), each worker's Python, its Playwright driver and Chromium tree, and
    redis-server: where a benchmark's CPU goes."""
    kids = children()
    groups: dict[str, list[int]] = {"client": [os.getpid()], "worker (python)": list(worker_pids),
                                    "playwright driver (node)": [], "chromium": [],
                                    "redis-server": [p for p in kids[os.getpid()] if _comm(p) == "redis-server"]}
    for worker in worker_pids:
        for pid in tree(worker, kids)[1:]:
            groups["playwright driver (node)" if _comm(pid).startswith("node") else "chromium"].append(pid)
    return groups


def _comm(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def cpu_by_group(groups: dict[str, list[int]]) -> dict[str, float]:
    total = {}
    for group, pids in groups.items():
        total[group] = sum(cpu_ms(p) for p in pids if Path(f"/proc/{p}").exists())
    return total


def summary(samples_ms: list[float]) -> dict[str, float]:
    """Median, p95 and friends of a list of milliseconds."""
    xs = sorted(samples_ms)
    if not xs:
        return {"n": 0}
    return {"n": len(xs), "median": statistics.median(xs), "p95": percentile(xs, 95),
            "mean": statistics.fmean(xs), "min": xs[0], "max": xs[-1]}


def percentile(sorted_xs: list[float], p: float) -> float:
    k = (len(sorted_xs) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(sorted_xs) - 1)
    return sorted_xs[lo] + (sorted_xs[hi] - sorted_xs[lo]) * (k - lo)


def timed(fn: Callable[[], Any]) -> float:
    """Milliseconds one call of `fn` takes."""
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    mem_kb = int(next(line.split()[1] for line in Path("/proc/meminfo").read_text().splitlines()
                      if line.startswith("MemTotal")))
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gb": round(mem_kb / 2**20, 1),
            "python": platform.python_version(), "chromium": _chromium_version(),
            "playwright": _version("playwright"), "celery": _version("celery"),
            "redis_server": _command(["redis-server", "--version"]).split(" sha=")[0]}


def _version(dist: str) -> str:
    from importlib.metadata import version
    return version(dist)


def _chromium_version() -> str:
    from worker.binary import detect_browser
    path = detect_browser("")
    return _command([str(path), "--version"]) if path else "not found"


def _command(argv: list[str]) -> str:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return "not found"


def write(name: str, data: dict[str, Any]) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps({"benchmark": name, "machine": machine(),
                                "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), **data}, indent=2))
    return path
