"""The routing and close scripts against an in-process fakeredis (Lua via lupa): no server, no browser.

Workers are simulated by writing heartbeat hashes exactly as `worker.registry.Registry.beat` does.
"""

from __future__ import annotations

import time

import fakeredis
import pytest

from client._base import BaseClient
from client.errors import NoCapacity, NoWorkers
from client.routing import (
    CLOSE_SCRIPT,
    PREFIX,
    ROUTE_SCRIPT,
    Route,
    RouteStatus,
    keys,
    parse_route,
    route_args,
)
from client.settings import Settings

WAITING_SEEN = PREFIX + "waiting:seen"


@pytest.fixture
def r() -> fakeredis.FakeRedis:
    return fakeredis.FakeRedis()


def beat(r: fakeredis.FakeRedis, name: str, capacity: int, state: str = "running", ttl_ms: int = 30_000) -> None:
    """One heartbeat, written the way worker/registry.py writes it."""
    now = time.time()
    fields = {
        "name": name,
        "capacity": capacity,
        "concurrency": 8,
        "state": state,
        "pid": 4242,
        "host": "testhost",
        "started": now,
        "beat": now,
        "sessions": 0,
        "browser": "connected",
    }
    pipe = r.pipeline()
    pipe.hset(keys.worker(name), mapping={k: str(v) for k, v in fields.items()})
    pipe.pexpire(keys.worker(name), ttl_ms)
    pipe.sadd(keys.workers, name)
    pipe.execute()


def route(r: fakeredis.FakeRedis, sid: str, claim: bool = True) -> Route:
    """Exactly what the client does: the registered script with route_args, then parse_route."""
    raw = r.register_script(ROUTE_SCRIPT)(args=route_args(sid, claim))
    return parse_route(raw, sid)


def close(r: fakeredis.FakeRedis, sid: str) -> str:
    out = r.register_script(CLOSE_SCRIPT)(args=[PREFIX, sid])
    return out.decode() if isinstance(out, bytes) else str(out)


def members(r: fakeredis.FakeRedis, key: str) -> set[str]:
    return {m.decode() for m in r.smembers(key)}


def load(r: fakeredis.FakeRedis, name: str) -> int:
    return r.scard(keys.worker_sessions(name))


def preload(r: fakeredis.FakeRedis, name: str, n: int) -> None:
    """Pretend `n` other sessions are already pinned to a worker."""
    if n:
        r.sadd(keys.worker_sessions(name), *[f"pre-{name}-{i}" for i in range(n)])


def waiting(r: fakeredis.FakeRedis) -> list[str]:
    return [m.decode() for m in r.zrange(keys.waiting, 0, -1)]


# --- no workers ---------------------------------------------------------------------------------


def test_no_heartbeat_raises_no_workers(r):
    with pytest.raises(NoWorkers) as info:
        route(r, "conv-1")
    assert info.value.session == "conv-1"
    # Nothing was claimed or queued for a session nobody can serve.
    assert not r.exists(keys.session("conv-1"))
    assert members(r, keys.sessions) == set()
    assert waiting(r) == []


def test_worker_whose_heartbeat_expired_is_not_live(r):
    beat(r, "w-a", capacity=5, ttl_ms=30)
    assert route(r, "early").worker == "w-a"  # alive while the beat is fresh
    time.sleep(0.1)
    assert not r.exists(keys.worker("w-a"))
    assert "w-a" in members(r, keys.workers)  # still registered, but dead
    with pytest.raises(NoWorkers):
        route(r, "late")
    assert not r.exists(keys.session("late"))


def test_worker_whose_heartbeat_was_deleted_is_not_live(r):
    beat(r, "w-a", capacity=5)
    r.delete(keys.worker("w-a"))  # what Registry.deregister does
    with pytest.raises(NoWorkers):
        route(r, "conv-1")


# --- claiming -----------------------------------------------------------------------------------


def test_new_session_record(r):
    beat(r, "w-a", capacity=5)
    got = route(r, "conv-1")
    assert got == Route("w-a", 1, 1, RouteStatus.new)
    rec = {k.decode(): v.decode() for k, v in r.hgetall(keys.session("conv-1")).items()}
    assert rec["worker"] == "w-a"
    assert rec["seq"] == "1"
    assert rec["base"] == "1"
    assert abs(int(rec["created"]) / 1000 - time.time()) < 5
    assert members(r, keys.sessions) == {"conv-1"}
    assert members(r, keys.worker_sessions("w-a")) == {"conv-1"}


def test_new_session_goes_to_least_loaded_relative_to_capacity(r):
    beat(r, "small", capacity=2)
    beat(r, "big", capacity=10)
    # small: 1/2 = 0.5, big: 4/10 = 0.4 -> big, although big holds more sessions in absolute terms.
    preload(r, "small", 1)
    preload(r, "big", 4)
    assert route(r, "s1").worker == "big"
    # big: 6/10 = 0.6, small: 0.5 -> small, although small is the smaller worker.
    r.sadd(keys.worker_sessions("big"), "pre-big-extra")
    assert load(r, "big") == 6
    assert route(r, "s3").worker == "small"
    # small is now full (2/2): everything else goes to big until it fills up too.
    for i in range(4):
        assert route(r, f"t{i}").worker == "big"
    assert (load(r, "small"), load(r, "big")) == (2, 10)
    assert route(r, "overflow").status is RouteStatus.no_capacity


def test_empty_workers_fill_proportionally_to_capacity(r):
    beat(r, "small", capacity=2)
    beat(r, "big", capacity=10)
    routed = [route(r, f"s{i}").worker for i in range(6)]
    # After 6 sessions the ratios must stay balanced: small never gets ahead of big.
    assert routed.count("small") == 1
    assert routed.count("big") == 5


def test_pinned_session_keeps_worker_and_counts_seq(r):
    beat(r, "w-a", capacity=10)
    first = route(r, "conv-1")
    assert (first.status, first.seq, first.base) == (RouteStatus.new, 1, 1)
    # A new, completely empty worker appears: the session must not move.
    beat(r, "w-b", capacity=10)
    second = route(r, "conv-1")
    third = route(r, "conv-1")
    assert second == Route("w-a", 2, 1, RouteStatus.pinned)
    assert third == Route("w-a", 3, 1, RouteStatus.pinned)
    assert members(r, keys.worker_sessions("w-a")) == {"conv-1"}
    assert load(r, "w-b") == 0


def test_claims_spread_evenly_over_equal_workers(r):
    beat(r, "w-a", capacity=10)
    beat(r, "w-b", capacity=10)
    got = [route(r, f"conv-{i}") for i in range(10)]
    assert all(g.status is RouteStatus.new and g.seq == 1 and g.base == 1 for g in got)
    assert (load(r, "w-a"), load(r, "w-b")) == (5, 5)
    assert len(members(r, keys.sessions)) == 10


def test_stopping_worker_takes_no_new_sessions_but_keeps_its_own(r):
    beat(r, "w-a", capacity=10)
    assert route(r, "old").worker == "w-a"
    beat(r, "w-a", capacity=10, state="stopping")  # Registry.stopping()
    beat(r, "w-b", capacity=10)
    preload(r, "w-b", 8)  # w-b is far busier (0.8 vs 0.1): still the only one taking new sessions
    for i in range(2):
        assert route(r, f"new-{i}").worker == "w-b"
    assert members(r, keys.worker_sessions("w-a")) == {"old"}
    pinned = route(r, "old")
    assert pinned == Route("w-a", 2, 1, RouteStatus.pinned)


# --- capacity and fairness ----------------------------------------------------------------------


def test_full_fleet_answers_no_capacity_and_queues_the_session(r):
    beat(r, "w-a", capacity=1)
    beat(r, "w-b", capacity=1)
    route(r, "s1")
    route(r, "s2")
    got = route(r, "s3")
    assert got.status is RouteStatus.no_capacity
    assert (got.worker, got.seq) == ("", 0)
    assert r.zscore(keys.waiting, "s3") is not None
    assert r.zscore(WAITING_SEEN, "s3") is not None
    # Waiting is not owning: no record, no seq handed out, no load taken.
    assert not r.exists(keys.session("s3"))
    assert "s3" not in members(r, keys.sessions)
    assert (load(r, "w-a"), load(r, "w-b")) == (1, 1)


def test_waiting_keeps_its_first_arrival_time(r):
    beat(r, "w-a", capacity=1)
    route(r, "s1")
    route(r, "s2")
    first = r.zscore(keys.waiting, "s2")
    time.sleep(0.01)
    route(r, "s2")
    assert r.zscore(keys.waiting, "s2") == first  # ZADD NX: the place in line is kept
    assert r.zscore(WAITING_SEEN, "s2") > first  # but the last poll is refreshed


@pytest.mark.parametrize("free_by", ["srem", "close"])
def test_earliest_waiter_gets_the_freed_slot(r, free_by):
    beat(r, "w-a", capacity=1)
    assert route(r, "holder").status is RouteStatus.new
    assert route(r, "early").status is RouteStatus.no_capacity
    time.sleep(0.005)
    assert route(r, "late").status is RouteStatus.no_capacity
    assert waiting(r) == ["early", "late"]

    if free_by == "srem":
        r.srem(keys.worker_sessions("w-a"), "holder")
    else:
        assert close(r, "holder") == "w-a"
    assert load(r, "w-a") == 0

    # The later waiter polls first, but the slot is the earlier waiter's.
    assert route(r, "late").status is RouteStatus.no_capacity
    # So is a brand-new session that never waited.
    assert route(r, "newcomer").status is RouteStatus.no_capacity
    got = route(r, "early")
    assert got == Route("w-a", 1, 1, RouteStatus.new)
    assert "early" not in waiting(r)
    assert r.zscore(WAITING_SEEN, "early") is None
    assert route(r, "late").status is RouteStatus.no_capacity  # full again


def test_waiter_that_stopped_polling_loses_its_place(r):
    beat(r, "w-a", capacity=1)
    # A client that queued 10 s ago and gave up (its last poll is older than 3 s).
    old = int(time.time() * 1000) - 10_000
    r.zadd(keys.waiting, {"gone": old})
    r.zadd(WAITING_SEEN, {"gone": old})
    got = route(r, "fresh")
    assert got.status is RouteStatus.new
    assert waiting(r) == []
    assert r.zscore(WAITING_SEEN, "gone") is None


def test_two_free_slots_serve_two_waiters_and_a_newcomer_waits(r):
    beat(r, "w-a", capacity=2)
    route(r, "h1")
    route(r, "h2")
    route(r, "q1")
    time.sleep(0.005)
    route(r, "q2")
    close(r, "h1")
    close(r, "h2")
    # Two free slots, two waiters ahead: the second waiter may go before the first (enough room),
    # but a newcomer may not take a slot while both still wait.
    assert route(r, "newcomer").status is RouteStatus.no_capacity
    assert route(r, "q2").status is RouteStatus.new
    assert route(r, "q1").status is RouteStatus.new


# --- dead workers -------------------------------------------------------------------------------


def test_session_on_dead_worker_moves_to_live_one(r):
    beat(r, "w-a", capacity=10)
    assert route(r, "conv-1").worker == "w-a"
    assert route(r, "conv-1").seq == 2
    beat(r, "w-b", capacity=10)
    r.delete(keys.worker("w-a"))  # w-a died: its heartbeat is gone

    moved = route(r, "conv-1")
    assert moved == Route("w-b", 3, 3, RouteStatus.moved)
    assert "conv-1" not in members(r, keys.worker_sessions("w-a"))
    assert members(r, keys.worker_sessions("w-b")) == {"conv-1"}
    assert r.hget(keys.session("conv-1"), "worker") == b"w-b"

    after = route(r, "conv-1")
    assert after == Route("w-b", 4, 3, RouteStatus.pinned)


def test_orphaned_session_without_claim_is_left_alone(r):
    beat(r, "w-a", capacity=10)
    route(r, "conv-1")
    beat(r, "w-b", capacity=10)
    r.delete(keys.worker("w-a"))
    before = r.hgetall(keys.session("conv-1"))
    got = route(r, "conv-1", claim=False)
    assert got.status is RouteStatus.orphaned
    assert (got.worker, got.seq, got.base) == ("", 0, 0)
    assert r.hgetall(keys.session("conv-1")) == before
    assert load(r, "w-b") == 0


def test_moving_session_waits_when_no_live_worker_has_room(r):
    beat(r, "w-a", capacity=10)
    route(r, "conv-1")
    beat(r, "w-b", capacity=1)
    preload(r, "w-b", 1)  # w-b is full
    r.delete(keys.worker("w-a"))
    got = route(r, "conv-1")
    assert got.status is RouteStatus.no_capacity
    assert r.hget(keys.session("conv-1"), "worker") == b"w-a"  # not moved yet
    assert r.zscore(keys.waiting, "conv-1") is not None


# --- claim=False and close ----------------------------------------------------------------------


def test_unknown_session_without_claim_creates_nothing(r):
    beat(r, "w-a", capacity=10)
    before = sorted(r.keys("*"))
    got = route(r, "never-seen", claim=False)
    assert got.status is RouteStatus.unknown
    assert (got.worker, got.seq, got.base) == ("", 0, 0)
    assert sorted(r.keys("*")) == before
    assert load(r, "w-a") == 0
    assert waiting(r) == []


def test_close_removes_session_everywhere_and_frees_capacity(r):
    beat(r, "w-a", capacity=1)
    route(r, "conv-1")
    route(r, "conv-1")
    assert route(r, "queued").status is RouteStatus.no_capacity

    assert close(r, "conv-1") == "w-a"
    assert not r.exists(keys.session("conv-1"))
    assert "conv-1" not in members(r, keys.sessions)
    assert "conv-1" not in members(r, keys.worker_sessions("w-a"))
    assert load(r, "w-a") == 0

    # The freed slot goes to the waiter; a reopened conv-1 starts over at seq 1.
    assert route(r, "queued") == Route("w-a", 1, 1, RouteStatus.new)
    close(r, "queued")
    assert route(r, "conv-1") == Route("w-a", 1, 1, RouteStatus.new)


def test_close_removes_a_waiting_session_from_the_queue(r):
    beat(r, "w-a", capacity=1)
    route(r, "holder")
    route(r, "queued")
    assert close(r, "queued") == ""
    assert waiting(r) == []
    assert r.zscore(WAITING_SEEN, "queued") is None


def test_close_of_unknown_session_is_harmless(r):
    beat(r, "w-a", capacity=1)
    route(r, "holder")
    assert close(r, "nobody") == ""
    assert members(r, keys.worker_sessions("w-a")) == {"holder"}


# --- the client's handling of no_capacity -------------------------------------------------------


def test_client_raises_no_capacity_once_capacity_wait_is_over(r):
    beat(r, "w-a", capacity=1)
    route(r, "holder")
    client = BaseClient(Settings(capacity_wait=0))
    raw = r.register_script(ROUTE_SCRIPT)(args=route_args("conv-2"))
    with pytest.raises(NoCapacity) as info:
        client._routed(raw, "conv-2", time.monotonic())
    assert info.value.session == "conv-2"
    assert "capacity" in info.value.message


def test_client_keeps_waiting_within_capacity_wait(r):
    beat(r, "w-a", capacity=1)
    route(r, "holder")
    client = BaseClient(Settings(capacity_wait=60))
    raw = r.register_script(ROUTE_SCRIPT)(args=route_args("conv-2"))
    assert client._routed(raw, "conv-2", time.monotonic()) is None


def test_client_passes_routes_through_and_raises_no_workers(r):
    client = BaseClient(Settings(capacity_wait=0))
    with pytest.raises(NoWorkers):
        client._routed(r.register_script(ROUTE_SCRIPT)(args=route_args("s")), "s", time.monotonic())
    beat(r, "w-a", capacity=1)
    raw = r.register_script(ROUTE_SCRIPT)(args=route_args("s"))
    assert client._routed(raw, "s", time.monotonic()) == Route("w-a", 1, 1, RouteStatus.new)
