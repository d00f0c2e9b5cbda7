"""Benchmark 6, MCP beside MCP: the same tool calls through `browserq mcp` and through Playwright
MCP (npm `@playwright/mcp`, as shipped), both over stdio from the official `mcp` Python SDK client,
interleaved call by call so machine noise lands on both alike.

A third participant, kept out of the series and targets, calls browserq's AsyncBrowserClient
directly: its difference from `browserq mcp` is what the MCP layer (stdio, JSON-RPC, the SDK on
both ends) costs, which tells a slow tool's queue path apart from its protocol path."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from client import AsyncBrowserClient, Settings
from worker.binary import detect_browser

from .common import fleet, site, summary, write

TOOLS = ("browser_navigate", "browser_snapshot", "browser_click", "browser_type",
         "browser_evaluate")
BROWSERQ, PLAYWRIGHT, DIRECT = "browserq mcp", "playwright mcp", "browserq client (no MCP)"
PW_MCP_VERSION = "0.0.83"
NODE_DIR = Path(__file__).parent / ".node"
PW_MCP_DIR = NODE_DIR / "node_modules" / "@playwright" / "mcp"
PW_MCP_FLAGS = ["--headless", "--isolated", "--no-sandbox"]
CHROMIUM_ARGS = ["--disable-background-networking", "--disable-component-update", "--no-first-run",
                 "--disable-sync", "--disable-quic", "--disable-gpu"]
EVAL_RESULT = re.compile(r"Result:?\s*2\b")
REFS = {"Go": re.compile(r'button "Go" \[ref=([^\]]+)\]'),
        "Name": re.compile(r'textbox "Name" \[ref=([^\]]+)\]')}
CALL_TIMEOUT = 30.0

Invoke = Callable[[str, dict[str, Any]], Awaitable[str]]


class Participant:
    """One way of making the tool calls, with the state the calls depend on (the refs of its own
    latest snapshot) and the argument name its schemas use for an element reference."""

    def __init__(self, label: str, invoke: Invoke, ref_key: str) -> None:
        self.label = label
        self.invoke = invoke
        self.ref_key = ref_key
        self.refs: dict[str, str] = {}
        self.samples: dict[str, list[float]] = {t: [] for t in TOOLS}

    def arguments(self, tool: str, url: str) -> dict[str, Any]:
        if tool == "browser_navigate":
            return {"url": f"{url}/"}
        if tool == "browser_click":
            return {self.ref_key: self.refs["Go"], "element": "Go button"}
        if tool == "browser_type":
            return {self.ref_key: self.refs["Name"], "element": "Name input", "text": "hello"}
        if tool == "browser_evaluate":
            return {"function": "() => 1+1"}
        return {}

    async def step(self, tool: str, url: str, record: bool) -> None:
        args = self.arguments(tool, url)
        t0 = time.perf_counter()
        text = await self.invoke(tool, args)
        ms = (time.perf_counter() - t0) * 1000
        self.check(tool, text)
        if record:
            self.samples[tool].append(ms)

    def check(self, tool: str, text: str) -> None:
        """A fast answer that did the wrong thing is no result, so each answer is read."""
        if tool == "browser_snapshot":
            found = {name: rx.search(text) for name, rx in REFS.items()}
            missing = [name for name, m in found.items() if m is None]
            if missing:
                raise RuntimeError(f"{self.label}: no ref for {missing} in:\n{text[:2000]}")
            self.refs = {name: m.group(1) for name, m in found.items() if m}
        elif tool == "browser_evaluate" and not EVAL_RESULT.search(text):
            raise RuntimeError(f"{self.label}: browser_evaluate did not return 2:\n{text[:2000]}")


def mcp_invoker(label: str, session: ClientSession) -> Invoke:
    async def invoke(tool: str, args: dict[str, Any]) -> str:
        result = await session.call_tool(tool, args, read_timeout_seconds=CALL_TIMEOUT)
        text = "\n".join(getattr(c, "text", "") for c in result.content)
        if result.is_error:
            raise RuntimeError(f"{label}: {tool}({args}) failed:\n{text[:2000]}")
        return text
    return invoke


def direct_invoker(client: AsyncBrowserClient, session: str) -> Invoke:
    async def invoke(tool: str, args: dict[str, Any]) -> str:
        result = await client.call(tool, args, session=session)
        if not result.ok:
            raise RuntimeError(f"{DIRECT}: {tool}({args}) failed:\n{result.text[:2000]}")
        return result.text
    return invoke


def ensure_playwright_mcp() -> Path:
    """Installs the pinned Playwright MCP into the git-ignored bench/.node, without the browser
    download its dependencies could attempt (Chromium comes from the system)."""
    manifest = PW_MCP_DIR / "package.json"
    if not manifest.exists() or json.loads(manifest.read_text())["version"] != PW_MCP_VERSION:
        subprocess.run(["npm", "install", "--prefix", str(NODE_DIR), "--no-audit", "--no-fund",
                        f"@playwright/mcp@{PW_MCP_VERSION}"], check=True,
                       env={**os.environ, "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1"})
    bin_entry = json.loads(manifest.read_text())["bin"]
    script = bin_entry if isinstance(bin_entry, str) else next(iter(bin_entry.values()))
    return PW_MCP_DIR / script


def chromium() -> Path:
    path = detect_browser("")
    if not path:
        raise RuntimeError("no Chromium found for Playwright MCP")
    return Path(path)


def browserq_params(redis_url: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "worker", "mcp"],
                                 env={"BROWSERQ_REDIS_URL": redis_url},
                                 cwd=str(Path(__file__).resolve().parent.parent))


def playwright_argv(cli: Path, config: Path, out: Path) -> list[str]:
    return [str(cli), "--executable-path", str(chromium()), *PW_MCP_FLAGS,
            "--config", str(config), "--output-dir", str(out)]


def playwright_params(cli: Path, workdir: Path) -> StdioServerParameters:
    """Runs in a scratch directory: Playwright MCP writes snapshot and console files beside it."""
    config = workdir / "config.json"
    config.write_text(json.dumps({"browser": {"launchOptions": {"args": CHROMIUM_ARGS}}}))
    return StdioServerParameters(command="node", args=playwright_argv(cli, config, workdir / "out"),
                                 env={"PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1"}, cwd=str(workdir))


async def connect(stack: AsyncExitStack, label: str, params: StdioServerParameters,
                  startup: dict[str, float]) -> Participant:
    """Opens a connection and reads the click schema for the name of its element-ref argument."""
    t0 = time.perf_counter()
    read, write_ = await stack.enter_async_context(stdio_client(params))
    session = await stack.enter_async_context(ClientSession(read, write_))
    await session.initialize()
    startup[label] = (time.perf_counter() - t0) * 1000
    tools = {t.name: t for t in (await session.list_tools()).tools}
    missing = [t for t in TOOLS if t not in tools]
    if missing:
        raise RuntimeError(f"{label} lacks tools {missing}")
    props = tools["browser_click"].input_schema.get("properties", {})
    ref_key = "ref" if "ref" in props else "target"
    participant = Participant(label, mcp_invoker(label, session), ref_key)
    check_schemas(participant, {t: tools[t].input_schema for t in TOOLS})
    return participant


def check_schemas(p: Participant, schemas: dict[str, dict[str, Any]]) -> None:
    """Fails before timing anything if a server names an argument differently than we send it."""
    p.refs = {name: "e1" for name in REFS}
    for tool, schema in schemas.items():
        sent = set(p.arguments(tool, "http://127.0.0.1"))
        unknown = sent - set(schema.get("properties", {}))
        missing = set(schema.get("required", [])) - sent
        if unknown or missing:
            raise RuntimeError(f"{p.label} {tool}: schema lacks {unknown or '-'}, "
                               f"also needs {missing or '-'}")
    p.refs = {}


async def rounds(pair: list[Participant], extra: Participant, url: str, n: int) -> None:
    """One warm-up round, then n recorded; each tool goes to both servers back to back, which one
    first alternating by round, then to the diagnostic participant."""
    for i in range(n + 1):
        order = [*(pair if i % 2 == 0 else pair[::-1]), extra]
        for tool in TOOLS:
            for p in order:
                await p.step(tool, url, record=i > 0)


async def measure(redis_url: str, site_url: str, n: int,
                  cli: Path) -> tuple[list[Participant], dict[str, float]]:
    startup: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="pw-mcp-") as scratch:
        async with AsyncExitStack() as stack:
            bq = await connect(stack, BROWSERQ, browserq_params(redis_url), startup)
            pw = await connect(stack, PLAYWRIGHT, playwright_params(cli, Path(scratch)), startup)
            client = AsyncBrowserClient(Settings(redis_url=redis_url))
            await stack.enter_async_context(client)
            sid = f"bench-direct-{uuid.uuid4().hex[:8]}"
            stack.push_async_callback(client.close_session, sid)
            direct = Participant(DIRECT, direct_invoker(client, sid), "ref")
            await rounds([bq, pw], direct, site_url, n)
    return [bq, pw, direct], startup


def navigate_then_snapshot(p: Participant) -> list[float]:
    """Per round, what an agent waits for to see a new page: Playwright MCP takes (and files) a
    snapshot inside browser_navigate, so its browser_snapshot is a page's second, cheap one."""
    return [a + b for a, b in zip(p.samples["browser_navigate"], p.samples["browser_snapshot"],
                                    strict=True)]


def report(participants: list[Participant], startup: dict[str, float], n: int,
           cli: Path) -> dict[str, Any]:
    stats = {p.label: {t: summary(p.samples[t]) for t in TOOLS} for p in participants}
    med = {label: {t: s["median"] for t, s in per.items()} for label, per in stats.items()}
    return {
        "rounds": n, "tools": list(TOOLS), "stats": stats,
        "ratio": {t: med[BROWSERQ][t] / med[PLAYWRIGHT][t] for t in TOOLS},
        "mcp_overhead_ms": {t: med[BROWSERQ][t] - med[DIRECT][t] for t in TOOLS},
        "navigate_then_snapshot": {p.label: summary(navigate_then_snapshot(p))
                                   for p in participants},
        "startup_ms": startup,
        "series": {BROWSERQ: med[BROWSERQ], PLAYWRIGHT: med[PLAYWRIGHT]},
        "targets": [target(tool, med[BROWSERQ][tool], med[PLAYWRIGHT][tool]) for tool in TOOLS],
        "notes": notes(cli),
    }


def target(tool: str, ours: float, theirs: float) -> dict[str, Any]:
    return {"name": f"mcp {tool.removeprefix('browser_')}",
            "target": f"browserq no slower than Playwright MCP on {tool}",
            "measured": f"{ours:.1f} ms vs {theirs:.1f} ms", "met": ours <= theirs}


def notes(cli: Path) -> str:
    argv = " ".join(playwright_argv(cli.relative_to(NODE_DIR.parent.parent), Path("<config>"),
                                    Path("<scratch>/out")))
    return (f"Playwright MCP {PW_MCP_VERSION} (npm @playwright/mcp, unpatched) started as "
            f"`node {argv}` in a scratch directory, <config> giving launchOptions.args "
            f"{CHROMIUM_ARGS}; browserq as `python -m worker mcp` against 1 worker. Both over "
            "stdio from the mcp Python SDK client, one warm-up round, then each call to both "
            "servers back to back, which goes first alternating by round. As shipped, Playwright "
            "MCP waits --timeout-settle (default 500 ms) after click and evaluate, and takes a "
            "snapshot inside browser_navigate (written to a file), so its browser_snapshot is a "
            "page's second one: "
            f"see navigate_then_snapshot. '{DIRECT}' is AsyncBrowserClient on the same fleet, "
            "for the MCP layer's share (mcp_overhead_ms).")


def print_table(data: dict[str, Any]) -> None:
    med = {label: {t: s["median"] for t, s in per.items()} for label, per in data["stats"].items()}
    for label, s in data["navigate_then_snapshot"].items():
        med[label]["navigate+snapshot"] = s["median"]
    print(f"{'tool':<18} {'browserq mcp':>13} {'playwright mcp':>15} {'ratio':>6} "
          f"{'bq client':>10}  (median ms)")
    for t in (*TOOLS, "navigate+snapshot"):
        print(f"{t:<18} {med[BROWSERQ][t]:13.1f} {med[PLAYWRIGHT][t]:15.1f} "
              f"{med[BROWSERQ][t] / med[PLAYWRIGHT][t]:6.2f} {med[DIRECT][t]:10.1f}")
    print("startup (spawn + initialize): " +
          ", ".join(f"{k} {v:.0f} ms" for k, v in data["startup_ms"].items()))


def run(quick: bool = False) -> dict[str, Any]:
    n = 3 if quick else 15
    cli = ensure_playwright_mcp()
    with fleet(1, prefix="mcp") as (redis_url, _), site() as s:
        participants, startup = asyncio.run(measure(redis_url, s.url, n, cli))
    data = report(participants, startup, n, cli)
    write("mcp_compare", data)
    print_table(data)
    return data


if __name__ == "__main__":
    run()
