"""The Celery app a worker runs, wired to its Runtime through Celery's lifecycle signals."""

from __future__ import annotations

import logging
from typing import Any

from celery import Celery, signals

from client.transport import make_celery

from .runtime import Runtime
from .tasks import register_tasks

__all__ = ["create_app", "run_worker"]

log = logging.getLogger(__name__)


def create_app(runtime: Runtime) -> Celery:
    app = make_celery(runtime.settings)
    register_tasks(app, runtime)

    @signals.worker_init.connect(weak=False)
    def _init(**_: object) -> None:
        runtime.prepare()

    @signals.worker_ready.connect(weak=False)
    def _ready(**_: object) -> None:
        runtime.start()

    @signals.worker_shutting_down.connect(weak=False)
    def _stopping(**_: object) -> None:
        runtime.registry.stopping()

    @signals.worker_shutdown.connect(weak=False)
    def _shutdown(**_: object) -> None:
        runtime.stop()

    return app


def run_worker(app: Celery, argv: list[str]) -> int:
    """`worker_main`, returning an exit status a supervisor can act on. Celery's own drops it, so a
    worker that stopped on an unrecoverable error (say, an ACL user without BRPOP) exited 0, which
    `restart: on-failure` or systemd take for a clean stop. A stop someone asked for (SIGTERM,
    Ctrl-C) drains the running tasks and is a clean stop: 0, where Celery says 1 for Ctrl-C."""
    seen: dict[str, Any] = {}

    def _init(sender: Any, **_: object) -> None:
        seen["worker"] = sender

    def _asked(**_: object) -> None:
        seen["asked"] = True

    signals.worker_init.connect(_init, weak=False)
    signals.worker_shutting_down.connect(_asked, weak=False)
    try:
        app.worker_main(argv)
    finally:
        signals.worker_init.disconnect(_init)
        signals.worker_shutting_down.disconnect(_asked)
    if seen.get("asked"):
        return 0
    return (seen["worker"].exitcode or 0) if "worker" in seen else 1
