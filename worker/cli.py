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

    from .app import create_app, run_worker
    from .runtime import Runtime

    settings = _settings(concurrency=concurrency, max_sessions=max_sessions)
    name = name or settings.worker_name or f"{socket.gethostname()}-{os.getpid()}"
    celery_app = create_app(Runtime(settings, name))
    code = run_worker(celery_app, [
        "worker", "--pool", "threads", "--concurrency", str(settings.concurrency),
        "--queues", queue_name(name), "--hostname", f"{name}@%h",
        "--without-gossip", "--without-mingle", "--task-events", "--loglevel", loglevel,
    ])
    raise typer.Exit(code)


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


def _caps_option(caps: Optional[str], settings: Settings) -> set[str]:
    """--caps as a set; without it, the configured caps (BROWSERQ_CAPS) count as asking."""
    chosen = settings.caps if caps is None else [c.strip() for c in caps.split(",") if c.strip()]
    unknown = set(chosen) - {"vision", "pdf"}
    if unknown:
        err.print(f"[red]--caps:[/red] unknown capability {', '.join(sorted(unknown))}; known: vision, pdf")
        raise typer.Exit(2)
    return set(chosen)


def _dialect_option(dialect: str) -> str:
    from client.tools.catalogue import DIALECTS

    if dialect not in DIALECTS:
        err.print(f"[red]--dialect:[/red] unknown dialect {dialect!r}; known: {', '.join(DIALECTS)}")
        raise typer.Exit(2)
    return dialect


@app.command()
def tools(
    format: str = typer.Option("openai", "--format", "-f", help="openai, anthropic or mcp."),
    caps: Optional[str] = typer.Option(None, help="Capabilities to include, e.g. vision,pdf (default: BROWSERQ_CAPS)."),
    dialect: str = typer.Option("full", help="full, go-rod or single."),
) -> None:
    """Print the tool definitions for a model API as JSON (generated from the tool models)."""
    from client.agents import FORMATS, tool_definitions

    if format not in FORMATS:
        err.print(f"[red]--format:[/red] unknown format {format!r}; known: {', '.join(FORMATS)}")
        raise typer.Exit(2)
    defs = tool_definitions(format, _caps_option(caps, _settings()), _dialect_option(dialect))  # type: ignore[arg-type]
    sys.stdout.write(json.dumps(defs, indent=2) + "\n")


@app.command()
def mcp(
    transport: str = typer.Option("stdio", help="stdio (one client, this process) or http (streamable HTTP)."),
    port: int = typer.Option(8931, help="HTTP port (with --transport http)."),
    host: str = typer.Option("127.0.0.1", help="HTTP bind address; anything but loopback exposes the browser."),
    caps: Optional[str] = typer.Option(None, help="Capability tools to expose, e.g. vision,pdf (default: BROWSERQ_CAPS)."),
    dialect: str = typer.Option("full", help="full, go-rod or single."),
    keep_alive: str = typer.Option("0", help="Keep a connection's browser session this long after it ends (e.g. 30s)."),
    idle_timeout: str = typer.Option("30m", help="HTTP: end an MCP session with no request for this long."),
) -> None:
    """An MCP server whose tools enqueue into browserq; each MCP connection gets its own session."""
    import anyio

    from client.mcp_server import BrowserqMCP, run_http, run_stdio
    from client.settings import parse_duration

    if transport not in ("stdio", "http"):
        err.print(f"[red]--transport:[/red] expected stdio or http, got {transport!r}")
        raise typer.Exit(2)
    try:
        linger, idle = parse_duration(keep_alive), parse_duration(idle_timeout)
    except ValueError as exc:
        err.print(f"[red]duration:[/red] {exc}")
        raise typer.Exit(2) from None
    settings = _settings()
    server = BrowserqMCP(settings, _caps_option(caps, settings), _dialect_option(dialect), linger)
    if transport == "stdio":
        anyio.run(run_stdio, server)
        return
    err.print(f"browserq mcp: streamable HTTP on http://{host}:{port}/mcp")
    anyio.run(run_http, server, host, port, idle)


def main() -> None:
    app()
