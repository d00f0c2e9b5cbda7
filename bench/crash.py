"""Benchmark 4, crash recovery: from Chromium being killed (SIGKILL to its main process, by pid)
under an in-flight task to that task's retried result, which must say it was retried."""

from __future__ import annotations

import os
import signal
import time
import uuid
from typing import Any

from client import BrowserClient, Settings

from .common import Site, fleet, site, summary, write


def browser_pid(client: BrowserClient) -> int:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        worker = client.workers()[0]
        if worker.browser == "ready" and worker.browser_pid:
            return worker.browser_pid
        time.sleep(0.05)
    raise RuntimeError("the worker reports no running browser")


def one_crash(client: BrowserClient, web: Site, sid: str) -> float:
    token = uuid.uuid4().hex
    pid = browser_pid(client)
    pending = client.submit("browser_navigate", {"url": f"{web.url}/hold?{token}"}, session=sid)
    while token not in web.held:
        time.sleep(0.005)
    time.sleep(0.05)  # the navigation is surely in flight
    killed = time.perf_counter()
    os.kill(pid, signal.SIGKILL)
    result = pending.result()
    elapsed = (time.perf_counter() - killed) * 1000
    if not (result.ok and result.retried and result.recovered == "browser_crash"):
        raise RuntimeError(f"the task was not recovered: {result}")
    return elapsed


def run(quick: bool = False) -> dict[str, Any]:
    n = 4 if quick else 15
    with site() as web, fleet(1) as (url, _):
        client = BrowserClient(Settings(redis_url=url))
        sid = "bench-crash"
        client.call("browser_navigate", {"url": web.url + "/"}, session=sid).raise_for_error()
        samples = []
        for _ in range(n):
            samples.append(one_crash(client, web, sid))
            client.call("browser_navigate", {"url": web.url + "/"}, session=sid).raise_for_error()
            time.sleep(0.5)
        client.close()
    stats = summary(samples)
    data = {"kills": n, "stats": stats, "series": {"recovery": {"median": stats["median"], "p95": stats["p95"]}},
            "targets": [{"name": "crash recovery", "target": "median < 1 s from kill to retried result",
                         "measured": f"{stats['median']:.0f} ms", "met": stats["median"] < 1000}]}
    write("crash", data)
    print(f"kill -> retried result: median {stats['median']:.0f} ms, p95 {stats['p95']:.0f} ms ({n} kills)")
    return data


if __name__ == "__main__":
    run()
