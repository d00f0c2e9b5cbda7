"""The write side of the routing registry: heartbeat, replies, session ownership and sweeps.

A heartbeat is a hash with a TTL and a boot id; a worker that misses three beats is dead for
routing, and a worker that comes back under the same name is a new incarnation (new boot id)
that first lets go of everything the old one held. Clients compare boot ids to notice a loss.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import redis
import redis.asyncio as aioredis
from kombu import Connection

from client.protocol import queue_name
from client.routing import CLOSE_SCRIPT, PREFIX, keys
from client.settings import Settings
from client.transport import REPLY_TTL, redis_tls, reply_key

__all__ = ["Registry", "RELEASE_SCRIPT", "DEAD_AFTER"]

log = logging.getLogger(__name__)

DEAD_AFTER = 30.0
EXPIRED_TTL = 24 * 3600

# Orphan the sessions still pinned to a worker, so their next call claims a live worker afresh.
RELEASE_SCRIPT = """
local p, name = ARGV[1], ARGV[2]
local set = p .. 'worker:' .. name .. ':sessions'
for _, sid in ipairs(redis.call('SMEMBERS', set)) do
  if redis.call('HGET', p .. 'session:' .. sid, 'worker') == name then
    redis.call('HDEL', p .. 'session:' .. sid, 'worker')
  end
end
redis.call('DEL', set)
return 1
"""


class Registry:
    def __init__(self, settings: Settings, name: str, status: Callable[[], dict[str, Any]]) -> None:
        self.settings = settings
        self.name = name
        self.boot = uuid.uuid4().hex[:12]
        self.state = "starting"
        self.started = time.time()
        self._status = status
        self.redis = redis.Redis.from_url(settings.redis_url, socket_connect_timeout=5, socket_timeout=10)
        self.aredis = aioredis.Redis.from_url(settings.redis_url, socket_connect_timeout=5)
        self._aclose_script = self.aredis.register_script(CLOSE_SCRIPT)
        self._release_script = self.redis.register_script(RELEASE_SCRIPT)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="browserq-heartbeat", daemon=True)

    # --- lifecycle (Celery threads) ---

    def adopt_name(self) -> None:
        """A new incarnation: sessions pinned to this name lost their browser, and messages
        queued for the previous incarnation were either retried elsewhere or are stale."""
        self._release(self.name)
        dropped = self._purge(self.name)
        if dropped:
            log.warning("dropped %d message(s) queued for a previous worker named %s", dropped, self.name)
        self.sweep()

    def start(self) -> None:
        self.state = "running"
        self.beat()
        self._thread.start()

    def beat(self) -> None:
        fields = {
            "name": self.name,
            "boot": self.boot,
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
        pipe.zadd(keys.last_beat, {self.name: time.time()})
        pipe.execute()

    def _run(self) -> None:
        sweep_every = max(1, int(DEAD_AFTER / self.settings.heartbeat_interval))
        beats = 0
        while not self._stop.wait(self.settings.heartbeat_interval):
            beats += 1
            try:
                self.beat()
                if beats % sweep_every == 0:
                    self.sweep()
            except redis.RedisError as exc:
                log.warning("heartbeat failed (%s); retrying", exc)

    def stopping(self) -> None:
        """Take no new sessions; existing ones keep routing here until `release`."""
        self.state = "stopping"
        self._safe(self.beat)

    def release(self) -> None:
        """Leave: sessions move on their next call (rebuilt from their Redis checkpoints)."""
        self._stop.set()
        self._safe(lambda: self._release(self.name))
        self._safe(lambda: self.redis.delete(keys.worker(self.name)))

    def sweep(self) -> None:
        """Forget workers dead for a while: orphan their sessions, drop their queues."""
        cutoff = time.time() - DEAD_AFTER
        for raw in self.redis.zrangebyscore(keys.last_beat, "-inf", cutoff):
            name = raw.decode()
            if name == self.name or self.redis.exists(keys.worker(name)):
                continue
            self._release(name)
            self._purge(name)
            self.redis.srem(keys.workers, name)
            self.redis.zrem(keys.last_beat, name)
            log.info("swept dead worker %s", name)

    # --- replies (Celery threads) ---

    def reply(self, task_id: str, body: str) -> None:
        pipe = self.redis.pipeline()
        pipe.lpush(reply_key(task_id), body)
        pipe.expire(reply_key(task_id), REPLY_TTL)
        pipe.execute()

    # --- session records (browser loop) ---

    async def owner(self, sid: str) -> tuple[str | None, int]:
        worker, base = await self.aredis.hmget(keys.session(sid), ["worker", "base"])
        return (worker.decode() if worker else None), int(base or 0)

    async def forget(self, sid: str) -> None:
        await self._aclose_script(args=[PREFIX, sid])

    async def expire(self, sid: str) -> None:
        """Forget an idle session, leaving a tombstone so its next call is told it is fresh."""
        await self._aclose_script(args=[PREFIX, sid])
        await self.aredis.set(keys.expired(sid), "1", ex=EXPIRED_TTL)

    # --- helpers ---

    def _release(self, name: str) -> None:
        self._release_script(args=[PREFIX, name])

    def _purge(self, name: str) -> int:
        url = self.settings.redis_url
        with Connection(url, ssl=redis_tls(url) or False) as conn:
            return conn.default_channel.queue_purge(queue_name(name)) or 0

    def _safe(self, action: Callable[[], Any]) -> None:
        try:
            action()
        except redis.RedisError as exc:
            log.warning("registry update failed: %s", exc)
