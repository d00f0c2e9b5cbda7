"""`python -m bench.report`: the targets-versus-measured table (Markdown) from bench/results/*.json,
as pasted into the README's Performance section."""

from __future__ import annotations

import json

from .chart import PANELS
from .common import RESULTS


def table() -> str:
    rows = ["| benchmark | target | measured | met |", "| --- | --- | --- | --- |"]
    machine = {}
    for name in PANELS:
        path = RESULTS / f"{name}.json"
        if not path.exists():
            continue
        result = json.loads(path.read_text())
        machine = machine or result["machine"]
        for t in result.get("targets", []):
            rows.append(f"| {t['name']} | {t['target']} | {t['measured']} | {'yes' if t['met'] else '**no**'} |")
    rows.append("")
    rows.append(f"Measured on {machine.get('cpu', '?')}, {machine.get('cores', '?')} cores, "
                f"{machine.get('memory_gb', '?')} GB; {machine.get('chromium', '?')}; Playwright "
                f"{machine.get('playwright', '?')}, Celery {machine.get('celery', '?')}, "
                f"{machine.get('redis_server', '?')}, Python {machine.get('python', '?')}.")
    return "\n".join(rows)


if __name__ == "__main__":
    print(table())
