"""Benchmark 3, throughput: cheap actions (evaluate `1 + 1`) per second with 1, 5, 20 and 50
concurrent sessions, each calling back to back, on one worker and on two."""

from __future__ import annotations

import threading
import time
from typing import Any

from client import BrowserClient, Settings

from .common import cpu_by_group, fleet, process_groups, write

LEVELS = (1, 5, 20, 50)
CALL = ("browser_evaluate", {"function": "() => 1 + 1"})


def rate(client: BrowserClient, sessions: list[str], seconds: float) -> float:
    """Completed calls per second while every session calls back to back."""
    stop = time.monotonic() + seconds
    counts = [0] * len(sessions)
    errors: list[str] = []

    def loop(i: int, sid: str) -> None:
        while time.monotonic() < stop:
            result = client.call(*CALL, session=sid)
            if not result.ok:
                errors.append(f"{sid}: {result.error}")
                return
            counts[i] += 1

    threads = [threading.Thread(target=loop, args=(i, sid)) for i, sid in enumerate(sessions)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise RuntimeError(f"{len(errors)} call(s) failed, first: {errors[0]}")
    return sum(counts) / (time.monotonic() - t0)


def measure(workers: int, seconds: float) -> tuple[dict[int, float], dict[str, float]]:
    """Rates by session count, and CPU ms per call by process during the 20-session run."""
    env = {"BROWSERQ_MAX_SESSIONS": str(max(LEVELS))}
    with fleet(workers, env=env, prefix=f"tput{workers}") as (url, procs):
        client = BrowserClient(Settings(redis_url=url))
        sessions = [f"tput-{i}" for i in range(max(LEVELS))]
        for sid in sessions:
            client.call(*CALL, session=sid).raise_for_error()
        rates, cpu = {}, {}
        groups = process_groups([p.pid for p in procs])
        for n in LEVELS:
            rate(client, sessions[:n], 1.0)  # warm-up at this level
            before = cpu_by_group(groups)
            rates[n] = rate(client, sessions[:n], seconds)
            if n == 20:
                calls = rates[n] * seconds
                cpu = {g: round((ms - before[g]) / calls, 3) for g, ms in cpu_by_group(groups).items()}
            print(f"   {workers} worker(s), {n:>2} sessions: {rates[n]:7.1f} calls/s", flush=True)
        client.close()
    return rates, cpu


def run(quick: bool = False) -> dict[str, Any]:
    seconds = 2.0 if quick else 6.0
    (one, cpu_one), (two, _) = measure(1, seconds), measure(2, seconds)
    scale = one[20] / one[1]
    targets = [
        {"name": "throughput scaling", "target": "20 sessions >= 4x one session (one worker)",
         "measured": f"{scale:.2f}x ({one[20]:.0f} vs {one[1]:.0f} calls/s)", "met": scale >= 4},
        {"name": "two workers", "target": "two workers: no throughput lost against one (20 sessions, 3% noise allowed)",
         "measured": f"{two[20]:.0f} vs {one[20]:.0f} calls/s", "met": two[20] >= one[20] * 0.97},
    ]
    print("   CPU ms per call, 20 sessions on one worker: " + ", ".join(f"{g} {v:.2f}" for g, v in cpu_one.items()))
    data = {"seconds": seconds, "one_worker": one, "two_workers": two, "targets": targets,
            "cpu_ms_per_call": cpu_one, "cpu_ms_per_call_total": round(sum(cpu_one.values()), 2),
            "series": {"1 worker": {str(k): v for k, v in one.items()},
                       "2 workers": {str(k): v for k, v in two.items()}}}
    write("throughput", data)
    return data


if __name__ == "__main__":
    run()
