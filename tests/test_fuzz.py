"""Malformed input, thrown in bulk: every call gets a clear error, no worker dies, a healthy session
running alongside sees no failure."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from celery import Celery
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kombu import Connection, Exchange, Queue

from client import BrowserClient, InvalidInput, Settings, ToolResult
from client.protocol import GENERIC_TASK, queue_name, task_name
from client.tools import TOOLS
from client.transport import make_celery, reply_key
from worker.cluster import RedisServer, WorkerProcess

from .site import FixtureSite

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-10**12, 10**12) | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)
FIELDS = st.sampled_from(sorted({f for t in TOOLS.values() for f in t.model_fields} | {"tool", "x"}))
ARGS = st.dictionaries(FIELDS, JSON, max_size=5) | JSON
NAMES = st.sampled_from(sorted(TOOLS)) | st.text(max_size=30)
SESSIONS = st.sampled_from(["fuzz-1", "ok.id:2"]) | st.text(max_size=140)


@given(tool=NAMES, args=ARGS, session=SESSIONS)
@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_client_validation_never_fails_unclearly(tool: Any, args: Any, session: Any) -> None:
    client = BrowserClient.__new__(BrowserClient)
    client.settings, client.caps, client.default_session = Settings(), set(), "fuzz"
    try:
        call = client._prepare(tool, args, session)
    except InvalidInput as exc:
        assert exc.field is not None and exc.message
        return
    assert call.tool in TOOLS and isinstance(call.args, dict)


@pytest.fixture(scope="module")
def healthy(client_url: str, site: FixtureSite) -> Iterator[list[ToolResult]]:
    """A session that keeps working while the fuzzing runs; its results are checked at the end."""
    results: list[ToolResult] = []
    stop = threading.Event()

    def run() -> None:
        with BrowserClient(Settings(redis_url=client_url)) as c:
            c.call("browser_navigate", {"url": site.url + "/"}, session="fuzz-healthy")
            while not stop.is_set():
                results.append(c.call("browser_evaluate", {"function": "() => document.title"},
                                      session="fuzz-healthy"))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    yield results
    stop.set()
    thread.join(60)


@pytest.fixture(scope="module")
def client_url(redis_server: RedisServer, fleet: list[WorkerProcess]) -> str:
    return redis_server.url


@pytest.fixture(scope="module")
def publisher(client_url: str) -> Iterator[Celery]:
    app = make_celery(Settings(redis_url=client_url))
    yield app
    app.close()


def _reply(url: str, task_id: str) -> ToolResult:
    raw = redis.Redis.from_url(url).blpop([reply_key(task_id)], timeout=30)
    assert raw is not None, "the worker gave no answer"
    return ToolResult.model_validate_json(raw[1])


@given(name=st.sampled_from([GENERIC_TASK, task_name("browser_navigate"), task_name("browser_click")]),
       kwargs=st.dictionaries(st.sampled_from(["tool", "session", "args", "seq", "base", "x"]), JSON, max_size=6))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_raw_messages_get_clear_errors(publisher: Celery, client_url: str, healthy: list, name: str,
                                       kwargs: dict) -> None:
    task_id = str(uuid.uuid4())
    publisher.send_task(name, kwargs=kwargs, task_id=task_id, queue=Queue(queue_name("w-a")))
    result = _reply(client_url, task_id)
    assert not result.ok and result.error is not None and result.error.message
    assert result.error.type in {"invalid_input", "stale_task"}


def test_pickled_truncated_and_oversized_messages_are_refused(
    client_url: str, fleet: list[WorkerProcess], healthy: list[ToolResult]
) -> None:
    worker = fleet[0]
    queue = Queue(queue_name(worker.name), Exchange(queue_name(worker.name)), routing_key=queue_name(worker.name))
    with Connection(client_url) as conn:
        producer = conn.Producer()
        pickled_id = str(uuid.uuid4())
        producer.publish({"tool": "browser_navigate"}, serializer="pickle", exchange=queue.exchange,
                         routing_key=queue.routing_key, declare=[queue],
                         headers={"task": task_name("browser_navigate"), "id": pickled_id})
        producer.publish(b'[[], {"tool": "browser_navig', content_type="application/json", content_encoding="utf-8",
                         exchange=queue.exchange, routing_key=queue.routing_key, declare=[queue],
                         headers={"task": task_name("browser_navigate"), "id": str(uuid.uuid4())})
    big_id = str(uuid.uuid4())
    make_celery(Settings(redis_url=client_url)).send_task(
        task_name("browser_type"), task_id=big_id, queue=Queue(queue_name(worker.name)),
        kwargs={"tool": "browser_type", "session": "fuzz-big", "args": {"selector": "#q", "text": "x" * 5_000_000}})
    big = _reply(client_url, big_id)
    assert big.error is not None and big.error.type == "invalid_input" and big.error.field == "text"
    logs = worker.logs()
    assert "ContentDisallowed" in logs or "untrusted content" in logs
    assert "Can't decode message body" in logs
    assert worker.proc.poll() is None


def test_the_healthy_session_saw_no_failure(healthy: list[ToolResult], fleet: list[WorkerProcess]) -> None:
    assert len(healthy) > 10
    assert all(r.ok and r.data == "Fixture Home" for r in healthy), [r.error for r in healthy if not r.ok]
    assert all(p.proc.poll() is None for p in fleet)
