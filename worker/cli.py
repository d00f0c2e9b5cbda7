"""`browserq ...`: run workers and local fleets, call tools, run the demo."""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import threading
from typing import Any, Optional

import typer
from rich.console import Console

from client import BrowserClient, BrowserQError, InfrastructureError, InvalidInput, Settings

app = typer.Typer(
    name="browserq",
    help="Session-pinned Playwright browsers for AI agents, on Celery workers.",
    no_args_is_help=True,
    add_completion=False,
)
err = Console(stderr=True)


def _settings(**overrides: Any) -> Settings:
    try:
        return Settings(**{k: v for k, v in overrides.items() if v is not None})
    except ValueError as exc:
        err.print(f"[red]configuration error:[/red] {exc}")
        raise typer.Exit(2) from None


@app.command()
def worker(
    name: str = typer.Option("", help="Unique, stable worker name (default: <host>-<pid>)."),
    concurrency: Optional[int] = typer.Option(None, help="Tasks run at once (default 8)."),
    max_sessions: Optional[int] = typer.Option(None, help="Sessions held at once (default 50)."),
    loglevel: str = typer.Option("INFO", help="Celery log level."),
) -> None:
    """Run one worker process: one Chromium, many sessions."""
    from client.protocol import queue_name

    from .app import create_app
    from .runtime import Runtime

    settings = _settings(concurrency=concurrency, max_sessions=max_sessions)
    name = name or settings.worker_name or f"{socket.gethostname()}-{os.getpid()}"
    celery_app = create_app(Runtime(settings, name))
    celery_app.worker_main([
        "worker", "--pool", "threads", "--concurrency", str(settings.concurrency),
        "--queues", queue_name(name), "--hostname", f"{name}@%h",
        "--without-gossip", "--without-mingle", "--task-events", "--loglevel", loglevel,
    ])


@app.command()
def up(
    workers: int = typer.Option(2, "--workers", "-w", min=1, help="Worker processes to start."),
) -> None:
    """Run a local fleet in the foreground (embedded Redis if none is reachable); Ctrl-C stops it."""
    from .cluster import local_fleet

    settings = _settings()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with local_fleet(settings.redis_url, workers, prefix=f"up{os.getpid()}") as (url, procs):
        if url != settings.redis_url:
            err.print(f"[green]✓[/green] embedded redis-server at {url}")
        for proc in procs:
            proc.wait_ready(60)
            err.print(f"[green]✓[/green] worker {proc.name} (pid {proc.pid}) ready")
        err.print(f"browserq is up: export BROWSERQ_REDIS_URL={url}  — Ctrl-C stops everything")
        try:
            stop.wait()
        except KeyboardInterrupt:
            pass
        err.print("stopping workers and redis...")
    err.print("[green]✓[/green] stopped")


@app.command()
def call(
    tool: str = typer.Argument(..., help="Tool name, e.g. browser_navigate."),
    arguments: str = typer.Argument("{}", help="Tool arguments as a JSON object."),
    session: Optional[str] = typer.Option(None, "--session", "-s", help="Session id."),
) -> None:
    """Run one tool call and print its ToolResult as JSON (exit 0 ok, 1 tool error, 2 other)."""
    try:
        args = json.loads(arguments)
    except json.JSONDecodeError as exc:
        err.print(f"[red]arguments:[/red] not valid JSON: {exc}")
        raise typer.Exit(2) from None
    settings = _settings()
    try:
        with BrowserClient(settings, session=session or "cli") as client:
            result = client.call(tool, args, session=session or "cli")
    except (InvalidInput, InfrastructureError, BrowserQError) as exc:
        err.print(f"[red]{type(exc).__name__}:[/red] {exc}")
        raise typer.Exit(2) from None
    sys.stdout.write(result.model_dump_json(indent=2) + "\n")
    raise typer.Exit(0 if result.ok else 1)


@app.command()
def demo(
    agents: int = typer.Option(3, min=1, max=20, help="Concurrent agent sessions."),
    workers: int = typer.Option(2, min=1, max=8, help="Worker processes."),
    out: str = typer.Option("browserq-demo", help="Directory for the screenshots."),
) -> None:
    """Run a scripted multi-session agent flow against a bundled page on a local fleet."""
    from .demo import run_demo

    raise typer.Exit(run_demo(_settings(), agents=agents, workers=workers, out=out))


def main() -> None:
    app()
