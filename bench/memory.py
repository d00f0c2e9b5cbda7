"""Benchmark 5, memory: proportional set size (PSS) of one worker's Chromium per open session.

One worker with the flags it has by default. Sessions are opened cumulatively (each navigates its
own tab to a small loopback page), and after each step the whole Chromium process tree is summed
from `/proc/PID/smaps_rollup`: the main browser process, found by its `--browserq-instance=`
marker among the worker's descendants, plus everything below it by parent pid (Chromium rewrites
its children's command lines, so they cannot be matched by marker). The baseline is the same tree
with the browser up and no session (one session opened and closed: the launch is lazy); the warm
pool, if the worker keeps one, is refilled before every measurement, so it is in the baseline and
in every point alike.

Per session = (PSS at N - baseline) / N; the marginal cost is the slope between two points. The
worker's Python process and the Playwright driver are reported separately (not in the target).
PSS divides shared file pages among every process mapping them, machine-wide: other Chromium
processes on the machine (counted in `foreign_chromium_processes`) make the file part smaller, so
the private part (USS) is reported too; it does not depend on what else runs.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import uuid
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from client import BrowserClient, Settings

from .common import children, fleet, site, tree, write

SETTLE = 2.0  # seconds between the last navigation of a step and its measurement
TARGET_MB = 40.0
TARGET_SESSIONS = 50
MB = 1024.0  # smaps_rollup is in kB


# -- the process tree ---------------------------------------------------------------------------

def _argv(pid: int) -> list[str]:
    """NUL-separated normally; Chromium children rewrite theirs into one space-joined string."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [a for part in raw.split(b"\0") for a in part.decode(errors="replace").split(" ") if a]


def _rollup(pid: int) -> dict[str, int]:
    out: dict[str, int] = {}
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[2] == "kB":
                out[parts[0].rstrip(":")] = int(parts[1])
    except OSError:
        pass
    return out


def _kind(argv: list[str]) -> str:
    """browser, renderer, renderer:webui (browser UI such as the omnibox popup), gpu-process,
    utility:<service>, zygote."""
    ptype = next((a.split("=", 1)[1] for a in argv if a.startswith("--type=")), None)
    if ptype is None:
        return "browser"
    if ptype == "renderer":
        if "--top-chrome-webui" in argv:
            return "renderer:webui"
        return "renderer:extension" if "--extension-process" in argv else "renderer"
    if ptype == "utility":
        sub = next((a.split("=", 1)[1] for a in argv if a.startswith("--utility-sub-type=")), "")
        return f"utility:{sub.split('.')[0]}"
    return ptype


def chromium_main(worker_pid: int) -> int | None:
    """The worker's browser: the descendant carrying the browserq marker and no --type."""
    for pid in tree(worker_pid, children()):
        argv = _argv(pid)
        if any(a.startswith("--browserq-instance=") for a in argv) and not any(
                a.startswith("--type=") for a in argv):
            return pid
    return None


def _is_chromium(argv: list[str]) -> bool:
    return bool(argv) and Path(argv[0]).name in ("chromium", "chrome", "chrome-headless-shell")


def measure(worker_pid: int) -> dict[str, Any]:
    """PSS and USS of the worker's Chromium tree, by kind of process; the worker and driver apart."""
    kids = children()
    main = chromium_main(worker_pid)
    if main is None:
        raise RuntimeError(f"no Chromium with a browserq marker below worker pid {worker_pid}")
    browser_tree = tree(main, kids)
    kinds: dict[str, dict[str, float]] = defaultdict(lambda: {"count": 0, "pss_mb": 0.0})
    totals: Counter[str] = Counter()
    for pid in browser_tree:
        r = _rollup(pid)
        kind = _kind(_argv(pid))
        kinds[kind]["count"] += 1
        kinds[kind]["pss_mb"] += r.get("Pss", 0) / MB
        totals.update({"pss": r.get("Pss", 0), "uss": r.get("Private_Clean", 0) + r.get("Private_Dirty", 0),
                       "anon": r.get("Pss_Anon", 0), "file": r.get("Pss_File", 0),
                       "shmem": r.get("Pss_Shmem", 0)})
    in_tree = set(browser_tree)
    driver = [p for p in tree(worker_pid, kids) if p != worker_pid and p not in in_tree]
    foreign = sum(1 for cs in kids.values() for p in cs if p not in in_tree and _is_chromium(_argv(p)))
    return {
        "pss_mb": totals["pss"] / MB, "uss_mb": totals["uss"] / MB,
        "pss_anon_mb": totals["anon"] / MB, "pss_file_mb": totals["file"] / MB,
        "pss_shmem_mb": totals["shmem"] / MB, "processes": len(browser_tree),
        "kinds": {k: {"count": v["count"], "pss_mb": round(v["pss_mb"], 1)} for k, v in sorted(kinds.items())},
        "worker_mb": _rollup(worker_pid).get("Pss", 0) / MB,
        "driver_mb": sum(_rollup(p).get("Pss", 0) for p in driver) / MB,
        "foreign_chromium_processes": foreign,
        "chromium_pid": main,
    }


# -- the run ------------------------------------------------------------------------------------

def _settle(client: BrowserClient, warm: int) -> None:
    """Wait for the warm pool (if any) to be full again, then let Chromium settle."""
    deadline = time.monotonic() + 15
    while warm and time.monotonic() < deadline:
        if any(w.alive and w.warm_contexts >= warm for w in client.workers()):
            break
        time.sleep(0.1)
    time.sleep(SETTLE)


def _open(client: BrowserClient, url: str, sids: list[str]) -> float:
    """Open the sessions (pipelined: the worker runs them `concurrency` at a time); seconds taken."""
    t0 = time.perf_counter()
    pending = [client.submit("browser_navigate", {"url": url}, session=sid) for sid in sids]
    for p in pending:
        p.result().raise_for_error()
    return time.perf_counter() - t0


def _config_env(browser_args: list[str] | None) -> tuple[dict[str, str], Path | None]:
    env = {"BROWSERQ_MAX_SESSIONS": str(TARGET_SESSIONS + 10)}
    if not browser_args:
        return env, None
    # Through a TOML list, not BROWSERQ_BROWSER_ARGS: the environment form is split at commas,
    # which would cut a flag such as --disable-features=A,B in two.
    fd, name = tempfile.mkstemp(prefix="browserq-memory-", suffix=".toml")
    with os.fdopen(fd, "w") as f:
        f.write("browser_args = [" + ", ".join(f'"{a}"' for a in browser_args) + "]\n")
    env["BROWSERQ_CONFIG"] = name
    return env, Path(name)


def collect(steps: tuple[int, ...], browser_args: list[str] | None = None) -> dict[str, Any]:
    env, config = _config_env(browser_args)
    warm = Settings().warm_contexts  # what the worker reads too: same environment and config
    points: list[dict[str, Any]] = []
    try:
        with site() as web, fleet(1, env=env, prefix="memory") as (redis_url, workers):
            client = BrowserClient(Settings(redis_url=redis_url))
            worker_pid = workers[0].pid
            warmup = f"mem-warmup-{uuid.uuid4().hex[:6]}"
            _open(client, web.url + "/", [warmup])
            client.close_session(warmup)
            _settle(client, warm)
            base = measure(worker_pid)
            points.append({"sessions": 0, **base, "per_session_mb": None, "marginal_mb": None,
                           "open_s": None})
            argv = _argv(base["chromium_pid"])
            opened = 0
            for n in steps:
                sids = [f"mem-{i}-{uuid.uuid4().hex[:6]}" for i in range(opened, n)]
                open_s = _open(client, web.url + "/", sids)
                opened = n
                _settle(client, warm)
                m = measure(worker_pid)
                prev = points[-1]
                m["per_session_mb"] = (m["pss_mb"] - base["pss_mb"]) / n
                m["per_session_uss_mb"] = (m["uss_mb"] - base["uss_mb"]) / n
                m["marginal_mb"] = (m["pss_mb"] - prev["pss_mb"]) / (n - prev["sessions"])
                m["open_s"] = open_s
                # Isolation, cheaply: every session (and warm context) needs a renderer of its own.
                m["page_renderers"] = m["kinds"].get("renderer", {}).get("count", 0)
                m["renderer_each"] = m["page_renderers"] >= n + warm
                points.append({"sessions": n, **m})
                print(f"   {n:>3} sessions: {m['pss_mb']:7.1f} MB PSS, {m['per_session_mb']:5.1f} MB/session "
                      f"(marginal {m['marginal_mb']:5.1f}), {m['processes']} processes", flush=True)
            client.close()
    finally:
        if config is not None:
            config.unlink(missing_ok=True)
    return {"steps": list(steps), "warm_contexts": warm, "settle_s": SETTLE,
            "extra_browser_args": browser_args or [], "chromium_argv": argv[1:], "points": points}


def _round(value: Any) -> Any:
    if isinstance(value, float):
        return round(value, 2)
    if isinstance(value, dict):
        return {k: _round(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_round(v) for v in value]
    return value


def report(raw: dict[str, Any]) -> dict[str, Any]:
    points = raw["points"]
    base, last = points[0], points[-1]
    n = last["sessions"]
    per = last["per_session_mb"]
    by_kind = {k: (v["pss_mb"] - base["kinds"].get(k, {}).get("pss_mb", 0.0)) / n
               for k, v in last["kinds"].items()}
    note = "" if n == TARGET_SESSIONS else " (quick run)"
    targets = [{"name": "memory", "target": f"<= {TARGET_MB:.0f} MB PSS per session at {TARGET_SESSIONS} sessions",
                "measured": f"{per:.1f} MB per session at {n} sessions{note}",
                "met": per <= TARGET_MB and all(p.get("renderer_each", True) for p in points)}]
    series = {"per session (average)": {str(p["sessions"]): p["per_session_mb"] for p in points[1:]},
              "marginal": {str(p["sessions"]): p["marginal_mb"] for p in points[1:]}}
    data = _round({**raw, "baseline_mb": base["pss_mb"], "per_session_by_kind_mb": by_kind,
                   "targets": targets, "series": series})
    print(f"   baseline (browser up, no session): {base['pss_mb']:.1f} MB PSS in {base['processes']} "
          f"processes; worker {base['worker_mb']:.1f} MB, driver {base['driver_mb']:.1f} MB")
    print(f"   at {n} sessions: {per:.1f} MB PSS per session ({last['per_session_uss_mb']:.1f} MB private); "
          "by process kind: " + ", ".join(f"{k} {v:.1f}" for k, v in sorted(by_kind.items(), key=lambda kv: -kv[1])
                                          if abs(v) >= 0.05))
    print(f"   worker {last['worker_mb']:.1f} MB, driver {last['driver_mb']:.1f} MB; "
          f"{last['foreign_chromium_processes']} other Chromium processes on the machine")
    print(f"   target {targets[0]['target']}: {'met' if targets[0]['met'] else 'NOT met'} ({targets[0]['measured']})")
    return data


def step_counts(quick: bool) -> tuple[int, ...]:
    return (1, 5, 10) if quick else (1, 10, 25, TARGET_SESSIONS)


def run(quick: bool = False) -> dict[str, Any]:
    data = report(collect(step_counts(quick)))
    write("memory", data)
    return data


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.memory", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--arg", action="append", default=[], metavar="FLAG",
                        help="an extra Chromium flag for a comparison run (printed, not written)")
    args = parser.parse_args()
    if args.arg:
        report(collect(step_counts(args.quick), args.arg))
    else:
        run(quick=args.quick)


if __name__ == "__main__":
    main()
