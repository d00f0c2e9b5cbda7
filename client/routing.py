"""Session → worker routing in Redis: the atomic claim, and the read side of the registry.

Keys (all under `bq:`):
    workers                 SET   every worker name ever registered
    worker:<name>           HASH  heartbeat (capacity, sessions, browser, pid, ...), expires
    worker:<name>:sessions  SET   sessions pinned to that worker (its load)
    session:<id>            HASH  worker, seq (last issued), base (first seq on that worker),
                                  created / used (ms: claimed / last routed, for `browserq status`)
    sessions                SET   every known session
    expired:<id>            STR   tombstone of a session closed for idleness (its next call is told)
    lastbeat                ZSET  worker -> last heartbeat time, for sweeping long-dead workers
    waiting / waiting:seen  ZSET  new sessions waiting for capacity: arrival / last poll (ms)

One Lua script routes a call: it keeps a session on its live worker, or claims the least-loaded
live worker for a new (or orphaned) session, and hands out the session's next sequence number,
all in one round trip so concurrent clients always agree.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from enum import Enum
from typing import Any

from pydantic import BaseModel

from .errors import NoCapacity, NoWorkers
from .protocol import queue_name

__all__ = [
    "PREFIX",
    "Route",
    "RouteStatus",
    "ROUTE_SCRIPT",
    "CLOSE_SCRIPT",
    "WorkerInfo",
    "SessionInfo",
    "keys",
    "no_capacity",
    "route_args",
    "parse_route",
    "parse_workers",
    "parse_sessions",
    "queue_keys",
    "sum_queue_depths",
]

PREFIX = "bq:"
# kombu's Redis transport keeps one list per priority step: "<queue>", "<queue>\x06\x163", ...
PRIORITY_SEP = "\x06\x16"
PRIORITY_STEPS = (3, 6, 9)


class keys:
    """Key names, in one place for the client, the worker and the tests."""

    workers = PREFIX + "workers"
    sessions = PREFIX + "sessions"
    waiting = PREFIX + "waiting"
    last_beat = PREFIX + "lastbeat"

    @staticmethod
    def expired(sid: str) -> str:
        return f"{PREFIX}expired:{sid}"

    @staticmethod
    def worker(name: str) -> str:
        return f"{PREFIX}worker:{name}"

    @staticmethod
    def worker_sessions(name: str) -> str:
        return f"{PREFIX}worker:{name}:sessions"

    @staticmethod
    def session(sid: str) -> str:
        return f"{PREFIX}session:{sid}"

    @staticmethod
    def checkpoint(sid: str) -> str:
        """Written by the session's worker; deleted with the session by CLOSE_SCRIPT."""
        return f"{PREFIX}checkpoint:{sid}"


ROUTE_SCRIPT = """
local p, sid, now, claim = ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4] == '1'
local skey = p .. 'session:' .. sid
local owner = redis.call('HGET', skey, 'worker')
if owner and redis.call('EXISTS', p .. 'worker:' .. owner) == 1 then
  local seq = redis.call('HINCRBY', skey, 'seq', 1)
  redis.call('HSET', skey, 'used', now)
  local boot = redis.call('HGET', p .. 'worker:' .. owner, 'boot') or ''
  return {owner, seq, tonumber(redis.call('HGET', skey, 'base')), 'pinned', boot}
end
if not claim then return {'', 0, 0, owner and 'orphaned' or 'unknown', ''} end

local wq, seen = p .. 'waiting', p .. 'waiting:seen'
for _, stale in ipairs(redis.call('ZRANGEBYSCORE', seen, '-inf', now - 3000)) do
  redis.call('ZREM', wq, stale); redis.call('ZREM', seen, stale)
end

local best, best_ratio, live, free = nil, 2, 0, 0
for _, name in ipairs(redis.call('SMEMBERS', p .. 'workers')) do
  local cap = tonumber(redis.call('HGET', p .. 'worker:' .. name, 'capacity'))
  if cap and redis.call('HGET', p .. 'worker:' .. name, 'state') ~= 'stopping' then
    live = live + 1
    local load = redis.call('SCARD', p .. 'worker:' .. name .. ':sessions')
    if load < cap then
      free = free + cap - load
      if load / cap < best_ratio then best, best_ratio = name, load / cap end
    end
  end
end
if live == 0 then return {'', 0, 0, 'no_workers', ''} end

local ahead = redis.call('ZRANK', wq, sid) or redis.call('ZCARD', wq)
if not best or free <= ahead then
  redis.call('ZADD', wq, 'NX', now, sid)
  redis.call('ZADD', seen, now, sid)
  return {'', 0, 0, 'no_capacity', ''}
end
redis.call('ZREM', wq, sid); redis.call('ZREM', seen, sid)
if owner then redis.call('SREM', p .. 'worker:' .. owner .. ':sessions', sid) end
redis.call('SADD', p .. 'worker:' .. best .. ':sessions', sid)
redis.call('SADD', p .. 'sessions', sid)
local seq = redis.call('HINCRBY', skey, 'seq', 1)
redis.call('HSET', skey, 'worker', best, 'base', seq, 'used', now)
redis.call('HSETNX', skey, 'created', now)
local status = owner and 'moved' or 'new'
if redis.call('DEL', p .. 'expired:' .. sid) == 1 and not owner then status = 'expired' end
return {best, seq, seq, status, redis.call('HGET', p .. 'worker:' .. best, 'boot') or ''}
"""

CLOSE_SCRIPT = """
local p, sid = ARGV[1], ARGV[2]
local skey = p .. 'session:' .. sid
local owner = redis.call('HGET', skey, 'worker')
if owner then redis.call('SREM', p .. 'worker:' .. owner .. ':sessions', sid) end
redis.call('DEL', skey, p .. 'checkpoint:' .. sid)
redis.call('SREM', p .. 'sessions', sid)
redis.call('ZREM', p .. 'waiting', sid)
redis.call('ZREM', p .. 'waiting:seen', sid)
return owner or ''
"""


class RouteStatus(str, Enum):
    pinned = "pinned"
    new = "new"
    moved = "moved"
    expired = "expired"
    unknown = "unknown"
    orphaned = "orphaned"
    no_workers = "no_workers"
    no_capacity = "no_capacity"


@dataclass(frozen=True)
class Route:
    worker: str
    seq: int
    base: int
    status: RouteStatus
    boot: str = ""


def route_args(session: str, claim: bool = True) -> list[Any]:
    return [PREFIX, session, int(time.time() * 1000), "1" if claim else "0"]


def parse_route(raw: list[Any], session: str) -> Route:
    """The script's reply as a Route; NoWorkers at once when nobody heartbeats."""
    worker, seq, base, status, boot = (_text(v) for v in raw)
    route = Route(worker, int(seq), int(base), RouteStatus(status), boot)
    if route.status is RouteStatus.no_workers:
        raise NoWorkers(
            "no live browserq worker: start one with `browserq worker` or `browserq up`",
            session=session,
        )
    return route


def no_capacity(session: str, waited: float) -> NoCapacity:
    return NoCapacity(
        f"every live worker is at its session capacity (waited {waited:.1f}s); "
        "close idle sessions, raise --max-sessions, or add workers",
        session=session,
    )


class WorkerInfo(BaseModel):
    name: str
    alive: bool
    capacity: int = 0
    concurrency: int = 0
    sessions: int = 0
    local_sessions: int | None = None
    warm_contexts: int = 0
    state: str = "unknown"
    browser: str = "unknown"
    browser_pid: int | None = None
    launches: int = 0
    crashes: int = 0
    pid: int | None = None
    host: str = ""
    started: float | None = None
    heartbeat_age: float | None = None


class SessionInfo(BaseModel):
    id: str
    worker: str
    worker_alive: bool
    seq: int = 0
    created: float | None = None
    last_used: float | None = None
    idle: float | None = None


def parse_workers(names: list[Any], beats: list[dict[Any, Any]], loads: list[int]) -> list[WorkerInfo]:
    now = time.time()
    out = []
    for name, beat, load in zip(names, beats, loads, strict=True):
        b = {_text(k): _text(v) for k, v in beat.items()}
        out.append(
            WorkerInfo(
                name=_text(name),
                alive=bool(b),
                capacity=int(b.get("capacity", 0)),
                concurrency=int(b.get("concurrency", 0)),
                sessions=load,
                local_sessions=int(b["local_sessions"]) if b.get("local_sessions") else None,
                warm_contexts=int(b.get("warm_contexts", 0)),
                state=b.get("state", "dead" if not b else "unknown"),
                browser=b.get("browser", "unknown"),
                browser_pid=int(b["browser_pid"]) if b.get("browser_pid") else None,
                launches=int(b.get("launches", 0)),
                crashes=int(b.get("crashes", 0)),
                pid=int(b["pid"]) if "pid" in b else None,
                host=b.get("host", ""),
                started=float(b["started"]) if "started" in b else None,
                heartbeat_age=round(now - float(b["beat"]), 3) if "beat" in b else None,
            )
        )
    return sorted(out, key=lambda w: w.name)


def parse_sessions(
    ids: list[Any], records: list[dict[Any, Any]], alive: set[str]
) -> list[SessionInfo]:
    now = time.time()
    out = []
    for sid, rec in zip(ids, records, strict=True):
        r = {_text(k): _text(v) for k, v in rec.items()}
        if not r:
            continue
        out.append(
            SessionInfo(
                id=_text(sid),
                worker=r.get("worker", ""),
                worker_alive=r.get("worker", "") in alive,
                seq=int(r.get("seq", 0)),
                created=float(r["created"]) / 1000 if "created" in r else None,
                last_used=(used := float(r["used"]) / 1000 if "used" in r else None),
                idle=round(max(0.0, now - used), 3) if used is not None else None,
            )
        )
    return sorted(out, key=lambda s: s.id)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def queue_keys(worker: str) -> list[str]:
    """The Redis lists holding a worker's queued messages (one per kombu priority step)."""
    base = queue_name(worker)
    return [base, *(f"{base}{PRIORITY_SEP}{step}" for step in PRIORITY_STEPS)]


def sum_queue_depths(names: list[Any], lengths: list[int]) -> dict[str, int]:
    """Per-worker queue depth from LLEN replies laid out as `queue_keys` order, worker by worker."""
    per = len(PRIORITY_STEPS) + 1
    return {_text(name): sum(lengths[i * per:(i + 1) * per]) for i, name in enumerate(names)}
