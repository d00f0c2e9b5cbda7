"""`python -m bench [names...] [--quick]`: run benchmarks, write bench/results/*.json and the chart."""

from __future__ import annotations

import argparse
import importlib
import time

from . import chart

BENCHMARKS = ("overhead", "session_start", "throughput", "crash", "memory", "mcp_compare")


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"which to run (default all): {', '.join(BENCHMARKS)}")
    parser.add_argument("--quick", action="store_true", help="fewer samples, for a smoke run")
    args = parser.parse_args()
    unknown = sorted(set(args.names) - set(BENCHMARKS))
    if unknown:
        parser.error(f"unknown benchmark {', '.join(unknown)}; choose from {', '.join(BENCHMARKS)}")
    for name in args.names or BENCHMARKS:
        t0 = time.monotonic()
        print(f"== {name}", flush=True)
        module = importlib.import_module(f"bench.{name}")
        module.run(quick=args.quick)
        print(f"   ({time.monotonic() - t0:.0f} s)", flush=True)
    print(f"chart: {chart.draw()}")


if __name__ == "__main__":
    main()
