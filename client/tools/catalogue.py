"""The catalogue: every tool model by name, and the one place arguments are validated."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import ValidationError

from ..errors import InvalidInput, UnknownTool
from . import contexts, dialects, dialogs, inspection, interaction, navigation, pages, pdf, vision, waiting
from .base import Tool

__all__ = ["TOOLS", "DIALECTS", "tools_for", "validate_call", "describe_validation_error"]

FAMILIES = (navigation, inspection, interaction, waiting, dialogs, pages, contexts, vision, pdf, dialects)
DIALECTS = ("full", "go-rod", "single")


def _tools_of(module: object) -> list[type[Tool]]:
    found = (getattr(module, n) for n in getattr(module, "__all__", ()))
    return [t for t in found if isinstance(t, type) and issubclass(t, Tool) and hasattr(t, "name")]


TOOLS: dict[str, type[Tool]] = {t.name: t for family in FAMILIES for t in _tools_of(family)}


def tools_for(caps: Iterable[str] = (), dialect: str | None = None) -> dict[str, type[Tool]]:
    """The tools visible with these capabilities enabled (core tools always are), in one dialect
    or, with none given, in all of them (a worker serves every dialect)."""
    enabled = {"core", *caps}
    return {name: t for name, t in TOOLS.items()
            if t.capability in enabled and (dialect is None or dialect in t.dialects)}


def validate_call(
    tool: Any, args: Any, caps: Iterable[str] = (), session: str | None = None
) -> Tool:
    """The validated model for a call, or InvalidInput naming the field and the problem."""
    if not isinstance(tool, str) or tool not in tools_for(caps):
        known = ", ".join(sorted(tools_for(caps)))
        raise UnknownTool(
            f"tool: unknown tool {tool!r}; known tools: {known}",
            field="tool", problem="unknown tool", session=session, tool=str(tool),
        )
    if args is None:
        args = {}
    if not isinstance(args, Mapping):
        raise InvalidInput(
            f"arguments: expected a JSON object, got {type(args).__name__}",
            field="arguments", problem="not an object", session=session, tool=tool,
        )
    try:
        return TOOLS[tool].model_validate(dict(args))
    except ValidationError as exc:
        field, problem = describe_validation_error(exc)
        raise InvalidInput(
            f"{tool}: {field}: {problem}" if field else f"{tool}: {problem}",
            field=field, problem=problem, session=session, tool=tool,
        ) from None


def describe_validation_error(exc: ValidationError) -> tuple[str, str]:
    """(dotted field, problem) of the first error, worded for a model to fix its call."""
    err = exc.errors(include_url=False)[0]
    field = ".".join(str(p) for p in err["loc"])
    problem = err["msg"].removeprefix("Value error, ")
    if err["type"] == "missing":
        problem = "required field is missing"
    elif err["type"] == "extra_forbidden":
        problem = "unknown field"
    elif "input" in err and err["type"] not in ("value_error",):
        problem = f"{problem} (got {_short(err['input'])})"
    return field, problem


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def markdown_table() -> str:
    """The README's tool table, generated so it cannot drift from the models."""
    rows = ["| tool | parameters | capability | dialects |", "| --- | --- | --- | --- |"]
    for name, tool in TOOLS.items():
        params = ", ".join(f.alias or n for n, f in tool.model_fields.items() if n != "timeout") or "—"
        rows.append(f"| {name} | {params} | {tool.capability} | {', '.join(sorted(tool.dialects))} |")
    return "\n".join(rows)
