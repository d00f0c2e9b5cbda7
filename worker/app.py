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
    """`worker_main`, returning the worker's exit status. Celery's own drops it, so a worker that
    stopped on an unrecoverable error (say, an ACL user without BRPOP) exited 0, and supervisors
    (`restart: on-failure`, systemd) took that for a clean stop."""
    controllers: list[Any] = []

    def _seen(sender: Any, **_: object) -> None:
        controllers.append(sender)

    signals.worker_init.connect(_seen, weak=False)
    try:
        app.worker_main(argv)
    finally:
        signals.worker_init.disconnect(_seen)
    return (controllers[-1].exitcode or 0) if controllers else 1
