"""What every tool model shares: strictness, the per-call timeout, and element targeting."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["Tool", "Target", "OptionalTarget"]


class Tool(BaseModel):
    """A tool's parameters. The class docstring is the description a model reads."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    name: ClassVar[str]
    capability: ClassVar[str] = "core"
    dialects: ClassVar[frozenset[str]] = frozenset({"full"})
    changes_state: ClassVar[bool] = True

    timeout: float | None = Field(
        None, gt=0, le=300, description="Seconds before this action gives up (default 30)."
    )


_REF = "Exact element reference from the latest browser_snapshot, e.g. s2e7."
_SELECTOR = "CSS selector, as an alternative to ref."
_ELEMENT = "Human-readable description of the element, for the log and permission prompts."


class OptionalTarget(Tool):
    """A tool that may act on one element, named by `ref` or `selector`."""

    ref: str | None = Field(None, min_length=1, max_length=64, description=_REF)
    selector: str | None = Field(None, min_length=1, max_length=2000, description=_SELECTOR)
    element: str | None = Field(None, max_length=500, description=_ELEMENT)

    @model_validator(mode="after")
    def _one_target(self) -> OptionalTarget:
        if self.ref is not None and self.selector is not None:
            raise ValueError("give either ref or selector, not both")
        return self


class Target(OptionalTarget):
    """A tool that must act on one element."""

    @model_validator(mode="after")
    def _needs_target(self) -> Target:
        if self.ref is None and self.selector is None:
            raise ValueError("ref or selector is required: snapshot the page and pass a ref")
        return self
