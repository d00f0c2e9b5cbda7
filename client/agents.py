"""Agent integration: tool definitions for model APIs, and a dispatcher for the calls they make.

Pure where it can be: definitions are generated from the same pydantic models that validate calls
(`client.tools`), so what a model is shown and what the client accepts cannot drift apart. The
dispatchers turn a model's tool call, in the shape its API delivers it, into a browserq call, and
the `ToolResult` back into the content that API expects:

- OpenAI (Chat Completions): a `tool_calls[i]` item whose `function.arguments` is a JSON string, answered
  by a `{"role": "tool", "tool_call_id", "content": str}` message. Tool messages cannot carry images,
  so screenshots are announced in the text and delivered by `openai_messages()` as one extra
  `{"role": "user"}` message with `image_url` (data URL) parts, right after the tool message.
- Anthropic (Messages): a `tool_use` block (`input` is a dict), answered by a `tool_result` block whose
  content lists text and base64 image blocks.
- MCP: see `client.mcp_server`, which uses `definition()` and `mcp_content()` from here.

Invalid input (unknown tool, a wrong or missing argument) is answered with a text the model can act
on, never raised: a tool loop should not die because a model misspelt a field.
"""

from __future__ import annotations

import copy
import inspect
import json
import re
from collections.abc import Callable, Iterable, Mapping, MutableMapping, MutableSequence
from typing import Any, Literal

from .errors import InvalidInput
from .results import ToolResult
from .settings import Settings
from .tools.catalogue import DIALECTS, tools_for
from .tools.base import Tool

__all__ = [
    "FORMATS", "NAME_PATTERN", "Format", "tool_definitions", "definition", "parameters_schema",
    "description_of", "parse_arguments", "Dispatcher", "AsyncDispatcher", "openai_content",
    "openai_image_message", "anthropic_content", "mcp_content", "register_browser_tools", "visible_tools",
]

Format = Literal["openai", "anthropic", "mcp"]
FORMATS: tuple[str, ...] = ("openai", "anthropic", "mcp")
NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


# ---------------------------------------------------------------------------------------------
# Definitions
# ---------------------------------------------------------------------------------------------

def visible_tools(caps: Iterable[str] = (), dialect: str = "full") -> dict[str, type[Tool]]:
    """The tools a model may see: core tools of the dialect, plus capability tools only when asked."""
    if dialect not in DIALECTS:
        raise ValueError(f"dialect: unknown dialect {dialect!r}; known: {', '.join(DIALECTS)}")
    return tools_for(caps, dialect)


def tool_definitions(
    format: Format = "openai", caps: Iterable[str] = (), dialect: str = "full"
) -> list[dict[str, Any]]:
    """Every visible tool's definition in one model API's format, in catalogue order."""
    if format not in FORMATS:
        raise ValueError(f"format: unknown format {format!r}; known: {', '.join(FORMATS)}")
    return [definition(tool, format) for tool in visible_tools(caps, dialect).values()]


def definition(tool: type[Tool], format: Format) -> dict[str, Any]:
    """One tool's definition; the three formats differ only in their envelope."""
    name, description, schema = tool.name, description_of(tool), parameters_schema(tool)
    if format == "openai":
        return {"type": "function",
                "function": {"name": name, "description": description, "parameters": schema}}
    if format == "anthropic":
        return {"name": name, "description": description, "input_schema": schema}
    if format == "mcp":
        return {"name": name, "description": description, "inputSchema": schema}
    raise ValueError(f"format: unknown format {format!r}; known: {', '.join(FORMATS)}")


def description_of(tool: type[Tool]) -> str:
    """The class docstring, cleaned: it is written for a model to read (see client/tools)."""
    paragraphs = inspect.cleandoc(tool.__dict__.get("__doc__") or "").split("\n\n")
    text = "\n\n".join(" ".join(line.strip() for line in p.splitlines()) for p in paragraphs).strip()
    if tool.capability != "core":
        text += f" (capability: {tool.capability})"
    return text


def parameters_schema(tool: type[Tool]) -> dict[str, Any]:
    """The model's JSON schema as a self-contained object schema: `$ref`s inlined (no tool model is
    recursive), titles dropped (noise a model pays tokens for), `X | None = None` shown as plain `X`
    (optional already means "may be omitted"; a null type only confuses some models)."""
    raw = tool.model_json_schema(by_alias=True)
    defs = raw.pop("$defs", {})
    raw.pop("description", None)  # the definition's own description says it once
    schema = _clean(_inline(raw, defs))
    schema.setdefault("properties", {})
    schema["type"] = "object"
    return schema


def _inline(node: Any, defs: Mapping[str, Any]) -> Any:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            target = copy.deepcopy(defs[ref.removeprefix("#/$defs/")])
            extra = {k: v for k, v in node.items() if k != "$ref"}
            return _inline({**target, **extra}, defs)
        return {k: _inline(v, defs) for k, v in node.items()}
    if isinstance(node, list):
        return [_inline(v, defs) for v in node]
    return node


def _clean(node: Any) -> Any:
    """Drop `title`s and collapse optional-or-null unions, recursing through sub-schemas only."""
    if isinstance(node, list):
        return [_clean(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title":
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: _clean(sub) for name, sub in value.items()}  # property names stay
        else:
            out[key] = _clean(value)
    return _collapse_nullable(out)


def _collapse_nullable(node: dict[str, Any]) -> dict[str, Any]:
    options = node.get("anyOf")
    if not (isinstance(options, list) and {"type": "null"} in options and node.get("default", 0) is None):
        return node
    rest = [o for o in options if o != {"type": "null"}]
    if len(rest) != 1:
        return node
    merged = {k: v for k, v in node.items() if k not in ("anyOf", "default")}
    return {**rest[0], **merged}


# ---------------------------------------------------------------------------------------------
# Results as each format's content
# ---------------------------------------------------------------------------------------------

def _text_of(result: ToolResult) -> str:
    text = result.text or ("OK" if result.ok else "Error")
    if not result.ok and result.error and result.error.message not in text:
        text = f"{text}\nError ({result.error.type}): {result.error.message}"
    return text


def openai_content(result: ToolResult) -> str:
    """The tool message's content: text only (OpenAI tool messages cannot hold images), with any
    images announced so the model knows they follow in the next user message."""
    text = _text_of(result)
    if result.images:
        n = len(result.images)
        text += f"\n[{n} image{'s' if n > 1 else ''} attached in the next user message]"
    return text


def openai_image_message(result: ToolResult) -> dict[str, Any] | None:
    """A user message carrying the result's images as data-URL `image_url` parts, or None."""
    if not result.images:
        return None
    parts: list[dict[str, Any]] = [{"type": "text", "text": f"Images returned by {result.tool}:"}]
    parts += [{"type": "image_url", "image_url": {"url": f"data:{i.mime};base64,{i.data}"}}
              for i in result.images]
    return {"role": "user", "content": parts}


def anthropic_content(result: ToolResult) -> list[dict[str, Any]]:
    """A tool_result's content list: the text, then each image as a base64 image block."""
    blocks: list[dict[str, Any]] = [{"type": "text", "text": _text_of(result)}]
    blocks += [{"type": "image", "source": {"type": "base64", "media_type": i.mime, "data": i.data}}
               for i in result.images]
    return blocks


def mcp_content(result: ToolResult) -> list[dict[str, Any]]:
    """MCP content blocks (as plain dicts): text, then each image as image content."""
    blocks: list[dict[str, Any]] = [{"type": "text", "text": _text_of(result)}]
    blocks += [{"type": "image", "data": i.data, "mimeType": i.mime} for i in result.images]
    return blocks


# ---------------------------------------------------------------------------------------------
# Dispatch
# ---------------------------------------------------------------------------------------------

def parse_arguments(arguments: Mapping[str, Any] | str | None) -> dict[str, Any]:
    """A call's arguments as a dict: OpenAI delivers a JSON string, Anthropic and MCP a dict.
    Raises InvalidInput (field `arguments`) for text that is not a JSON object."""
    if arguments is None or arguments == "":
        return {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"arguments: not valid JSON ({exc.msg}); send a JSON object",
                               field="arguments", problem="not valid JSON") from None
    if not isinstance(arguments, Mapping):
        raise InvalidInput(f"arguments: expected a JSON object, got {type(arguments).__name__}",
                           field="arguments", problem="not an object")
    return dict(arguments)


def _get(obj: Any, key: str, default: Any = None) -> Any:
    """A field of a dict or of an SDK object (the OpenAI and Anthropic SDKs return objects)."""
    if isinstance(obj, Mapping):
        return obj.get(key, default)
    return getattr(obj, key, default)


def _refusal(name: str, session: str, exc: InvalidInput) -> ToolResult:
    """Invalid input as a failed result whose text tells the model how to fix its call."""
    hint = " Call one of the listed tools." if exc.field == "tool" else " Fix the arguments and call again."
    return ToolResult.failure(str(name), session, "invalid_input", f"{exc}{hint}", field=exc.field)


class _DispatchBase:
    """What both dispatchers share: which tools are allowed, and the per-format envelopes."""

    def __init__(self, client: Any, session: str | None = None, *,
                 caps: Iterable[str] | None = None, dialect: str | None = None) -> None:
        self.client = client
        self.session = session or client.default_session
        self.caps = set(client.caps if caps is None else caps)
        self.dialect = dialect

    def _check(self, name: Any, arguments: Mapping[str, Any] | str | None) -> dict[str, Any]:
        """The parsed arguments, or InvalidInput for a tool this dispatcher does not offer."""
        allowed = tools_for(self.caps, self.dialect)
        if not isinstance(name, str) or name not in allowed:
            raise InvalidInput(f"tool: unknown tool {name!r}; known tools: {', '.join(allowed)}",
                               field="tool", problem="unknown tool")
        return parse_arguments(arguments)

    @staticmethod
    def _openai_call(tool_call: Any) -> tuple[str, Any, Any]:
        function = _get(tool_call, "function", {})
        return _get(tool_call, "id"), _get(function, "name"), _get(function, "arguments")

    @staticmethod
    def _openai_message(call_id: Any, result: ToolResult) -> dict[str, Any]:
        return {"role": "tool", "tool_call_id": call_id, "content": openai_content(result)}

    @staticmethod
    def _anthropic_block(block_id: Any, result: ToolResult) -> dict[str, Any]:
        block = {"type": "tool_result", "tool_use_id": block_id, "content": anthropic_content(result)}
        if not result.ok:
            block["is_error"] = True
        return block


class Dispatcher(_DispatchBase):
    """Runs a model's tool calls through a `BrowserClient` in one browserq session.

    `session` defaults to the client's implicit session; use one dispatcher per conversation.
    `caps`/`dialect` restrict what is accepted to what the model was shown (defaults: the client's
    caps, every dialect).
    """

    def call(self, name: str, arguments: Mapping[str, Any] | str | None = None) -> ToolResult:
        """One call by name; invalid input comes back as a failed result, not an exception."""
        try:
            return self.client.call(name, self._check(name, arguments), session=self.session)
        except InvalidInput as exc:
            return _refusal(name, self.session, exc)

    def openai(self, tool_call: Any) -> dict[str, Any]:
        """A Chat Completions `tool_calls[i]` (dict or SDK object) -> the `tool` role message."""
        call_id, name, arguments = self._openai_call(tool_call)
        return self._openai_message(call_id, self.call(name, arguments))

    def openai_messages(self, tool_call: Any) -> list[dict[str, Any]]:
        """Like `openai()`, plus a user message with the images when the result has any."""
        call_id, name, arguments = self._openai_call(tool_call)
        result = self.call(name, arguments)
        extra = openai_image_message(result)
        return [self._openai_message(call_id, result), *([extra] if extra else [])]

    def anthropic(self, tool_use: Any) -> dict[str, Any]:
        """An Anthropic `tool_use` block (dict or SDK object) -> the `tool_result` block."""
        result = self.call(_get(tool_use, "name"), _get(tool_use, "input"))
        return self._anthropic_block(_get(tool_use, "id"), result)


class AsyncDispatcher(_DispatchBase):
    """`Dispatcher` for an `AsyncBrowserClient`: the same methods, awaited."""

    async def call(self, name: str, arguments: Mapping[str, Any] | str | None = None) -> ToolResult:
        try:
            return await self.client.call(name, self._check(name, arguments), session=self.session)
        except InvalidInput as exc:
            return _refusal(name, self.session, exc)

    async def openai(self, tool_call: Any) -> dict[str, Any]:
        call_id, name, arguments = self._openai_call(tool_call)
        return self._openai_message(call_id, await self.call(name, arguments))

    async def openai_messages(self, tool_call: Any) -> list[dict[str, Any]]:
        call_id, name, arguments = self._openai_call(tool_call)
        result = await self.call(name, arguments)
        extra = openai_image_message(result)
        return [self._openai_message(call_id, result), *([extra] if extra else [])]

    async def anthropic(self, tool_use: Any) -> dict[str, Any]:
        result = await self.call(_get(tool_use, "name"), _get(tool_use, "input"))
        return self._anthropic_block(_get(tool_use, "id"), result)


# ---------------------------------------------------------------------------------------------
# Seed 000's opt-in
# ---------------------------------------------------------------------------------------------

Registry = Any  # a list, a dict, or an object with register(definition, handler)


def register_browser_tools(
    registry: Registry,
    settings: Settings | None = None,
    *,
    format: Format = "openai",
    dialect: str = "full",
    caps: Iterable[str] | None = None,
    dispatcher: Dispatcher | None = None,
) -> list[dict[str, Any]]:
    """Expose browser tools to an agent only when `settings.enabled` (BROWSERQ_ENABLED) is set.

    Disabled (the default): registers nothing, returns [], and touches neither Redis nor a worker,
    so no browser starts. Enabled: adds each definition to `registry` and returns them. The
    registry may be a list (definitions appended), a dict (name -> definition) or an object with a
    `register(definition, handler)` method; `handler(arguments)` runs the call through `dispatcher`
    (required for such objects) and returns its ToolResult.
    """
    settings = settings if settings is not None else Settings()
    if not settings.enabled:
        return []
    defs = tool_definitions(format, settings.caps if caps is None else caps, dialect)
    for d in defs:
        _register_one(registry, d, _name_of(d), dispatcher)
    return defs


def _name_of(d: Mapping[str, Any]) -> str:
    return d["function"]["name"] if "function" in d else d["name"]


def _register_one(registry: Registry, d: dict[str, Any], name: str, dispatcher: Dispatcher | None) -> None:
    if isinstance(registry, MutableSequence):
        registry.append(d)
    elif isinstance(registry, MutableMapping):
        registry[name] = d
    elif callable(getattr(registry, "register", None)):
        if dispatcher is None:
            raise ValueError("register_browser_tools: a registry with register() needs a dispatcher")
        registry.register(d, _handler(dispatcher, name))
    else:
        raise TypeError(f"registry: expected a list, a dict or an object with register(), "
                        f"got {type(registry).__name__}")


def _handler(dispatcher: Dispatcher, name: str) -> Callable[[Mapping[str, Any] | str | None], ToolResult]:
    return lambda arguments=None: dispatcher.call(name, arguments)

