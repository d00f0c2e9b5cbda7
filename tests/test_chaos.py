"""Faults with real processes: Chromium and workers killed by pid, SIGTERM, Redis restarts, idle expiry."""

from __future__ import annotations

import json
import os
import signal
import threading
import uuid
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import redis
from kombu import Queue

from client import BrowserClient, BrokerUnavailable, NoWorkers, Settings, TaskTimeout
from client.protocol import TaskPayload, queue_name, task_name
from client.routing import keys
from client.transport import make_celery, reply_key
from worker.cluster import RedisServer, WorkerProcess

from .conftest import db_url
from .procs import browser_pids, descendants, kill_browser, renderers_of, still_running, wait_until
from .site import FixtureSite

STATE = "() => [document.cookie, localStorage.getItem('note'), location.pathname]"


def prime(c: BrowserClient, site: FixtureSite, sid: str) -> None:
    """Give a session state worth keeping: a cookie, local storage, a current URL."""
    c.call("browser_navigate", {"url": f"{site.url}/set-cookie?name=who&value={sid}"}, session=sid)
    c.call("browser_evaluate", {"function": f"() => localStorage.setItem('note', '{sid}')"}, session=sid)
    c.call("browser_navigate", {"url": site.url + "/page2"}, session=sid).raise_for_error()


def primed_on(c: BrowserClient, fleet: list[WorkerProcess], site: FixtureSite, sid: str) -> WorkerProcess:
    """Prime a session and return the worker process that holds it."""
    prime(c, site, sid)
    worker = next(s.worker for s in c.sessions() if s.id == sid)
    return next(p for p in fleet if p.name == worker)


def state_of(c: BrowserClient, sid: str) -> list:
    return c.call("browser_evaluate", {"function": STATE}, session=sid).raise_for_error().data


@pytest.fixture
def pair(redis_server: RedisServer, worker_logs: Path, request: pytest.FixtureRequest) -> Iterator[tuple[str, list[WorkerProcess]]]:
    """Two workers of their own, on a Redis database of their own."""
    url = db_url(redis_server, request.param)
    redis.Redis.from_url(url).flushdb()
    procs = [WorkerProcess(url, f"{request.node.name[:20]}-{i}", log_dir=worker_logs).start() for i in (1, 2)]
    for p in procs:
        p.wait_ready(60)
    yield url, procs
    for p in procs:
        p.stop()


def test_chromium_killed_during_a_task_is_relaunched_and_the_task_retried(
    client: BrowserClient, fleet: list[WorkerProcess], site: FixtureSite
) -> None:
    owner = primed_on(client, fleet, site, "crash-1")
    path = f"/hit/{uuid.uuid4()}"
    slow = client.submit("browser_navigate", {"url": f"{site.url}{path}?s=1.5"}, session="crash-1")
    wait_until(lambda: site.hits[path] >= 1, 10, "the slow page to be requested")
    kill_browser(owner.name, owner.pid)
    r = slow.result()
    assert r.ok and r.retried and r.recovered == "browser_crash", r
    cookie, note, path = state_of(client, "crash-1")
    assert cookie == "who=crash-1" and note == "crash-1" and path.startswith("/hit/")


def test_chromium_killed_between_tasks_loses_no_state(
    client: BrowserClient, fleet: list[WorkerProcess], site: FixtureSite
) -> None:
    owner = primed_on(client, fleet, site, "crash-2")
    old = kill_browser(owner.name, owner.pid)
    wait_until(lambda: old not in browser_pids(owner.name, owner.pid), 5, "the old Chromium to go")
    r = client.call("browser_evaluate", {"function": STATE}, session="crash-2")
    assert r.ok and r.data == ["who=crash-2", "crash-2", "/page2"], r.error
    assert r.recovered == "browser_crash"  # retried too if the task met the dying browser


def test_ten_chromium_kills_over_300_tasks_lose_nothing(
    client: BrowserClient, fleet: list[WorkerProcess], site: FixtureSite
) -> None:
    sids = [f"soak-{i}" for i in range(5)]
    for sid in sids:
        prime(client, site, sid)
    owners = {s.id: s.worker for s in client.sessions()}
    since_kill: Counter[str] = Counter()  # tasks each session finished since its worker's last kill
    failures: list[str] = []
    lock = threading.Lock()

    def run(sid: str) -> int:
        for i in range(60):
            if i % 10 == 5:
                r = client.call("browser_navigate", {"url": site.url + "/page2"}, session=sid)
            else:
                r = client.call("browser_evaluate", {"function": STATE}, session=sid)
                if r.ok and r.data != [f"who={sid}", sid, "/page2"]:
                    failures.append(f"{sid} task {i}: state {r.data}")
            if not r.ok:
                failures.append(f"{sid} task {i}: {r.error}")
            with lock:
                since_kill[sid] += 1
        return 60

    def settled(worker: WorkerProcess) -> bool:
        """Every session of the worker has finished tasks since the last kill, so none of them is
        still recovering: a kill during a retry is a second failure, which is returned by design."""
        mine = [sid for sid in sids if owners[sid] == worker.name]
        return all(since_kill[sid] >= 3 for sid in mine)

    kills = []
    with ThreadPoolExecutor(5) as pool:
        futures = [pool.submit(run, sid) for sid in sids]
        for _ in range(10):
            # a kill lands on a browser that is up and serving, not on one still recovering
            wait_until(lambda: any(settled(p) for p in fleet), 120, "progress")
            victim = next(p for p in fleet if settled(p))
            with lock:
                kills.append(kill_browser(victim.name, victim.pid))
                for sid in sids:
                    if owners[sid] == victim.name:
                        since_kill[sid] = 0
        assert sum(f.result() for f in futures) == 300
    assert len(set(kills)) == 10
    assert failures == []


@pytest.mark.parametrize("pair", [3], indirect=True)
def test_worker_killed_mid_flow_sessions_move_with_state(
    pair: tuple[str, list[WorkerProcess]], site: FixtureSite
) -> None:
    url, (w1, w2) = pair
    c = BrowserClient(Settings(redis_url=url))
    sids = [f"lost-{i}" for i in range(4)]
    for sid in sids:
        prime(c, site, sid)
    victims = [s.id for s in c.sessions() if s.worker == w1.name]
    assert victims, "least-loaded routing should have put sessions on both workers"
    paths = {sid: [f"/hit/{uuid.uuid4()}" for _ in range(3)] for sid in victims}
    pending = [c.submit("browser_navigate", {"url": f"{site.url}{p}?s=1"}, session=sid)
               for sid in victims for p in paths[sid]]
    wait_until(lambda: any(site.hits[p[0]] for p in paths.values()), 10, "the first slow page")
    w1.kill()

    results = [p.result() for p in pending]
    assert all(r.ok and r.worker == w2.name for r in results), [r.error for r in results]
    assert any(r.recovered == "worker_lost" for r in results)
    for sid in victims:
        cookie, note, path = state_of(c, sid)
        assert (cookie, note) == (f"who={sid}", sid) and path == paths[sid][-1]
    counts = {p: site.hits[p] for ps in paths.values() for p in ps}
    assert all(1 <= n <= 2 for n in counts.values()), counts

    w1.start().wait_ready(60)  # the same name comes back: nothing it had queued may run again
    stale = TaskPayload(tool="browser_navigate", session=victims[0], args={"url": f"{site.url}{paths[victims[0]][0]}"},
                        seq=1, base=1)
    task_id = str(uuid.uuid4())
    make_celery(Settings(redis_url=url)).send_task(task_name("browser_navigate"), kwargs=stale.model_dump(),
                                                   task_id=task_id, queue=Queue(queue_name(w1.name)))
    reply = json.loads(redis.Redis.from_url(url).blpop([reply_key(task_id)], 30)[1])
    assert reply["error"]["type"] == "stale_task"
    assert {p: site.hits[p] for p in counts} == counts
    c.close()


@pytest.mark.parametrize("pair", [4], indirect=True)
def test_sigterm_finishes_in_flight_work_and_sessions_resume_elsewhere(
    pair: tuple[str, list[WorkerProcess]], site: FixtureSite
) -> None:
    url, (w1, w2) = pair
    c = BrowserClient(Settings(redis_url=url))
    for sid in (f"term-{i}" for i in range(4)):
        prime(c, site, sid)
    moving = [s.id for s in c.sessions() if s.worker == w1.name]
    paths = [f"/hit/{uuid.uuid4()}" for _ in moving]
    in_flight = [c.submit("browser_navigate", {"url": f"{site.url}{p}?s=1"}, session=sid)
                 for sid, p in zip(moving, paths)]
    wait_until(lambda: any(site.hits[p] for p in paths), 10, "the slow pages to be requested")
    tree = descendants(w1.pid)  # the Playwright driver, Chromium and all its children
    assert [pid for browser in browser_pids(w1.name, w1.pid) for pid in renderers_of(browser)]
    os.kill(w1.pid, signal.SIGTERM)
    finished = [p.result() for p in in_flight]
    assert all(r.ok for r in finished), [r.error for r in finished]
    assert w1.proc.wait(60) == 0
    wait_until(lambda: still_running(tree) == [], 5, f"the worker's processes to exit: {still_running(tree)}")
    for sid in moving:
        r = c.call("browser_evaluate", {"function": STATE}, session=sid)
        assert r.ok and r.worker == w2.name and r.recovered == "worker_lost"
        assert r.data[:2] == [f"who={sid}", sid] and r.data[2].startswith("/hit/")
    c.close()


def test_redis_restart_with_append_only_persistence(site: FixtureSite, worker_logs: Path, tmp_path: Path) -> None:
    servers = [RedisServer(appendonly=True, workdir=tmp_path).start()]
    worker = WorkerProcess(servers[0].url, "w-aof", log_dir=worker_logs).start()
    try:
        worker.wait_ready(60)
        c = BrowserClient(Settings(redis_url=servers[0].url, action_timeout=5, result_timeout=5))
        prime(c, site, "aof-1")
        r = redis.Redis.from_url(servers[0].url)  # the checkpoint follows the reply: let it land first
        wait_until(lambda: b"/page2" in (r.get(keys.checkpoint("aof-1")) or b""), 10, "the checkpoint")
        r.close()
        servers[0].stop()
        with pytest.raises(BrokerUnavailable):
            c.call("browser_snapshot", session="aof-1")
        servers.append(RedisServer(servers[0].port, appendonly=True, workdir=tmp_path).start())

        def serves() -> bool:
            if worker.proc.poll() is not None:  # kombu's channel-close race (README: Reliability)
                assert worker.proc.returncode == 1 and "Unrecoverable error: AttributeError" in worker.logs()
                worker.start()  # what its supervisor does
            try:
                return c.call("browser_evaluate", {"function": STATE}, session="aof-1").ok
            except (BrokerUnavailable, NoWorkers, TaskTimeout):
                return False

        wait_until(serves, 90, "the fleet to serve again after the restart")
        assert state_of(c, "aof-1") == ["who=aof-1", "aof-1", "/page2"]
        assert worker.proc.poll() is None
        c.close()
    finally:
        worker.stop()
        servers[-1].stop()


def test_idle_sessions_expire_free_capacity_and_restart_fresh(
    redis_server: RedisServer, site: FixtureSite, worker_logs: Path
) -> None:
    url = db_url(redis_server, 5)
    idle = WorkerProcess(url, "w-idle", env={"BROWSERQ_SESSION_TIMEOUT": "2s"}, log_dir=worker_logs).start()
    try:
        idle.wait_ready(60)
        c = BrowserClient(Settings(redis_url=url))
        prime(c, site, "sleepy")
        assert [w.sessions for w in c.workers()] == [1]
        wait_until(lambda: [w.sessions for w in c.workers()] == [0], 30, "the idle session to expire")
        assert c.sessions() == []
        r = c.call("browser_evaluate", {"function": "() => location.href"}, session="sleepy")
        assert r.ok and r.notice and "fresh" in r.text and r.data == "about:blank"
        again = c.call("browser_navigate", {"url": site.url + "/cookies"}, session="sleepy")
        assert again.data["title"] == "cookies: none" and again.notice is None
        c.close()
    finally:
        idle.stop()


def test_a_crashed_renderer_is_rebuilt_and_the_task_retried(
    client: BrowserClient, fleet: list[WorkerProcess], site: FixtureSite
) -> None:
    owner = primed_on(client, fleet, site, "renderer-1")
    renderers = [pid for browser in browser_pids(owner.name, owner.pid) for pid in renderers_of(browser)]
    assert renderers
    for pid in renderers:
        os.kill(pid, signal.SIGKILL)
    r = client.call("browser_evaluate", {"function": STATE}, session="renderer-1")
    assert r.ok and r.retried and r.recovered == "browser_crash", r.error
    assert r.data == ["who=renderer-1", "renderer-1", "/page2"]
    assert browser_pids(owner.name, owner.pid), "a renderer crash must not cost the browser"


@pytest.mark.parametrize("pair", [6], indirect=True)
def test_ctrl_c_to_the_worker_process_group_still_finishes_in_flight_work(
    pair: tuple[str, list[WorkerProcess]], site: FixtureSite
) -> None:
    """A terminal's Ctrl-C reaches the whole group (worker, Playwright's driver); the task that is
    running must still finish, and nothing of the worker may survive it."""
    url, (w1, w2) = pair
    c = BrowserClient(Settings(redis_url=url))
    sid = next(s for s in (f"ctrlc-{i}" for i in range(4))
               if c.call("browser_navigate", {"url": site.url + "/"}, session=s).worker == w1.name)
    tree = descendants(w1.pid)
    started = f"/hit/{uuid.uuid4()}"
    slow = c.submit("browser_evaluate", {"function": f"async () => {{ await fetch('{started}'); "
                                         "await new Promise(r => setTimeout(r, 1500)); return 'finished' }"},
                    session=sid)
    wait_until(lambda: site.hits[started] == 1, 10, "the task to start")
    os.killpg(w1.pid, signal.SIGINT)
    r = slow.result()
    assert r.ok and r.data == "finished" and r.worker == w1.name and not r.retried
    assert w1.proc.wait(60) == 0
    wait_until(lambda: still_running(tree) == [], 5, "the worker's processes to exit")
    moved = c.call("browser_evaluate", {"function": "() => location.pathname"}, session=sid)
    assert moved.ok and moved.worker == w2.name and moved.data == "/"
    c.close()


def test_checkpoints_are_mirrored_to_redis_only_when_they_change(
    client: BrowserClient, redis_server: RedisServer, site: FixtureSite
) -> None:
    r = redis.Redis.from_url(redis_server.url)
    key = "bq:checkpoint:mirror-1"
    s = client.session("mirror-1")
    s.navigate(site.url + "/page2").raise_for_error()
    wait_until(lambda: b"/page2" in (r.get(key) or b""), 10, "the first checkpoint in Redis")
    first = r.get(key)
    for _ in range(3):  # a task starts only after the previous one's checkpoint: these all ran
        s.evaluate("() => 1 + 1").raise_for_error()
    assert r.get(key) == first
    s.evaluate("() => localStorage.setItem('mirrored', 'yes')").raise_for_error()
    s.evaluate("() => 0").raise_for_error()
    assert r.get(key) != first and b"mirrored" in r.get(key)
