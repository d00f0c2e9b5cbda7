"""The write side of the routing registry: this worker's heartbeat, replies and session records.

A heartbeat is a hash with a TTL; a worker that misses three beats is dead for routing, and its
sessions are claimed afresh by whoever calls next (`client.routing`).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import redis

from client.routing import CLOSE_SCRIPT, PREFIX, keys
from client.settings import Settings
from client.transport import REPLY_TTL, reply_key

__all__ = ["Registry"]

log = logging.getLogger(__name__)


class Registry:
    def __init__(self, settings: Settings, name: str, status: Callable[[], dict[str, Any]]) -> None:
        self.settings = settings
        self.name = name
        self.state = "starting"
        self.started = time.time()
        self._status = status
        self.redis = redis.Redis.from_url(settings.redis_url, socket_connect_timeout=5, socket_timeout=10)
        self._close_script = self.redis.register_script(CLOSE_SCRIPT)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="browserq-heartbeat", daemon=True)

    def start(self) -> None:
        self.state = "running"
        self.beat()
        self._thread.start()

    def beat(self) -> None:
        fields = {
            "name": self.name,
            "capacity": self.settings.max_sessions,
            "concurrency": self.settings.concurrency,
            "state": self.state,
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started": self.started,
            "beat": time.time(),
            **self._status(),
        }
        pipe = self.redis.pipeline()
        pipe.hset(keys.worker(self.name), mapping={k: str(v) for k, v in fields.items()})
        pipe.pexpire(keys.worker(self.name), int(self.settings.heartbeat_ttl * 1000))
        pipe.sadd(keys.workers, self.name)
        pipe.execute()

    def _run(self) -> None:
        while not self._stop.wait(self.settings.heartbeat_interval):
            try:
                self.beat()
            except redis.RedisError as exc:
                log.warning("heartbeat failed (%s); retrying", exc)

    def stopping(self) -> None:
        """Take no new sessions; existing ones keep routing here until we deregister."""
        self.state = "stopping"
        self._safe(self.beat)

    def deregister(self) -> None:
        self._stop.set()
        self._safe(lambda: self.redis.delete(keys.worker(self.name)))

    def forget_session(self, sid: str) -> None:
        self._safe(lambda: self._close_script(args=[PREFIX, sid]))

    def reply(self, task_id: str, body: str) -> None:
        pipe = self.redis.pipeline()
        pipe.lpush(reply_key(task_id), body)
        pipe.expire(reply_key(task_id), REPLY_TTL)
        pipe.execute()

    def _safe(self, action: Callable[[], Any]) -> None:
        try:
            action()
        except redis.RedisError as exc:
            log.warning("registry update failed: %s", exc)
