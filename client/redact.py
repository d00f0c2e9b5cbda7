"""Keeping secrets a caller sends (typed text, form values, prompt texts, proxy passwords, storage
states) out of what errors, results, logs and Flower show.

Three layers, cheapest first:
- publish time: a message's `kwargsrepr` carries only tool and session (`_base._publish_options`),
  so Celery's "received" events, Flower and `celery inspect` never see the arguments;
- validation: pydantic's errors echo the offending input ("(got 'hunter2')"); for secret fields
  `without_input` drops that part, leaving the field name and the problem;
- results: an error message from Playwright or a handler could quote what it was given;
  `scrub` replaces every secret string of the call's arguments before the result leaves the worker.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .errors import InvalidInput

__all__ = ["SECRET_FIELDS", "REDACTED", "is_secret_field", "secret_values", "scrub", "without_input",
           "redacting"]

# Field names (compared lower-case, without "_") whose values are secret, and everything under them.
SECRET_FIELDS = frozenset({
    "text", "value", "values", "password", "prompttext", "storagestate", "proxy", "cookies",
})
REDACTED = "[redacted]"
MIN_SECRET = 3  # shorter strings ("a", "1") are not worth hiding and would mangle every message
_GOT = re.compile(r" \(got .*\)$", re.DOTALL)


def _norm(name: str) -> str:
    return name.replace("_", "").lower()


def is_secret_field(dotted: str | None) -> bool:
    """True when any part of a dotted field path ("proxy.password", "fields.0.value") is secret."""
    return bool(dotted) and any(_norm(part) in SECRET_FIELDS for part in str(dotted).split("."))


def secret_values(args: Any, inside: bool = False) -> list[str]:
    """Every string under a secret field of a call's arguments, longest first."""
    found: list[str] = []
    if isinstance(args, dict):
        for key, value in args.items():
            found += secret_values(value, inside or _norm(str(key)) in SECRET_FIELDS)
    elif isinstance(args, (list, tuple)):
        for value in args:
            found += secret_values(value, inside)
    elif inside and isinstance(args, str) and len(args) >= MIN_SECRET:
        found.append(args)
    return sorted(set(found), key=len, reverse=True)


def scrub(text: str, secrets: list[str]) -> str:
    """`text` with each secret replaced by [redacted]."""
    for secret in secrets:
        text = text.replace(secret, REDACTED)
    return text


def without_input(exc: InvalidInput) -> InvalidInput:
    """The same error without the echoed input when it names a secret field."""
    if not is_secret_field(exc.field):
        return exc
    clean = type(exc)(_GOT.sub("", exc.message), field=exc.field, problem=_GOT.sub("", exc.problem),
                      session=exc.session, tool=exc.tool)
    return clean


@contextmanager
def redacting() -> Iterator[None]:
    """Re-raise InvalidInput for a secret field without the value pydantic echoed into it."""
    try:
        yield
    except InvalidInput as exc:
        clean = without_input(exc)
        if clean is exc:
            raise
        raise clean from None
