"""Benchmark 2, session start: from a new session's first call to its result, on a warm worker,
with the warm pool (the default) and without it, beside in-process `new_context` + `new_page`."""

from __future__ import annotations

import time
import uuid
from typing import Any

from playwright.sync_api import sync_playwright

from client import BrowserClient, Settings
from worker.browser import detect_browser, launch_args

from .common import fleet, summary, timed, write

SETTLE = 0.4  # lets the pool refill between sessions, as it would between real arrivals


def browserq_starts(n: int, warm: int) -> list[float]:
    with fleet(1, env={"BROWSERQ_WARM_CONTEXTS": str(warm)}, prefix=f"start{warm}") as (url, _):
        client = BrowserClient(Settings(redis_url=url))
        client.call("browser_evaluate", {"function": "() => 1"}, session="warmup").raise_for_error()
        samples = []
        for _ in range(n):
            time.sleep(SETTLE)
            sid = f"start-{uuid.uuid4().hex[:8]}"
            samples.append(timed(lambda: client.call(  # noqa: B023
                "browser_evaluate", {"function": "() => 1 + 1"}, session=sid).raise_for_error()))
            client.close_session(sid)
        client.close()
    return samples


def in_process_starts(n: int) -> list[float]:
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=detect_browser(""),
                                     args=launch_args(Settings(), "bench-start"))
        samples = []
        for _ in range(n):
            time.sleep(SETTLE)
            t0 = time.perf_counter()
            context = browser.new_context()
            context.new_page().evaluate("() => 1 + 1")
            samples.append((time.perf_counter() - t0) * 1000)
            context.close()
        browser.close()
    return samples


def run(quick: bool = False) -> dict[str, Any]:
    n = 8 if quick else 40
    series = {"browserq (warm pool)": browserq_starts(n, 2), "browserq (no pool)": browserq_starts(n, 0),
              "in-process new_context + new_page": in_process_starts(n)}
    stats = {k: summary(v) for k, v in series.items()}
    warm = stats["browserq (warm pool)"]["median"]
    data = {"samples": n, "stats": stats, "series": {k: s["median"] for k, s in stats.items()},
            "targets": [{"name": "session start", "target": "median < 30 ms",
                         "measured": f"{warm:.1f} ms", "met": warm < 30}]}
    write("session_start", data)
    for k, s in stats.items():
        print(f"{k:<36} median {s['median']:7.1f} ms   p95 {s['p95']:7.1f} ms")
    return data


if __name__ == "__main__":
    run()
