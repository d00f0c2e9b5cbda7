"""Benchmark 1, queue overhead: the same actions through browserq and through Playwright called
in-process, interleaved round by round, plus a bare Celery round trip (a no-op task) in the same run."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from playwright.sync_api import Page, sync_playwright

from client import BrowserClient, Settings
from client.protocol import queue_name
from client.transport import make_celery
from worker.browser import detect_browser, launch_args
from worker.tasks import PING_TASK

from .common import fleet, site, summary, timed, write

ACTIONS = ("evaluate", "click", "navigate", "snapshot")
PAUSE = 0.02  # before each timed call: the previous call's after-work (either side's) is done


def browserq_actions(session: Any, url: str) -> dict[str, Callable[[], Any]]:
    return {
        "evaluate": lambda: session.evaluate("() => 1 + 1").raise_for_error(),
        "click": lambda: session.click(selector="#go").raise_for_error(),
        "navigate": lambda: session.navigate(url).raise_for_error(),
        "snapshot": lambda: session.snapshot().raise_for_error(),
    }


def playwright_actions(page: Page, url: str) -> dict[str, Callable[[], Any]]:
    """The Playwright calls each browserq tool makes (worker/handlers), made in-process: what is
    left between the two sides is what the queue and the worker's bookkeeping add."""
    def navigate() -> None:
        page.goto(url)
        page.title()
        page.evaluate("() => document.body.innerText.slice(0, 500)")
        page.locator(":root").count()

    def click() -> None:
        page.locator("#go").click()
        page.title()

    def snapshot() -> None:
        page.aria_snapshot(mode="ai")
        page.title()

    return {"evaluate": lambda: page.evaluate("() => 1 + 1"), "click": click, "navigate": navigate,
            "snapshot": snapshot}


def paused(fn: Callable[[], Any]) -> float:
    time.sleep(PAUSE)
    return timed(fn)


def run(quick: bool = False) -> dict[str, Any]:
    rounds = 30 if quick else 150
    samples: dict[str, dict[str, list[float]]] = {"browserq": {}, "playwright": {}, "celery": {}}
    parts: dict[str, list[float]] = {"queued": [], "executed": []}
    with site() as web, fleet(1) as (redis_url, workers), sync_playwright() as pw:
        settings = Settings(redis_url=redis_url)
        client = BrowserClient(settings)
        session = client.session("bench-overhead")
        browser = pw.chromium.launch(executable_path=detect_browser(""), args=launch_args(settings, "bench"))
        page = browser.new_context().new_page()
        page.goto(web.url + "/")
        session.navigate(web.url + "/").raise_for_error()
        celery = make_celery(settings, "bench")
        ping = lambda: celery.send_task(PING_TASK, queue=queue_name(workers[0].name)).get(timeout=10)  # noqa: E731
        sides = {"browserq": browserq_actions(session, web.url + "/"),
                 "playwright": playwright_actions(page, web.url + "/")}
        for _ in range(5):  # warm both up
            for actions in sides.values():
                for fn in actions.values():
                    fn()
            ping()
        for i in range(rounds):
            order = ("browserq", "playwright") if i % 2 == 0 else ("playwright", "browserq")
            for action in ACTIONS:
                for side in order:
                    samples[side].setdefault(action, []).append(paused(sides[side][action]))
            samples["celery"].setdefault("no-op task", []).append(paused(ping))
            result = session.evaluate("() => 1 + 1")
            parts["queued"].append(result.timings.queued)
            parts["executed"].append(result.timings.executed)
        browser.close()
        client.close()
    return report(samples, parts, rounds)


def report(samples: dict[str, dict[str, list[float]]], parts: dict[str, list[float]], rounds: int) -> dict[str, Any]:
    stats = {side: {a: summary(xs) for a, xs in per.items()} for side, per in samples.items()}
    added = {a: {"median": stats["browserq"][a]["median"] - stats["playwright"][a]["median"],
                 "p95": stats["browserq"][a]["p95"] - stats["playwright"][a]["p95"]} for a in ACTIONS}
    evaluate = added["evaluate"]
    targets = [
        {"name": "queue overhead, evaluate, median", "target": "<= 1.5 ms added",
         "measured": f"{evaluate['median']:.2f} ms", "met": evaluate["median"] <= 1.5},
        {"name": "queue overhead, evaluate, p95", "target": "<= 3 ms added",
         "measured": f"{evaluate['p95']:.2f} ms", "met": evaluate["p95"] <= 3.0},
    ]
    data = {"rounds": rounds, "stats": stats, "added_ms": added,
            "evaluate_breakdown_ms": {k: summary(v) for k, v in parts.items()}, "targets": targets,
            "series": {side: {a: s["median"] for a, s in stats[side].items()} for side in stats}}
    write("overhead", data)
    print(f"{'action':<10} {'browserq':>10} {'playwright':>11} {'added':>8} {'added p95':>10}")
    for a in ACTIONS:
        print(f"{a:<10} {stats['browserq'][a]['median']:>9.2f}  {stats['playwright'][a]['median']:>10.2f} "
              f"{added[a]['median']:>8.2f} {added[a]['p95']:>10.2f}")
    print(f"bare celery no-op round trip: {stats['celery']['no-op task']['median']:.2f} ms median")
    return data


if __name__ == "__main__":
    run()
