"""`browserq demo`: scripted "agents" drive a bundled page through a real local fleet.

Everything a user would otherwise have to set up is started here and stopped again: a static
HTTP server for `demo_site/`, Redis (embedded when none is reachable) and N worker processes.
Each agent is one pinned session doing what an LLM agent would: navigate, snapshot, act on the
refs it read, evaluate, follow a link, screenshot. Every ToolResult is checked, so the exit code
says whether the whole stack works end to end.
"""

from __future__ import annotations

import base64
import os
import re
import statistics
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from importlib.resources import as_file, files
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from client import BrowserClient, BrowserQError, Session, Settings, ToolResult

from .cluster import WorkerProcess, free_port, local_fleet

__all__ = ["run_demo"]

out_console = Console()
err_console = Console(stderr=True)

EXPECTED_TASKS = 2
DETAILS_TEXT = "tasks saved in this browser session"


@dataclass
class Step:
    tool: str
    ok: bool
    worker: str | None
    ms: float


@dataclass
class AgentRun:
    """What one agent did, kept step by step so a failure report shows where it stopped."""

    sid: str
    steps: list[Step] = field(default_factory=list)
    screenshot: Path | None = None
    error: str | None = None

    def record(self, result: ToolResult) -> ToolResult:
        """Keep the step (failed ones too), then raise if the tool failed."""
        self.steps.append(Step(result.tool, result.ok, result.worker, result.timings.total))
        return result.raise_for_error()

    @property
    def ok(self) -> bool:
        return self.error is None and all(s.ok for s in self.steps)

    @property
    def worker(self) -> str:
        """The worker that served the session; more than one would mean it was re-pinned."""
        names = Counter(s.worker for s in self.steps if s.worker)
        return ", ".join(names) or "-"

    @property
    def total_ms(self) -> float:
        return sum(s.ms for s in self.steps)


class _QuietHandler(SimpleHTTPRequestHandler):
    """Request logs would interleave with the demo's own output."""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass


@contextmanager
def serve_site() -> Iterator[str]:
    """Serve the bundled `demo_site/` on loopback for as long as the block runs; yields its URL."""
    with as_file(files("worker") / "demo_site") as root:
        port = free_port()
        server = ThreadingHTTPServer(("127.0.0.1", port), partial(_QuietHandler, directory=str(root)))
        server.daemon_threads = True
        thread = threading.Thread(target=server.serve_forever, name="demo-http", daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{port}/index.html"
        finally:
            server.shutdown()
            server.server_close()
            thread.join(5)


def find_ref(snapshot: str, role: str, name: str) -> str:
    """The ref of `- role "name" [ref=...]` in a snapshot, as an agent would read it."""
    match = re.search(rf'- {re.escape(role)} "{re.escape(name)}"[^\n]*?\[ref=(\w+)\]', snapshot)
    if match is None:
        raise LookupError(f'no {role} "{name}" in the snapshot')
    return match.group(1)


def _expect(actual: Any, expected: Any, what: str) -> None:
    if actual != expected:
        raise AssertionError(f"{what}: expected {expected!r}, got {actual!r}")


def _save_png(result: ToolResult, path: Path) -> Path:
    if not result.images:
        raise AssertionError("screenshot returned no image")
    path.write_bytes(base64.b64decode(result.images[0].data))
    return path


def agent_flow(s: Session, run: AgentRun, url: str, out: Path) -> None:
    """The scripted agent: refs come from the snapshot text, like an LLM would pick them."""
    run.record(s.navigate(url))
    tree = run.record(s.snapshot()).data["snapshot"]
    box, add = find_ref(tree, "textbox", "New task"), find_ref(tree, "button", "Add")
    for task in (f"Book flights for {run.sid}", f"Send {run.sid}'s report"):
        run.record(s.type(task, ref=box, element="New task textbox"))
        run.record(s.click(ref=add, element="Add button"))
    items = run.record(s.evaluate("() => document.querySelectorAll('li').length")).data
    _expect(items, EXPECTED_TASKS, "list items after adding")
    run.record(s.click(selector="a#details", element="Details link"))
    run.record(s.wait_for(text=DETAILS_TEXT))
    saved = run.record(s.evaluate("() => Number(document.querySelector('#count').textContent)")).data
    _expect(saved, EXPECTED_TASKS, "tasks persisted to details.html")
    run.screenshot = _save_png(run.record(s.screenshot()), out / f"{run.sid}.png")


def run_agent(client: BrowserClient, sid: str, url: str, out: Path) -> AgentRun:
    """One agent session, always closed; any failure ends up in `run.error`, never raised."""
    run = AgentRun(sid)
    try:
        agent_flow(client.session(sid), run, url, out)
    except (BrowserQError, LookupError, AssertionError, OSError, ValueError) as exc:
        run.error = f"{type(exc).__name__}: {exc}"
    finally:
        try:
            client.close_session(sid)
        except BrowserQError as exc:
            run.error = run.error or f"close_session: {type(exc).__name__}: {exc}"
    return run


def start_workers(procs: list[WorkerProcess]) -> None:
    with err_console.status("starting workers...") as status:
        for proc in procs:
            status.update(f"waiting for worker {proc.name}...")
            proc.wait_ready(60)
            err_console.print(f"[green]✓[/green] worker {proc.name} (pid {proc.pid}) ready")


def run_agents(client: BrowserClient, agents: int, url: str, out: Path) -> list[AgentRun]:
    """All agents at once, in threads sharing one client (it is thread-safe)."""
    pool = ThreadPoolExecutor(max_workers=agents, thread_name_prefix="agent")
    try:
        futures: list[Future[AgentRun]] = [
            pool.submit(run_agent, client, f"agent-{i + 1}", url, out) for i in range(agents)
        ]
        with err_console.status(f"running {agents} agents..."):
            for future in as_completed(futures):
                _report_finished(future.result())
        return [f.result() for f in futures]
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def _report_finished(run: AgentRun) -> None:
    mark = "[green]✓[/green]" if run.ok else "[red]✗[/red]"
    detail = f"{len(run.steps)} steps on {run.worker}" + (f" — {run.error}" if run.error else "")
    err_console.print(f"{mark} {run.sid}: {detail}")


def _ms(value: float) -> str:
    return f"{value:,.0f}"


def sessions_table(runs: list[AgentRun]) -> Table:
    table = Table(title="Sessions")
    table.add_column("session", no_wrap=True)
    table.add_column("worker", no_wrap=True)
    table.add_column("steps", justify="right")
    table.add_column("total ms", justify="right")
    table.add_column("median ms", justify="right")
    table.add_column("screenshot", overflow="fold")
    for run in runs:
        median = statistics.median(s.ms for s in run.steps) if run.steps else 0.0
        shot = str(run.screenshot) if run.screenshot else "[red]none[/red]"
        table.add_row(run.sid, run.worker, str(len(run.steps)), _ms(run.total_ms), _ms(median), shot)
    return table


def tools_table(runs: list[AgentRun]) -> Table:
    by_tool: dict[str, list[float]] = {}
    for step in (s for run in runs for s in run.steps):
        by_tool.setdefault(step.tool, []).append(step.ms)
    table = Table(title="Latency per tool (client-side total)")
    table.add_column("tool", no_wrap=True)
    table.add_column("calls", justify="right")
    table.add_column("median ms", justify="right")
    table.add_column("max ms", justify="right")
    for tool, values in by_tool.items():
        table.add_row(tool, str(len(values)), _ms(statistics.median(values)), _ms(max(values)))
    return table


def report(runs: list[AgentRun], procs: list[WorkerProcess], ready_s: float, wall_s: float) -> int:
    """Print the tables and the summary; the exit code is 0 only if every step of every agent passed."""
    out_console.print(sessions_table(runs))
    out_console.print(tools_table(runs))
    steps = sum(len(r.steps) for r in runs)
    names = ", ".join(p.name for p in procs)
    out_console.print(f"{len(procs)} workers ({names}), {len(runs)} agents, {steps} steps")
    out_console.print(f"fleet ready in {ready_s:.1f} s, total wall time {wall_s:.1f} s")
    failed = [r for r in runs if not r.ok]
    for run in failed:
        bad = ", ".join(s.tool for s in run.steps if not s.ok) or "a check"
        out_console.print(f"[red]FAILED[/red] {run.sid} at {bad}: {run.error or 'tool failed'}")
    if not failed:
        out_console.print("[green]all steps succeeded[/green]")
    return 1 if failed else 0


def run_demo(settings: Settings, *, agents: int, workers: int, out: str) -> int:
    """Start site + fleet, run the agents, print the report; everything is stopped on the way out."""
    started = time.monotonic()
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        with serve_site() as url, local_fleet(
            settings.redis_url, workers, prefix=f"demo{os.getpid()}"
        ) as (redis_url, procs):
            if redis_url != settings.redis_url:
                err_console.print(f"[green]✓[/green] embedded redis-server at {redis_url}")
            start_workers(procs)
            ready_s = time.monotonic() - started
            with BrowserClient(settings.model_copy(update={"redis_url": redis_url})) as client:
                runs = run_agents(client, agents, url, out_dir)
            code = report(runs, procs, ready_s, time.monotonic() - started)
            err_console.print("stopping workers...")
        return code
    except (RuntimeError, TimeoutError, BrowserQError) as exc:
        err_console.print(f"[red]demo failed:[/red] {type(exc).__name__}: {exc}")
        return 1
