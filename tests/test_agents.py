"""Tool definitions for OpenAI, Anthropic and MCP; the dispatcher round trip to a real worker;
seed 000's opt-in; `browserq tools`; the offline agent example."""

from __future__ import annotations

import base64
import importlib.util
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner

from client import BrowserClient, Settings
from client.agents import (
    FORMATS, Dispatcher, parameters_schema, register_browser_tools, tool_definitions,
)
from client.tools.catalogue import DIALECTS, TOOLS, tools_for
from worker.cli import app

from .site import FixtureSite
from .test_tools import ref_of

ROOT = Path(__file__).resolve().parent.parent
NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
ENVELOPE = {
    "openai": lambda d: (set(d) == {"type", "function"} and d["type"] == "function"
                         and set(d["function"]) == {"name", "description", "parameters"}),
    "anthropic": lambda d: set(d) == {"name", "description", "input_schema"},
    "mcp": lambda d: set(d) == {"name", "description", "inputSchema"},
}


def parts(d: dict[str, Any], fmt: str) -> tuple[str, str, dict[str, Any]]:
    if fmt == "openai":
        f = d["function"]
        return f["name"], f["description"], f["parameters"]
    return d["name"], d["description"], d["input_schema" if fmt == "anthropic" else "inputSchema"]


def walk(node: Any) -> Any:
    """Every sub-schema (properties' values, items, anyOf members...), never property names."""
    if isinstance(node, dict):
        yield node
        for k, v in node.items():
            children = v.values() if k == "properties" and isinstance(v, dict) else [v]
            for c in children:
                yield from walk(c)
    elif isinstance(node, list):
        for v in node:
            yield from walk(v)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("caps", [(), ("vision", "pdf")])
def test_every_definition_follows_its_formats_schema_rules(fmt: str, dialect: str, caps: tuple[str, ...]) -> None:
    defs = tool_definitions(fmt, caps, dialect)  # type: ignore[arg-type]
    assert [parts(d, fmt)[0] for d in defs] == list(tools_for(caps, dialect))
    for d in defs:
        assert ENVELOPE[fmt](d), d
        name, description, schema = parts(d, fmt)
        assert NAME.match(name)
        assert description and description == description.strip() and "\n " not in description
        assert schema["type"] == "object" and isinstance(schema["properties"], dict)
        assert set(schema.get("required", [])) <= set(schema["properties"])
        jsonschema.Draft202012Validator.check_schema(schema)  # a valid JSON Schema
        assert "$defs" not in json.dumps(schema) and "$ref" not in json.dumps(schema)
        for sub in walk(schema):
            assert "title" not in sub or not isinstance(sub["title"], str)
            if sub.get("type") == "object" and "properties" in sub:
                assert set(sub.get("required", [])) <= set(sub["properties"])


def test_capability_tools_only_when_asked_and_descriptions_are_the_docstrings() -> None:
    plain = {d["name"] for d in tool_definitions("anthropic")}
    with_caps = {d["name"] for d in tool_definitions("anthropic", {"vision", "pdf"})}
    assert not plain & {"browser_mouse_click_xy", "browser_pdf_save"}
    assert {"browser_mouse_click_xy", "browser_mouse_drag_xy", "browser_pdf_save"} <= with_caps
    assert {d["name"] for d in tool_definitions("mcp", (), "go-rod")} == {
        "browser_navigate", "browser_action", "browser_screenshot"}
    assert [d["name"] for d in tool_definitions("mcp", (), "single")] == ["browser"]
    fill = parameters_schema(TOOLS["browser_fill_form"])  # nested model inlined, required kept
    assert fill["properties"]["fields"]["items"]["required"] == ["name", "type", "value"]
    click = {d["name"]: d for d in tool_definitions("anthropic")}["browser_click"]
    assert click["description"].startswith("Click an element.")
    assert click["input_schema"]["properties"]["ref"]["type"] == "string"  # no null noise
    with pytest.raises(ValueError, match="dialect"):
        tool_definitions("openai", (), "nope")


def test_client_tool_definitions_delegate_and_browserq_tools_prints_them() -> None:
    c = BrowserClient(Settings(redis_url="redis://127.0.0.1:1/0"), caps={"pdf"})  # pure: no Redis needed
    assert c.tool_definitions("mcp") == tool_definitions("mcp", {"pdf"})
    assert c.tool_definitions("openai", caps=set(), dialect="single") == tool_definitions("openai", (), "single")
    c.close()
    runner = CliRunner()
    out = runner.invoke(app, ["tools", "--format", "anthropic", "--caps", "vision", "--dialect", "full"])
    assert out.exit_code == 0 and json.loads(out.stdout) == tool_definitions("anthropic", {"vision"})
    assert runner.invoke(app, ["tools", "--format", "gemini"]).exit_code == 2
    assert runner.invoke(app, ["tools", "--caps", "telepathy"]).exit_code == 2


def test_openai_and_anthropic_calls_round_trip_through_a_real_worker(client: BrowserClient, site: FixtureSite) -> None:
    d = Dispatcher(client, session="agents-roundtrip")
    nav = d.openai({"id": "c1", "type": "function", "function": {
        "name": "browser_navigate", "arguments": json.dumps({"url": site.url + "/"})}})
    assert nav["role"] == "tool" and nav["tool_call_id"] == "c1" and "Fixture Home" in nav["content"]
    snap = d.anthropic({"type": "tool_use", "id": "t1", "name": "browser_snapshot", "input": {}})
    assert snap["type"] == "tool_result" and snap["tool_use_id"] == "t1" and "is_error" not in snap
    ref = ref_of(snap["content"][0]["text"], "link", "Next page")
    click = d.openai({"id": "c2", "function": {"name": "browser_click", "arguments": json.dumps({"ref": ref})}})
    assert "Page Two" in click["content"]
    tool_msg, image_msg = d.openai_messages({"id": "c3", "function": {
        "name": "browser_take_screenshot", "arguments": "{}"}})
    assert "1 image attached in the next user message" in tool_msg["content"]
    url = image_msg["content"][1]["image_url"]["url"]
    assert image_msg["role"] == "user" and url.startswith("data:image/png;base64,")
    assert base64.b64decode(url.split(",", 1)[1])[:4] == b"\x89PNG"
    shot = d.anthropic({"type": "tool_use", "id": "t2", "name": "browser_take_screenshot", "input": {}})
    image = shot["content"][1]
    assert image["type"] == "image" and image["source"]["type"] == "base64"
    assert image["source"]["media_type"] == "image/png" and base64.b64decode(image["source"]["data"])[:4] == b"\x89PNG"
    client.close_session("agents-roundtrip")


def test_bad_calls_become_text_the_model_can_act_on(client: BrowserClient) -> None:
    d = Dispatcher(client, session="agents-bad", caps=set())
    bad_json = d.openai({"id": "c1", "function": {"name": "browser_navigate", "arguments": "{url: x"}})
    assert "not valid JSON" in bad_json["content"]
    missing = d.anthropic({"type": "tool_use", "id": "t1", "name": "browser_navigate", "input": {}})
    assert missing["is_error"] and "url: required field is missing" in missing["content"][0]["text"]
    hidden = d.call("browser_pdf_save", {})
    assert not hidden.ok and hidden.error.field == "tool" and "browser_navigate" in hidden.text
    other_dialect = Dispatcher(client, session="agents-bad", dialect="single").call("browser_navigate", "{}")
    assert not other_dialect.ok and "known tools: browser" in other_dialect.text
    assert not any(s.id == "agents-bad" for s in client.sessions())  # nothing reached a worker


class Registrar:
    def __init__(self) -> None:
        self.tools: dict[str, Any] = {}

    def register(self, definition: dict[str, Any], handler: Any) -> None:
        self.tools[definition["name"]] = handler


def test_browser_tools_are_registered_only_when_enabled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BROWSERQ_ENABLED", raising=False)
    monkeypatch.setenv("BROWSERQ_CONFIG", "/nonexistent.toml")
    registry: list[Any] = []
    assert register_browser_tools(registry, Settings()) == [] and registry == []
    as_dict: dict[str, Any] = {}
    assert register_browser_tools(as_dict) == [] and as_dict == {}  # default Settings: disabled
    assert register_browser_tools(Registrar(), Settings(enabled=False)) == []
    monkeypatch.setenv("BROWSERQ_ENABLED", "true")
    defs = register_browser_tools(registry, Settings(), format="anthropic", dialect="go-rod")
    assert registry == defs and [d["name"] for d in defs] == ["browser_navigate", "browser_action", "browser_screenshot"]
    reg = Registrar()
    with pytest.raises(ValueError, match="dispatcher"):
        register_browser_tools(reg, Settings(enabled=True), format="mcp")


def load_example() -> Any:
    spec = importlib.util.spec_from_file_location("agent_loop", ROOT / "examples" / "agent_loop.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


@pytest.mark.parametrize("fmt", ["openai", "anthropic"])
def test_the_example_agent_loop_runs_offline(client: BrowserClient, site: FixtureSite, fmt: str) -> None:
    ex = load_example()
    on = Settings(redis_url=client.settings.redis_url, enabled=True)
    messages = ex.run_agent(client, ex.ScriptedModel(ex.default_plan(site.url + "/"), fmt), on, session=f"ex-{fmt}")
    flat = json.dumps(messages)
    assert "Page Two" in flat and "Done:" in flat and ("image_url" in flat if fmt == "openai" else '"image"' in flat)
    off = Settings(redis_url=client.settings.redis_url, enabled=False)
    disabled = ex.run_agent(client, ex.ScriptedModel(ex.default_plan(site.url + "/"), fmt), off, session="ex-off")
    assert "cannot browse" in json.dumps(disabled) and len(disabled) == 2
    config = json.loads((ROOT / "examples" / "mcp_config.json").read_text())
    assert config["mcpServers"]["browserq"]["args"][0] == "mcp"
