"""The Celery app a worker runs, wired to its Runtime through Celery's lifecycle signals."""

from __future__ import annotations

import logging

from celery import Celery, signals

from client.transport import make_celery

from .runtime import Runtime
from .tasks import register_tasks

__all__ = ["create_app"]

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
