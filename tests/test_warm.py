"""The warm pool: new sessions start in contexts made ahead of time, each used by one session only."""

from __future__ import annotations

import time

from client import BrowserClient

from worker.cluster import WorkerProcess

from .procs import kill_browser, wait_until
from .site import FixtureSite

STATE = "() => [document.cookie, localStorage.getItem('note')]"


def pools_full(client: BrowserClient) -> bool:
    return all(w.warm_contexts == 2 for w in client.workers() if w.alive)


def test_new_sessions_start_in_fresh_contexts_made_ahead_and_the_pool_refills(
        client: BrowserClient, site: FixtureSite) -> None:
    alive = {w.name for w in client.workers() if w.alive}
    primers = [f"warm-p{i}" for i in range(len(alive))]
    for sid in primers:  # least-loaded routing: one per worker, so every browser runs
        s = client.session(sid)
        s.navigate(f"{site.url}/set-cookie?name=who&value={sid}").raise_for_error()
        s.evaluate(f"() => localStorage.setItem('note', '{sid}')").raise_for_error()
    assert {s.worker for s in client.sessions() if s.id in primers} == alive
    wait_until(lambda: pools_full(client), 15, "every worker's warm pool to fill")
    for sid in primers:
        client.close_session(sid)
    time.sleep(0.5)
    for sid in ("warm-b", "warm-c"):
        s = client.session(sid)
        asked = time.time() * 1000
        created = s.evaluate("() => performance.timeOrigin").raise_for_error().data
        assert created < asked - 300  # the page existed before the session asked for it
        s.navigate(f"{site.url}/page2").raise_for_error()
        assert s.evaluate(STATE).data == ["", None]  # nothing of the sessions before, nor of each other
    wait_until(lambda: pools_full(client), 15, "the warm pools to refill")


def test_a_context_with_state_to_carry_is_made_for_it(client: BrowserClient) -> None:
    """The control for the test above: the pool only serves contexts with nothing to carry."""
    s = client.session("warm-control")
    cookie = {"name": "k", "value": "v", "domain": "127.0.0.1", "path": "/", "expires": -1,
              "httpOnly": False, "secure": False, "sameSite": "Lax"}
    state = {"cookies": [cookie], "origins": []}
    asked = time.time() * 1000
    s.call("browser_context_create", {"name": "second", "storageState": state}).raise_for_error()
    created = s.evaluate("() => performance.timeOrigin").raise_for_error().data
    assert created >= asked - 50


def test_the_pool_refills_after_chromium_dies_while_it_was_filling(
        client: BrowserClient, fleet: list[WorkerProcess]) -> None:
    """A take starts a refill at once; killing Chromium then leaves Playwright calls pending that
    never settle, and a pool that waited on them would stay empty for good."""
    for round_ in range(3):
        wait_until(lambda: pools_full(client), 15, "the warm pools to fill")
        s = client.session(f"warm-kill-{round_}")
        took = s.evaluate("() => 1").raise_for_error()  # takes a pooled context: the refill starts now
        worker = next(w for w in fleet if w.name == took.worker)
        kill_browser(worker.name, worker.pid)
        assert s.evaluate("() => 2").raise_for_error().data == 2  # relaunched
        wait_until(lambda: pools_full(client), 15, "the warm pools to refill after the crash")
