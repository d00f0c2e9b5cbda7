"""`browserq ...`: run workers and local fleets, call tools, run the demo."""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import threading
from pathlib import Path
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
    flower: bool = typer.Option(False, "--flower", help="Also run Flower on 127.0.0.1 (see README: Monitoring)."),
    flower_port: int = typer.Option(5555, help="Flower's port (with --flower)."),
) -> None:
    """Run a local fleet in the foreground (embedded Redis if none is reachable); Ctrl-C stops it."""
    from .cluster import flower_process, local_fleet

    settings = _settings()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with local_fleet(settings.redis_url, workers, prefix=f"up{os.getpid()}") as (url, procs), \
            flower_process(url, flower_port if flower else None) as flower_proc:
        if url != settings.redis_url:
            err.print(f"[green]✓[/green] embedded redis-server at {url}")
        for proc in procs:
            proc.wait_ready(60)
            err.print(f"[green]✓[/green] worker {proc.name} (pid {proc.pid}) ready")
        if flower_proc is not None:
            flower_proc.wait_ready(60)
            auth = "basic auth" if "FLOWER_UNAUTHENTICATED_API" not in flower_proc.env else "no auth, loopback only"
            err.print(f"[green]✓[/green] flower at {flower_proc.url} ({auth})")
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


@app.command()
def init(
    path: Path = typer.Option(Path("browserq.toml"), "--path", help="The config file to write."),
) -> None:
    """Interactive setup: Redis URL and browser options, written to browserq.toml."""
    from .wizard import run_wizard

    raise typer.Exit(run_wizard(path, Console()))


@app.command()
def status(
    as_json: bool = typer.Option(False, "--json", help="Print the snapshot as JSON."),
    healthcheck: bool = typer.Option(
        False, "--healthcheck",
        help="Print nothing; exit 0 only if a live worker on this host heartbeats (Docker HEALTHCHECK).",
    ),
    limit: int = typer.Option(50, min=1, help="Sessions listed in the table."),
) -> None:
    """Workers (heartbeat, sessions/capacity, browser, crashes, uptime), sessions and queue depths."""
    from .status import collect, healthy, render

    try:
        with BrowserClient(_settings()) as client:
            snapshot = collect(client)
    except BrowserQError as exc:
        err.print(f"[red]{type(exc).__name__}:[/red] {exc}")
        raise typer.Exit(2) from None
    if healthcheck:
        raise typer.Exit(0 if healthy(snapshot) else 1)
    if as_json:
        sys.stdout.write(json.dumps(snapshot, indent=2) + "\n")
    else:
        render(snapshot, Console(), limit)


def main() -> None:
    app()
