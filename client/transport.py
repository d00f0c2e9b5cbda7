"""Celery's configuration (shared by client and worker) and how results travel back.

Results are stored by Celery's Redis result backend as usual (for `celery result`, Flower and
operators), and the worker also pushes each result onto a per-task reply list. Clients block on
that list (BLPOP): it works the same from threads and from asyncio, and holds no shared
subscription the way Celery's result consumer does. So the clients' own Celery app has no result
backend at all (`make_celery(..., results=False)`).
"""

from __future__ import annotations

import ssl
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from celery import Celery

from .settings import Settings

__all__ = ["celery_config", "make_celery", "redis_tls", "reply_key", "REPLY_TTL", "VISIBILITY_TIMEOUT"]

REPLY_TTL = 300
VISIBILITY_TIMEOUT = 6 * 3600


def reply_key(task_id: str) -> str:
    return f"bq:reply:{task_id}"


_CERT_REQS = {"none": ssl.CERT_NONE, "optional": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}
_TLS_FILES = ("ssl_ca_certs", "ssl_certfile", "ssl_keyfile")


def redis_tls(url: str) -> dict[str, Any] | None:
    """kombu's and Celery's TLS options for a `rediss://` URL (None for any other URL).

    redis-py, which our own connections use, reads `ssl_cert_reqs`, `ssl_ca_certs`, `ssl_certfile`
    and `ssl_keyfile` from the URL and verifies the server by default. Left alone, kombu's broker
    would skip verification for a `rediss://` URL without `ssl_cert_reqs` (with a warning) and
    Celery's result backend would refuse it; given these options, every connection of a client or
    a worker verifies the same way."""
    parts = urlsplit(url)
    if parts.scheme != "rediss":
        return None
    query = dict(parse_qsl(parts.query))
    tls: dict[str, Any] = {k: query[k] for k in _TLS_FILES if query.get(k)}
    reqs = query.get("ssl_cert_reqs", "required").lower().removeprefix("cert_")
    tls["ssl_cert_reqs"] = _CERT_REQS.get(reqs, ssl.CERT_REQUIRED)
    return tls


def celery_config(settings: Settings) -> dict[str, Any]:
    transport = {"visibility_timeout": VISIBILITY_TIMEOUT}
    config: dict[str, Any] = {
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
        "task_send_sent_event": False,  # one Redis publish fewer per call; Flower sees tasks from "received" on
        "worker_hijack_root_logger": False,
        "enable_utc": True,
    }
    tls = redis_tls(settings.redis_url)
    if tls is not None:
        config.update(broker_use_ssl=tls, redis_backend_use_ssl=tls)
    return config


def make_celery(settings: Settings, main: str = "browserq", *, results: bool = True) -> Celery:
    """`results=False` for the clients: they read replies from their lists, and given a result
    backend Celery would subscribe to each task's result channel at send and unsubscribe when the
    AsyncResult is dropped, two Redis round trips per call for nothing."""
    app = Celery(main, set_as_current=False)
    app.conf.update(celery_config(settings))
    if not results:
        app.conf.result_backend = None
    return app
