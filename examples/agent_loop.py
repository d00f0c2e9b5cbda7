"""A small agent loop that drives browserq through tool definitions, offline.

The "model" is a scripted stand-in with the same interface as a chat API: it receives the tool
definitions and the conversation, and answers with tool calls in OpenAI's or Anthropic's shape
(OpenAI: `tool_calls[i].function.arguments` as a JSON string; Anthropic: `tool_use` blocks with an
`input` dict). Swap `ScriptedModel` for a real API client and the loop stays the same.

    browserq up --workers 1 &                     # a local fleet (prints the Redis URL to export)
    python examples/agent_loop.py http://127.0.0.1:8000/ --format anthropic

Browser tools are exposed only when opted in (seed 000): set BROWSERQ_ENABLED=true or pass
--enable; otherwise the agent runs without browser tools and says so.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable
from typing import Any

from client import BrowserClient, Settings
from client.agents import Dispatcher, register_browser_tools

Plan = list[tuple[str, Callable[[str], dict[str, Any]]]]


def default_plan(url: str) -> Plan:
    """Open the page, read its tree, click the first link by ref, then look at the result."""
    return [
        ("browser_navigate", lambda _last: {"url": url}),
        ("browser_snapshot", lambda _last: {}),
        ("browser_click", lambda last: {"ref": first_ref(last, "link"), "element": "first link"}),
        ("browser_take_screenshot", lambda _last: {}),
    ]


def first_ref(snapshot_text: str, role: str) -> str:
    match = re.search(rf"{role} [^\n]*\[ref=(s\d+e\d+)\]", snapshot_text)
    if not match:
        raise RuntimeError(f"the scripted model found no {role} in the snapshot")
    return match.group(1)


class ScriptedModel:
    """Plays a fixed plan; each step's arguments may depend on the previous tool result's text."""

    def __init__(self, plan: Plan, format: str) -> None:
        self.plan, self.format, self.step = plan, format, 0

    def respond(self, tools: list[dict[str, Any]], last_text: str) -> dict[str, Any]:
        """The assistant's next message: one tool call, or a final answer once the plan is done."""
        offered = {t["function"]["name"] if "function" in t else t["name"] for t in tools}
        if self.step >= len(self.plan):
            return self._final("Done: I opened the page, followed its first link and looked at it.")
        name, make_args = self.plan[self.step]
        if name not in offered:
            return self._final(f"I cannot browse: {name} is not available.")
        self.step += 1
        call_id = f"call_{self.step}"
        args = make_args(last_text)
        if self.format == "openai":
            return {"role": "assistant", "content": None, "tool_calls": [{
                "id": call_id, "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)}}]}
        return {"role": "assistant", "content": [
            {"type": "tool_use", "id": call_id, "name": name, "input": args}]}

    def _final(self, text: str) -> dict[str, Any]:
        if self.format == "openai":
            return {"role": "assistant", "content": text}
        return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def run_agent(client: BrowserClient, model: ScriptedModel, settings: Settings,
              session: str = "example-agent", max_turns: int = 10) -> list[dict[str, Any]]:
    """The loop: offer tools, run each tool call through the dispatcher, feed results back."""
    tools: list[dict[str, Any]] = []
    register_browser_tools(tools, settings, format=model.format)  # [] unless enabled
    dispatcher = Dispatcher(client, session=session)
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Open the page and follow its first link."}]
    last_text = ""
    for _ in range(max_turns):
        reply = model.respond(tools, last_text)
        messages.append(reply)
        results, last_text = _run_calls(dispatcher, model.format, reply)
        if not results:
            break
        messages.extend(results)
    return messages


def _run_calls(dispatcher: Dispatcher, format: str, reply: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    """The messages answering the reply's tool calls, and the last result's text."""
    if format == "openai":
        out = [m for call in reply.get("tool_calls") or [] for m in dispatcher.openai_messages(call)]
        texts = [m["content"] for m in out if m["role"] == "tool"]
        return out, texts[-1] if texts else ""
    uses = [b for b in reply["content"] if b["type"] == "tool_use"]
    blocks = [dispatcher.anthropic(b) for b in uses]
    text = blocks[-1]["content"][0]["text"] if blocks else ""
    return ([{"role": "user", "content": blocks}] if blocks else []), text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("--format", choices=("openai", "anthropic"), default="openai")
    parser.add_argument("--enable", action="store_true", help="opt in to browser tools (BROWSERQ_ENABLED)")
    ns = parser.parse_args()
    settings = Settings(enabled=True) if ns.enable else Settings()
    with BrowserClient(settings) as client:
        messages = run_agent(client, ScriptedModel(default_plan(ns.url), ns.format), settings)
        client.close_session("example-agent")
    for m in messages:
        print(json.dumps(m)[:300])


if __name__ == "__main__":
    main()
