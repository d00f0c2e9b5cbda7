"""Session isolation (SPEC 8): one session never sees another's cookies, local storage, tabs, console
messages or results: side by side on one worker, after that worker's Chromium is killed and both
sessions are rebuilt from their checkpoints, and after the worker itself is killed and both move to
another worker. Real workers on a Redis database of their own; processes killed by pid.

Sessions A and B use the same origin (the fixture site) with different cookies and storage, a
different number of tabs (the extra ones are `data:` pages that log to the console when they load,
so their console messages come back when a tab is reopened), and different console messages.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import pytest
import redis

from client import BrowserClient, Settings, ToolResult
from worker.cluster import RedisServer, WorkerProcess

from .conftest import db_url
from .procs import browser_pids, kill_browser, wait_until
from .site import FixtureSite

TABS = {"iso-a": 2, "iso-b": 3}  # per session: its first tab on the site, the rest console pages
GONE = "iso-gone"  # a third session, closed while its worker is dead
READ = """async () => ({cookie: document.cookie, storage: {...localStorage},
  server: (await (await fetch('/cookies')).text()).match(/<title>(.*)<\\/title>/)[1]})"""


def token(sid: str) -> str:
    return sid.replace("-", "_")


def console_page(sid: str, i: int) -> str:
    return "data:text/html," + quote(f"<title>{sid} tab {i}</title><script>console.log('console of {sid} #{i}')"
                                     "</script>")


def prime(c: BrowserClient, site: FixtureSite, sid: str, tabs: int) -> None:
    """A cookie and local storage on the shared origin, a console message, `tabs` tabs, tab 0 active."""
    call(c, sid, "browser_navigate", url=f"{site.url}/set-cookie?name=jar_{token(sid)}&value={sid}")
    call(c, sid, "browser_evaluate", function=f"() => {{ localStorage.setItem('owner', '{sid}'); "
         f"localStorage.setItem('only_{token(sid)}', '1'); console.log('console of {sid} #0') }}")
    for i in range(1, tabs):
        call(c, sid, "browser_tabs", action="new", url=console_page(sid, i))
    call(c, sid, "browser_tabs", action="select", index=0)


def call(c: BrowserClient, sid: str, tool: str, **args: object) -> ToolResult:
    r = c.call(tool, args, session=sid)
    assert r.ok and r.session == sid, (sid, tool, r.error)
    return r


def observe(c: BrowserClient, sid: str) -> dict:
    """Everything the session can see: its tabs, what tab 0 (on the site) reads, each tab's console."""
    tabs = call(c, sid, "browser_tabs", action="list").data
    consoles = []
    for i in range(len(tabs)):
        call(c, sid, "browser_tabs", action="select", index=i)
        consoles.append([m["text"] for m in call(c, sid, "browser_console_messages", level="debug").data])
    call(c, sid, "browser_tabs", action="select", index=0)
    return {"tabs": [(t["title"], t["url"]) for t in tabs], "consoles": consoles,
            "read": call(c, sid, "browser_evaluate", function=READ).data}


def assert_sees_only_its_own(c: BrowserClient, site: FixtureSite, sid: str, *, console_of_tab0: bool) -> None:
    others = [s for s in (*TABS, GONE) if s != sid]
    seen = observe(c, sid)
    assert seen["read"] == {"cookie": f"jar_{token(sid)}={sid}",
                            "storage": {"owner": sid, f"only_{token(sid)}": "1"},
                            "server": f"cookies: jar_{token(sid)}"}, seen
    assert len(seen["tabs"]) == TABS[sid], seen["tabs"]
    assert seen["tabs"][0][1].startswith(site.url + "/set-cookie")
    assert [t[0] for t in seen["tabs"][1:]] == [f"{sid} tab {i}" for i in range(1, TABS[sid])]
    for i, messages in enumerate(seen["consoles"]):
        assert not [m for m in messages if any(o in m for o in others)], (sid, i, messages)
        if i or console_of_tab0:
            assert f"console of {sid} #{i}" in messages, (sid, i, messages)
    assert not any(o in repr(seen) for o in others), seen


def assert_a_new_session_sees_nothing(c: BrowserClient, site: FixtureSite, sid: str) -> str | None:
    r = call(c, sid, "browser_navigate", url=site.url + "/page2")
    assert call(c, sid, "browser_evaluate", function=READ).data == {"cookie": "", "storage": {},
                                                                  "server": "cookies: none"}
    assert len(call(c, sid, "browser_tabs", action="list").data) == 1
    assert call(c, sid, "browser_console_messages", level="debug").data == []
    c.close_session(sid)
    return r.worker


def wait_all(pending: list) -> list:
    """Each caller waits for its own result in a thread of its own, as separate callers would, so
    each notices a lost worker by itself."""
    with ThreadPoolExecutor(len(pending)) as pool:
        results = list(pool.map(lambda item: item[2].result(), pending))
    return [(sid, i, r) for (sid, i, _), r in zip(pending, results)]


def assert_results_reach_their_callers(c: BrowserClient, rounds: int = 10) -> None:
    """Pipelined calls of both sessions, interleaved: every result is its own session's answer."""
    probe = "() => [localStorage.getItem('owner'), document.cookie, {i}]"
    pending = [(sid, i, c.submit("browser_evaluate", {"function": probe.format(i=i)}, session=sid))
               for i in range(rounds) for sid in TABS]
    for sid, i, p in pending:
        r = p.result()
        assert r.ok and r.session == sid and r.data == [sid, f"jar_{token(sid)}={sid}", i], (sid, i, r)


def slow_probes(c: BrowserClient, site: FixtureSite, per_session: int = 3) -> tuple[str, list]:
    """Pipelined slow calls of both sessions, interleaved; the first fetches a marker path as it starts.
    Each is `(session, i, pending call)`; the call answers `[owner, i]`."""
    started = f"/hit/{uuid.uuid4()}"
    pending = []
    for i in range(per_session):
        for sid in TABS:
            first = f"await fetch('{started}'); " if not pending else ""
            fn = (f"async () => {{ {first}await new Promise(r => setTimeout(r, 400)); "
                  f"return [localStorage.getItem('owner'), {i}] }}")
            pending.append((sid, i, c.submit("browser_evaluate", {"function": fn}, session=sid)))
    return started, pending


@pytest.fixture(scope="module")
def solo(redis_server: RedisServer, worker_logs: Path) -> Iterator[tuple[BrowserClient, WorkerProcess]]:
    """One worker of its own (so both sessions share it), on a Redis database of its own."""
    url = db_url(redis_server, 11)
    redis.Redis.from_url(url).flushdb()
    worker = WorkerProcess(url, "w-iso", log_dir=worker_logs).start()
    c = BrowserClient(Settings(redis_url=url))
    try:
        worker.wait_ready(60)
        yield c, worker
    finally:
        c.close()
        worker.stop()


@pytest.fixture
def pair(solo: tuple[BrowserClient, WorkerProcess], site: FixtureSite) -> Iterator[BrowserClient]:
    c, worker = solo
    for sid, tabs in TABS.items():
        prime(c, site, sid, tabs)
    assert {s.id: s.worker for s in c.sessions()} == {sid: worker.name for sid in TABS}
    yield c
    for sid in TABS:
        c.close_session(sid)


def test_sessions_side_by_side_on_one_worker_see_only_their_own(pair: BrowserClient, site: FixtureSite) -> None:
    for sid in TABS:
        assert_sees_only_its_own(pair, site, sid, console_of_tab0=True)
    assert_results_reach_their_callers(pair)
    assert_a_new_session_sees_nothing(pair, site, "iso-fresh")


def test_isolation_holds_after_chromium_is_killed_and_sessions_are_rebuilt(
    pair: BrowserClient, solo: tuple[BrowserClient, WorkerProcess], site: FixtureSite
) -> None:
    _, worker = solo
    started, pending = slow_probes(pair, site)
    wait_until(lambda: site.hits[started] >= 1, 10, "the first slow call to start")
    old = kill_browser(worker.name, worker.pid)
    results = wait_all(pending)
    for sid, i, r in results:
        assert r.ok and r.session == sid and r.worker == worker.name and r.data == [sid, i], (sid, i, r)
    assert any(r.recovered == "browser_crash" for *_, r in results)
    wait_until(lambda: old not in browser_pids(worker.name, worker.pid), 5, "the killed Chromium to go")
    assert browser_pids(worker.name, worker.pid), "a new Chromium serves the sessions"
    for sid in TABS:
        # tab 0 was reloaded from its URL: the console message an evaluate wrote is gone with the page
        assert_sees_only_its_own(pair, site, sid, console_of_tab0=False)
    assert_results_reach_their_callers(pair)
    assert assert_a_new_session_sees_nothing(pair, site, "iso-fresh-2") == worker.name


@dataclass
class Moved:
    client: BrowserClient
    first: WorkerProcess
    second: WorkerProcess
    pending: list  # slow calls of A and B in flight on `first` when it was killed


@pytest.fixture(scope="module")
def moved(redis_server: RedisServer, worker_logs: Path, site: FixtureSite) -> Iterator[Moved]:
    """Sessions A, B and GONE on a worker killed (SIGKILL to its pid) with calls of A and B in
    flight; a second worker is up to take them."""
    url = db_url(redis_server, 12)
    redis.Redis.from_url(url).flushdb()
    first = WorkerProcess(url, "w-iso-1", log_dir=worker_logs).start()
    second = WorkerProcess(url, "w-iso-2", log_dir=worker_logs)
    c = BrowserClient(Settings(redis_url=url))
    try:
        first.wait_ready(60)
        for sid, tabs in TABS.items():
            prime(c, site, sid, tabs)
        call(c, GONE, "browser_navigate", url=f"{site.url}/set-cookie?name=jar_{token(GONE)}&value={GONE}")
        call(c, GONE, "browser_evaluate", function=f"() => localStorage.setItem('owner', '{GONE}')")
        assert {s.worker for s in c.sessions()} == {first.name}
        second.start().wait_ready(60)
        started, pending = slow_probes(c, site)
        wait_until(lambda: site.hits[started] >= 1, 10, "the first slow call to start")
        first.kill()
        yield Moved(c, first, second, pending)
    finally:
        c.close()
        first.stop()  # already gone unless the setup failed before the kill
        second.stop()


def test_isolation_holds_after_the_worker_is_killed_and_sessions_move(moved: Moved, site: FixtureSite) -> None:
    c, second = moved.client, moved.second
    results = wait_all(moved.pending)
    for sid, i, r in results:
        assert r.ok and r.session == sid and r.worker == second.name and r.data == [sid, i], (sid, i, r)
    assert any(r.recovered == "worker_lost" for *_, r in results)
    assert {s.id: s.worker for s in c.sessions() if s.id in TABS} == {sid: second.name for sid in TABS}
    for sid in TABS:
        assert_sees_only_its_own(c, site, sid, console_of_tab0=False)
    assert_results_reach_their_callers(c)
    assert assert_a_new_session_sees_nothing(c, site, "iso-fresh-3") == second.name


def test_a_session_closed_while_its_worker_is_dead_does_not_come_back(moved: Moved, site: FixtureSite) -> None:
    c = moved.client
    wait_until(lambda: moved.first.name not in {w.name for w in c.workers() if w.alive}, 15,
               "the killed worker's heartbeat to expire")
    assert c.close_session(GONE)
    assert GONE not in {s.id for s in c.sessions()}
    r = call(c, GONE, "browser_navigate", url=site.url + "/page2")
    state = call(c, GONE, "browser_evaluate", function=READ).data
    assert (state, r.recovered) == ({"cookie": "", "storage": {}, "server": "cookies: none"}, None)
