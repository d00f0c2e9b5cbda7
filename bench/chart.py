"""One PNG with a panel per benchmark, drawn from whatever `bench/results/*.json` exist."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .common import RESULTS  # noqa: E402

PANELS = {
    "overhead": ("Per-action latency, median (ms)", "ms"),
    "session_start": ("New session's first call, median (ms)", "ms"),
    "throughput": ("Calls per second by concurrent sessions", "calls/s"),
    "crash": ("Kill Chromium -> retried result (ms)", "ms"),
    "memory": ("Chromium PSS per session (MB)", "MB"),
    "mcp_compare": ("browserq mcp vs Playwright MCP, median (ms)", "ms"),
}


def draw(path: Path = RESULTS / "bench.png") -> Path:
    results = {name: json.loads((RESULTS / f"{name}.json").read_text())
               for name in PANELS if (RESULTS / f"{name}.json").exists()}
    fig, axes = plt.subplots(2, 3, figsize=(16, 9))
    for ax, (name, (title, unit)) in zip(axes.flat, PANELS.items()):
        ax.set_title(title, fontsize=10)
        if name in results:
            bars(ax, results[name]["series"], unit)
            targets = results[name].get("targets", [])
            ax.set_xlabel("; ".join(("met: " if t["met"] else "NOT met: ") + t["target"] for t in targets),
                          fontsize=7, wrap=True)
        else:
            ax.text(0.5, 0.5, "not run", ha="center", va="center")
    machine = next(iter(results.values()), {}).get("machine", {})
    fig.suptitle(f"browserq benchmarks: {machine.get('cpu', '?')}, {machine.get('cores', '?')} cores, "
                 f"{machine.get('chromium', '')}", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def bars(ax: Any, series: dict[str, dict[str, float]], unit: str) -> None:
    """Grouped bars: one group per key of the inner dicts, one colour per series (a flat
    {label: number} is one group)."""
    series = {label: v if isinstance(v, dict) else {"median": v} for label, v in series.items()}
    groups = list(dict.fromkeys(k for values in series.values() for k in values))
    width = 0.8 / max(len(series), 1)
    for i, (label, values) in enumerate(series.items()):
        xs = [g + i * width for g in range(len(groups))]
        ax.bar(xs, [values.get(g, 0) for g in groups], width, label=label)
    ax.set_xticks([g + width * (len(series) - 1) / 2 for g in range(len(groups))])
    ax.set_xticklabels([g.removeprefix("browser_") for g in groups], fontsize=8)
    ax.set_ylabel(unit)
    ax.legend(fontsize=7)


if __name__ == "__main__":
    print(draw())
