"""The task boundary: the one place where raw messages are checked and exceptions become results.

Nothing a message contains, and nothing Playwright or a handler raises, escapes from here: the
worker process keeps serving, and the caller gets a `ToolResult` whose error names the problem.
"""

from __future__ import annotations

import concurrent.futures
import logging
import time
from typing import Any

from celery import Celery, Task
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeout
from pydantic import ValidationError

from client.errors import InvalidInput
from client.protocol import GENERIC_TASK, TaskPayload, task_name
from client.redact import redacting, scrub, secret_values
from client.results import ToolResult
from client.tools import TOOLS, validate_call
from client.tools.catalogue import describe_validation_error

from .errors import HandlerError, Retried
from .runtime import Runtime

__all__ = ["register_tasks", "CLOSE_TASK", "PING_TASK"]

log = logging.getLogger(__name__)
CLOSE_TASK = "browserq.close_session"
PING_TASK = "browserq.ping"
MAX_MESSAGE = 12 * 1024 * 1024


def register_tasks(app: Celery, runtime: Runtime) -> None:
    def define(name: str, tool: str | None) -> None:
        @app.task(name=name, bind=True)
        def run(self: Task, *args: Any, **kwargs: Any) -> dict[str, Any]:
            return handle(runtime, self.request.id, tool, args, kwargs)

    for tool in TOOLS:
        define(task_name(tool), tool)
    define(GENERIC_TASK, None)
    define(CLOSE_TASK, "close_session")

    @app.task(name=PING_TASK)
    def ping() -> dict[str, str]:
        """A no-op through Celery alone: the bare round trip that benchmarks compare against."""
        return {"worker": runtime.name}


def handle(runtime: Runtime, task_id: str, tool: str | None, args: tuple, kwargs: dict) -> dict[str, Any]:
    started = time.perf_counter()
    result = redact(execute(runtime, tool, args, kwargs), kwargs.get("args"))
    result.worker = runtime.name
    body = result.model_dump_json()
    if len(body) > MAX_MESSAGE:
        result = ToolResult.failure(result.tool, result.session, "result_too_large",
                                    f"the result is {len(body)} bytes, over the {MAX_MESSAGE} byte limit")
        body = result.model_dump_json()
    try:
        runtime.registry.reply(task_id, body)
    except Exception:  # noqa: BLE001 - Redis trouble must not kill the worker
        log.exception("could not deliver the reply for task %s", task_id)
    log.info("%s session=%s ok=%s %.1fms%s", result.tool, result.session, result.ok,
             (time.perf_counter() - started) * 1000, f" error={result.error.type}" if result.error else "")
    return summary(result)


def execute(runtime: Runtime, tool: str | None, args: tuple, kwargs: dict) -> ToolResult:
    raw_tool = str(tool or kwargs.get("tool", "?"))
    raw_session = kwargs.get("session") if isinstance(kwargs.get("session"), str) else ""
    try:
        payload, model = parse(tool, args, kwargs, runtime.settings.caps)
        return runtime.call(payload, model)
    except Retried as retried:
        result = as_failure(retried.error, raw_tool, raw_session)
        result.retried, result.recovered = True, retried.recovered  # type: ignore[assignment]
        return result
    except Exception as exc:  # noqa: BLE001 - the boundary: nothing escapes
        return as_failure(exc, raw_tool, raw_session)


def as_failure(exc: BaseException, raw_tool: str, raw_session: str) -> ToolResult:
    """An exception as a result whose error a model can act on."""
    kind, message, field = classify(exc)
    return ToolResult.failure(raw_tool, raw_session, kind, message, field)


def classify(exc: BaseException) -> tuple[str, str, str | None]:
    if isinstance(exc, InvalidInput):
        return "invalid_input", exc.message, exc.field
    if isinstance(exc, HandlerError):
        return exc.type, exc.message, exc.field
    if isinstance(exc, PlaywrightTimeout):
        return "timeout", _first_lines(exc), None
    if isinstance(exc, PlaywrightError):
        return "browser_error", _first_lines(exc), None
    if isinstance(exc, (TimeoutError, concurrent.futures.TimeoutError)):
        return "timeout", "the action did not finish in time", None
    log.error("unexpected error", exc_info=exc)
    return "internal", f"{type(exc).__name__}: {exc}", None


def parse(tool: str | None, args: tuple, kwargs: dict, caps: list[str]) -> tuple[TaskPayload, Any]:
    """Never trust the queue: the same checks as the client, and a few only raw messages need."""
    if args:
        raise InvalidInput("args: positional arguments are not accepted; send keyword arguments",
                           field="args")
    try:
        payload = TaskPayload.model_validate(kwargs)
    except ValidationError as exc:
        field, problem = describe_validation_error(exc)
        raise InvalidInput(f"{field}: {problem}", field=field, problem=problem) from None
    if tool == "close_session":
        return payload, None
    if tool is not None and payload.tool != tool:
        raise InvalidInput(f"tool: {payload.tool!r} sent to the task for {tool!r}", field="tool")
    with redacting():
        return payload, validate_call(payload.tool, payload.args, caps, session=payload.session)


def redact(result: ToolResult, args: Any) -> ToolResult:
    """A failure's message without any secret the call carried (typed text, form values...):
    Playwright or a handler may quote its input, and this result reaches the caller's logs and,
    as a summary, the result backend and Flower."""
    if result.ok or result.error is None:
        return result
    secrets = secret_values(args)
    if secrets:
        result.error.message = scrub(result.error.message, secrets)
        result.text = scrub(result.text, secrets)
    return result


def summary(result: ToolResult) -> dict[str, Any]:
    """What Celery's result backend (and so Flower) keeps: the outcome without page content."""
    return result.model_dump(include={"ok", "tool", "session", "worker", "error", "retried",
                                      "recovered", "timings"})


def _first_lines(exc: Exception, limit: int = 600) -> str:
    text = str(getattr(exc, "message", None) or exc).strip()
    return text if len(text) <= limit else text[:limit] + "..."
