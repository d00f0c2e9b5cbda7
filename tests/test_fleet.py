"""Routing, pinning, ordering and isolation across real worker processes."""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

import pytest
import redis

from client import AsyncBrowserClient, BrowserClient, NoCapacity, NoWorkers, Settings
from worker.cluster import RedisServer, WorkerProcess

from .conftest import db_url
from .site import FixtureSite


def test_ten_sessions_spread_over_both_workers_and_stay_pinned(client: BrowserClient, site: FixtureSite) -> None:
    owners: dict[str, set[str | None]] = {}
    for i in range(10):
        sid = f"spread-{i}"
        owners[sid] = {client.call("browser_navigate", {"url": site.url + "/"}, session=sid).worker}
    for _ in range(3):
        for sid in owners:
            r = client.call("browser_evaluate", {"function": "() => location.pathname"}, session=sid)
            assert r.ok and r.data == "/"
            owners[sid].add(r.worker)
    assert all(len(w) == 1 for w in owners.values()), owners
    placed = [next(iter(w)) for w in owners.values()]
    assert {placed.count("w-a"), placed.count("w-b")} == {5}
    registry = {s.id: s.worker for s in client.sessions()}
    assert {sid: registry[sid] for sid in owners} == dict(zip(owners, placed))


def test_cookies_do_not_leak_between_sessions(client: BrowserClient, site: FixtureSite) -> None:
    client.call("browser_navigate", {"url": site.url + "/set-cookie?name=only_a&value=1"}, session="jar-a")
    seen_a = client.call("browser_navigate", {"url": site.url + "/cookies"}, session="jar-a")
    seen_b = client.call("browser_navigate", {"url": site.url + "/cookies"}, session="jar-b")
    assert seen_a.data["title"] == "cookies: only_a"
    assert seen_b.data["title"] == "cookies: none"


def test_fifty_pipelined_tasks_run_in_submission_order(client: BrowserClient, site: FixtureSite) -> None:
    s = client.session("pipeline")
    s.navigate(site.url + "/").raise_for_error()
    pending = [
        client.submit("browser_evaluate",
                      {"function": f"() => {{ (window.order ||= []).push({i}); return window.order.length }}"},
                      session="pipeline")
        for i in range(50)
    ]
    results = [p.result() for p in pending]
    assert [r.data for r in results] == list(range(1, 51))
    assert s.evaluate("() => window.order").data == list(range(50))


def test_two_sessions_run_concurrently_on_one_worker(client: BrowserClient, site: FixtureSite) -> None:
    by_worker: dict[str, list[str]] = {}
    for i in range(4):
        sid = f"conc-{i}"
        w = client.call("browser_navigate", {"url": site.url + "/"}, session=sid).worker
        by_worker.setdefault(w, []).append(sid)
    pair = next(sids for sids in by_worker.values() if len(sids) >= 2)[:2]
    sleeper = "async () => { const s = Date.now(); await new Promise(r => setTimeout(r, 1000)); return [s, Date.now()]; }"
    pending = [client.submit("browser_evaluate", {"function": sleeper}, session=sid) for sid in pair]
    (s1, e1), (s2, e2) = (p.result().data for p in pending)
    assert s2 < e1 and s1 < e2, "the two sessions' tasks did not overlap"


def test_async_client_runs_sessions_side_by_side(redis_server: RedisServer, fleet: list, site: FixtureSite) -> None:
    async def scenario() -> list[str]:
        async with AsyncBrowserClient(Settings(redis_url=redis_server.url)) as c:
            handles = [c.session(f"async-{i}") for i in range(3)]
            await asyncio.gather(*(h.navigate(site.url + "/page2") for h in handles))
            titles = await asyncio.gather(*(h.evaluate("() => document.title") for h in handles))
            await asyncio.gather(*(h.close() for h in handles))
            assert not {s.id for s in await c.sessions()} & {h.id for h in handles}
            return [t.data for t in titles]

    assert asyncio.run(scenario()) == ["Page Two"] * 3


def test_new_worker_gets_new_sessions_and_leaves_cleanly(
    client: BrowserClient, redis_server: RedisServer, site: FixtureSite, worker_logs
) -> None:
    for i in range(2):
        client.call("browser_navigate", {"url": site.url + "/"}, session=f"before-{i}")
    late = WorkerProcess(redis_server.url, "w-late", log_dir=worker_logs).start().wait_ready(60)
    try:
        fresh = next(w for w in client.workers() if w.name == "w-late")
        assert (fresh.browser, fresh.launches, fresh.sessions) == ("idle", 0, 0)  # no Chromium yet
        r = client.call("browser_navigate", {"url": site.url + "/"}, session="after-join")
        assert r.worker == "w-late"
        assert {w.name for w in client.workers() if w.alive} >= {"w-a", "w-b", "w-late"}
    finally:
        assert late.stop() == 0
    assert "w-late" not in {w.name for w in client.workers() if w.alive}
    moved = client.call("browser_navigate", {"url": site.url + "/page2"}, session="after-join")
    assert moved.ok and moved.worker in {"w-a", "w-b"}


def test_no_workers_is_reported_at_once(redis_server: RedisServer) -> None:
    with BrowserClient(Settings(redis_url=db_url(redis_server, 2))) as c:
        with pytest.raises(NoWorkers, match="no live browserq worker"):
            c.call("browser_navigate", {"url": "http://127.0.0.1:9/"}, session="lonely")
        assert c.workers() == []


def test_capacity_is_enforced_and_waiters_get_freed_slots(
    redis_server: RedisServer, site: FixtureSite, worker_logs
) -> None:
    url = db_url(redis_server, 1)
    small = WorkerProcess(url, "w-small", args=("--max-sessions", "2"), log_dir=worker_logs).start()
    try:
        small.wait_ready(60)
        c = BrowserClient(Settings(redis_url=url, capacity_wait=0.5))
        firsts = [c.submit("browser_navigate", {"url": site.url + "/"}, session=sid)
                  for sid in ("full-1", "full-2")]
        assert all(p.result().ok for p in firsts)
        time.sleep(1.5)  # one heartbeat later
        assert [w.launches for w in c.workers()] == [1]  # both first calls shared one launch
        with pytest.raises(NoCapacity, match="capacity"):
            c.call("browser_navigate", {"url": site.url + "/"}, session="full-3")
        assert c.call("browser_evaluate", {"function": "() => 1"}, session="full-1").data == 1
        assert [w.sessions for w in c.workers()] == [2]

        with BrowserClient(Settings(redis_url=url, capacity_wait=30)) as patient, \
                ThreadPoolExecutor(1) as pool:
            waiting = pool.submit(patient.call, "browser_navigate", {"url": site.url + "/"},
                                  session="full-3")
            with pytest.raises(FutureTimeout):
                waiting.result(timeout=1.0)  # still waiting: the worker is full
            assert c.close_session("full-1")
            r = waiting.result(timeout=30)
        assert r.ok and r.worker == "w-small"
        c.close()
    finally:
        small.stop()


def test_clients_subscribe_to_nothing_per_call(redis_server: RedisServer, client: BrowserClient) -> None:
    """Replies come back on lists; a client with a result backend would also SUBSCRIBE to each
    task's result channel (and unsubscribe) on every call."""
    r = redis.Redis.from_url(redis_server.url)

    def subscribes() -> int:
        return sum(s["calls"] for name, s in r.info("commandstats").items() if "subscribe" in name)

    client.call("browser_evaluate", {"function": "() => 0"}, session="nosub").raise_for_error()
    before = subscribes()

    async def async_calls() -> list[object]:
        async with AsyncBrowserClient(Settings(redis_url=redis_server.url)) as ac:
            return [(await ac.call("browser_evaluate", {"function": f"() => {i}"}, session="nosub")).data
                    for i in range(5)]

    assert [client.call("browser_evaluate", {"function": f"() => {i}"}, session="nosub").data
            for i in range(5)] == list(range(5))
    assert asyncio.run(async_calls()) == list(range(5))
    assert subscribes() == before
