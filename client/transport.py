"""Celery's configuration (shared by client and worker) and how results travel back.

Results are stored by Celery's Redis result backend as usual (for `celery result`, Flower and
operators), and the worker also pushes each result onto a per-task reply list. Clients block on
that list (BLPOP): it works the same from threads and from asyncio, and holds no shared
subscription the way Celery's result consumer does.
"""

from __future__ import annotations

from typing import Any

from celery import Celery

from .settings import Settings

__all__ = ["celery_config", "make_celery", "reply_key", "REPLY_TTL", "VISIBILITY_TIMEOUT"]

REPLY_TTL = 300
VISIBILITY_TIMEOUT = 6 * 3600


def reply_key(task_id: str) -> str:
    return f"bq:reply:{task_id}"


def celery_config(settings: Settings) -> dict[str, Any]:
    transport = {"visibility_timeout": VISIBILITY_TIMEOUT}
    return {
        "broker_url": settings.redis_url,
        "result_backend": settings.redis_url,
        "task_serializer": "json",
        "result_serializer": "json",
        "accept_content": ["json"],
        "result_accept_content": ["json"],
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        "result_expires": 600,
        "broker_transport_options": transport,
        "result_backend_transport_options": transport,
        "broker_connection_retry_on_startup": True,
        "task_default_queue": "browserq.default",
        "worker_send_task_events": True,
        "task_send_sent_event": True,
        "worker_hijack_root_logger": False,
        "enable_utc": True,
    }


def make_celery(settings: Settings, main: str = "browserq") -> Celery:
    app = Celery(main, set_as_current=False)
    app.conf.update(celery_config(settings))
    return app
