"""`browserq status`: what the fleet looks like right now, read from Redis through the client.

Everything shown comes from `BrowserClient.workers()`, `.sessions()` and `.queue_depths()`: the
heartbeats, the routing records and the queues, the same data the router decides with. Nothing here
talks to a worker process, so a wedged or dead worker shows up as what it is (an old heartbeat, a
dead state, a queue that keeps growing) instead of making the command hang.
"""

from __future__ import annotations

import socket
import time
from typing import Any

from rich.console import Console
from rich.table import Table

from client import BrowserClient

__all__ = ["collect", "render", "healthy"]


def collect(client: BrowserClient) -> dict[str, Any]:
    """One snapshot of workers, sessions and queue depths as plain JSON-ready data."""
    return {
        "time": time.time(),
        "workers": [w.model_dump() for w in client.workers()],
        "sessions": [s.model_dump() for s in client.sessions()],
        "queues": client.queue_depths(),
    }


def healthy(snapshot: dict[str, Any], host: str | None = None) -> bool:
    """A live worker on this host heartbeats (what a container's HEALTHCHECK should mean: the
    container's own worker is up and beating, not merely that Redis answers)."""
    host = host or socket.gethostname()
    return any(w["alive"] and w["host"] == host and w["state"] == "running" for w in snapshot["workers"])


def render(snapshot: dict[str, Any], console: Console, limit: int = 50) -> None:
    console.print(_workers_table(snapshot))
    console.print(_sessions_table(snapshot, limit))


def _workers_table(snapshot: dict[str, Any]) -> Table:
    now = snapshot["time"]
    table = Table(title=f"workers ({sum(w['alive'] for w in snapshot['workers'])} alive)", title_justify="left")
    for col in ("worker", "state", "heartbeat", "sessions", "browser", "crashes", "uptime", "queued", "host/pid"):
        table.add_column(col, justify="right" if col in ("heartbeat", "crashes", "uptime", "queued") else "left")
    for w in snapshot["workers"]:
        table.add_row(
            w["name"],
            _state(w),
            _age(w["heartbeat_age"]),
            f"{w['sessions']}/{w['capacity']}" if w["alive"] else str(w["sessions"]),
            f"{w['browser']}" + (f" (pid {w['browser_pid']})" if w["browser_pid"] else ""),
            str(w["crashes"]),
            _age(now - w["started"]) if w["alive"] and w["started"] else "-",
            str(snapshot["queues"].get(w["name"], 0)),
            f"{w['host']}/{w['pid']}" if w["pid"] else "-",
        )
    return table


def _sessions_table(snapshot: dict[str, Any], limit: int) -> Table:
    sessions = snapshot["sessions"]
    shown = sessions[:limit]
    more = f", first {limit} shown" if len(sessions) > limit else ""
    table = Table(title=f"sessions ({len(sessions)}{more})", title_justify="left")
    for col in ("session", "worker", "idle", "calls", "age"):
        table.add_column(col, justify="left" if col in ("session", "worker") else "right")
    for s in shown:
        worker = s["worker"] or "-"
        table.add_row(
            s["id"],
            worker if s["worker_alive"] else f"[red]{worker} (dead)[/red]",
            _age(s["idle"]),
            str(s["seq"]),
            _age(snapshot["time"] - s["created"]) if s["created"] else "-",
        )
    return table


def _state(w: dict[str, Any]) -> str:
    if not w["alive"]:
        return "[red]dead[/red]"
    return w["state"] if w["state"] == "running" else f"[yellow]{w['state']}[/yellow]"


def _age(seconds: float | None) -> str:
    """Compact age for a table cell: 0.4s, 12s, 5m03s, 2h10m."""
    if seconds is None:
        return "-"
    if seconds < 10:
        return f"{seconds:.1f}s"
    whole = int(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"
