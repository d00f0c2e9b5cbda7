"""Bad input gets a clear error naming the field, from the client and from raw queue messages."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
import redis
from kombu import Queue

from client import BrowserClient, InvalidInput, InvalidSessionId, Settings, ToolResult, UnknownTool
from client.protocol import GENERIC_TASK, queue_name, task_name
from client.transport import make_celery, reply_key
from worker.cluster import RedisServer, WorkerProcess, free_port

from .site import FixtureSite


@pytest.mark.parametrize(
    ("tool", "args", "session", "error", "field"),
    [
        ("browser_fly", {}, "s", UnknownTool, "tool"),
        ("browser_navigate", {}, "s", InvalidInput, "url"),
        ("browser_navigate", {"url": 42}, "s", InvalidInput, "url"),
        ("browser_navigate", {"url": "example.com"}, "s", InvalidInput, "url"),
        ("browser_click", {"ref": "s1e1", "doubleClick": "twice"}, "s", InvalidInput, "doubleClick"),
        ("browser_click", {"ref": "s1e1", "colour": "red"}, "s", InvalidInput, "colour"),
        ("browser_navigate", {"url": "http://127.0.0.1/"}, "no spaces allowed", InvalidSessionId, "session"),
        ("browser_navigate", {"url": "http://127.0.0.1/"}, "x" * 129, InvalidSessionId, "session"),
    ],
)
def test_client_refuses_bad_calls_before_enqueueing(
    client: BrowserClient, tool: str, args: dict, session: str, error: type, field: str
) -> None:
    with pytest.raises(error) as info:
        client.call(tool, args, session=session)
    assert info.value.field == field
    assert field in str(info.value)
    assert client.sessions() == [] or session not in {s.id for s in client.sessions()}


def _raw(redis_url: str, worker: str, name: str, *args: Any, **kwargs: Any) -> ToolResult:
    """Publish a hand-made message straight onto a worker's queue and read the reply."""
    app = make_celery(Settings(redis_url=redis_url))
    task_id = str(uuid.uuid4())
    app.send_task(name, args=args, kwargs=kwargs, task_id=task_id, queue=Queue(queue_name(worker)))
    reply = redis.Redis.from_url(redis_url).blpop([reply_key(task_id)], timeout=30)
    assert reply is not None, "the worker sent no reply"
    return ToolResult.model_validate_json(reply[1])


RAW_CASES = [
    (GENERIC_TASK, {"tool": "browser_fly", "session": "raw-1", "args": {}}, "tool"),
    (task_name("browser_navigate"), {"tool": "browser_navigate", "session": "raw-1", "args": {}}, "url"),
    (task_name("browser_navigate"), {"tool": "browser_navigate", "session": "raw-1", "args": {"url": ["x"]}}, "url"),
    (task_name("browser_navigate"), {"tool": "browser_navigate", "session": "raw-1", "args": {"url": "nota url"}}, "url"),
    (task_name("browser_navigate"), {"tool": "browser_navigate", "session": "bad id!", "args": {"url": "http://x.y/"}}, "session"),
    (task_name("browser_navigate"), {"tool": "browser_navigate", "session": "raw-1", "args": "url=http://x.y/"}, "args"),
    (task_name("browser_navigate"), {"tool": "browser_navigate", "session": "raw-1", "args": {}, "evil": 1}, "evil"),
    (task_name("browser_click"), {"tool": "browser_navigate", "session": "raw-1", "args": {"url": "http://x.y/"}}, "tool"),
    (task_name("browser_click"), {"session": "raw-1", "args": {"ref": "e1"}}, "tool"),
]


@pytest.mark.parametrize(("name", "kwargs", "field"), RAW_CASES)
def test_worker_refuses_bad_raw_messages_and_stays_up(
    redis_server: RedisServer, fleet: list[WorkerProcess], name: str, kwargs: dict, field: str
) -> None:
    result = _raw(redis_server.url, "w-a", name, **kwargs)
    assert not result.ok and result.error is not None
    assert result.error.type == "invalid_input"
    assert result.error.field == field and field in result.error.message
    assert fleet[0].proc.poll() is None


def test_positional_arguments_and_unregistered_tasks_do_not_hurt_the_worker(
    redis_server: RedisServer, fleet: list[WorkerProcess], client: BrowserClient, site: FixtureSite
) -> None:
    result = _raw(redis_server.url, "w-b", task_name("browser_snapshot"), "raw-2", {"depth": 1})
    assert result.error is not None and result.error.field == "args"
    make_celery(Settings(redis_url=redis_server.url)).send_task(
        "browserq.no_such_task", kwargs={}, queue=Queue(queue_name("w-b")))
    for sid in ("healthy-1", "healthy-2", "healthy-3"):
        assert client.call("browser_navigate", {"url": site.url + "/"}, session=sid).ok
    assert all(p.proc.poll() is None for p in fleet)
    assert "no_such_task" in fleet[1].logs()


def test_tool_errors_come_back_as_results_the_model_can_act_on(client: BrowserClient, site: FixtureSite) -> None:
    s = client.session("errors")
    s.navigate(site.url + "/")
    missing = s.click(selector="#does-not-exist", timeout=0.5)
    assert not missing.ok and missing.error.type == "timeout"
    thrown = s.evaluate("() => { throw new Error('boom from page') }")
    assert not thrown.ok and "boom from page" in thrown.error.message
    unreachable = s.navigate(f"http://127.0.0.1:{free_port()}/")
    assert not unreachable.ok and unreachable.error.type == "browser_error"
    assert "ERR_CONNECTION_REFUSED" in unreachable.error.message
    assert s.evaluate("() => 40 + 2").data == 42
    assert json.loads(missing.model_dump_json())["error"]["message"]
