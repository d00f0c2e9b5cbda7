"""Flower against the real fleet: it lists the workers and the tasks by tool name, and a secret
typed into a page shows up nowhere an operator looks (Flower's API, worker logs, results, the
result backend)."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from client import BrowserClient, InvalidInput
from worker.cluster import FlowerProcess, RedisServer, WorkerProcess

from .site import FixtureSite

SECRET = "hunter2-SECRET"


@pytest.fixture
def flower(redis_server: RedisServer, fleet: list[WorkerProcess], tmp_path: Path) -> Iterator[FlowerProcess]:
    proc = FlowerProcess(redis_server.url, log_dir=tmp_path).start()
    try:
        yield proc.wait_ready(60)
    finally:
        proc.stop()


def get(flower: FlowerProcess, path: str) -> tuple[str, Any]:
    with urllib.request.urlopen(flower.url + path, timeout=30) as resp:
        body = resp.read().decode()
    return body, json.loads(body)


def wait_for(predicate, timeout: float, what: str) -> Any:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := predicate():
            return value
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what}")


def test_flower_lists_workers_and_tool_tasks_and_never_shows_secrets(
    flower: FlowerProcess, client: BrowserClient, fleet: list[WorkerProcess], site: FixtureSite,
    redis_server: RedisServer,
) -> None:
    time.sleep(1)  # let Flower's event consumer attach before the tasks run
    sid = "flower-1"
    results = [
        client.call("browser_navigate", {"url": site.url + "/"}, session=sid),
        client.call("browser_type", {"selector": "#name", "text": SECRET}, session=sid),
        client.call("browser_evaluate", {"function": "() => document.querySelector('#name').value"}, session=sid),
        # a failing type: its error message must not quote the text either
        client.call("browser_type", {"selector": "#missing", "text": SECRET, "timeout": 0.3}, session=sid),
    ]
    assert [r.ok for r in results] == [True, True, True, False]
    assert results[2].data == SECRET  # the secret really was typed (and evaluate may return it)
    with pytest.raises(InvalidInput) as refused:  # too long: refused by the client
        client.call("browser_type", {"selector": "#name", "text": SECRET * 10_000}, session=sid)
    assert SECRET not in str(refused.value) and refused.value.field == "text"

    # --- Flower sees the fleet and the tools ---
    _, workers = get(flower, "/api/workers?refresh=1")
    names = {name.split("@")[0] for name in workers}
    assert {"w-a", "w-b"} <= names

    def typed_tasks() -> list[dict[str, Any]]:
        _, tasks = get(flower, "/api/tasks")
        return [t for t in tasks.values() if t.get("name") == "browserq.browser_type" and t.get("state") == "SUCCESS"]

    typed = wait_for(lambda: len(typed_tasks()) >= 2 and typed_tasks(), 30, "browser_type tasks in Flower")
    body, tasks = get(flower, "/api/tasks")
    assert {"browserq.browser_navigate", "browserq.browser_type", "browserq.browser_evaluate"} <= {
        t["name"] for t in tasks.values()}
    assert all(json.loads(t["kwargs"].replace("'", '"')) == {"tool": "browser_type", "session": sid}
               for t in typed)
    failed = [t for t in typed if "'ok': False" in (t.get("result") or "")]
    assert failed, "the failing browser_type should be listed with its summary result"

    # --- the secret is nowhere an operator looks ---
    pages = [body, get(flower, "/api/workers")[0]]
    pages += [get(flower, f"/api/task/info/{t['uuid']}")[0] for t in tasks.values()]
    pages += [get(flower, f"/api/task/result/{t['uuid']}")[0] for t in typed]
    for page in pages:
        assert SECRET not in page
    for r in results[:2] + results[3:]:
        assert SECRET not in r.model_dump_json()
    assert "#missing" in results[3].error.message  # still says what went wrong
    for w in fleet:
        logs = w.logs()
        assert SECRET not in logs
    assert any("browserq.browser_type" in w.logs() and "received" in w.logs() for w in fleet)

    backend = redis.Redis.from_url(redis_server.url)
    metas = [backend.get(k) for k in backend.scan_iter("celery-task-meta-*")]
    assert metas and all(SECRET.encode() not in m for m in metas if m)
    assert SECRET not in flower.logs()


def test_flower_api_refuses_without_auth_unless_local_dev(redis_server: RedisServer, tmp_path: Path) -> None:
    """With FLOWER_BASIC_AUTH set, the same process demands credentials (what compose uses)."""
    proc = FlowerProcess(redis_server.url, env={"FLOWER_BASIC_AUTH": "ops:s3cret"}, log_dir=tmp_path).start()
    try:
        proc.wait_ready(60)
        assert "FLOWER_UNAUTHENTICATED_API" not in proc.env
        with pytest.raises(urllib.error.HTTPError) as denied:
            urllib.request.urlopen(proc.url + "/api/workers", timeout=10)
        assert denied.value.code == 401
        request = urllib.request.Request(proc.url + "/api/workers",
                                         headers={"Authorization": "Basic b3BzOnMzY3JldA=="})
        with urllib.request.urlopen(request, timeout=30) as resp:
            assert resp.status == 200
    finally:
        proc.stop()
