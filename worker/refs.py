"""Element refs that know which snapshot they came from.

Playwright's `aria_snapshot(mode="ai")` numbers elements e1, e2... afresh on every snapshot and
resolves `aria-ref=eN` against the latest one, so an old ref silently means a different element.
browserq prefixes each ref with the session's snapshot number (`s3e7`) and refuses refs from an
older snapshot, or from before the page navigated, with a message that tells the model what to do.
"""

from __future__ import annotations

import re

from .errors import StaleRef

__all__ = ["tag_refs", "resolve_ref"]

_IN_SNAPSHOT = re.compile(r"\[ref=((?:f\d+)?e\d+)\]")
_GIVEN = re.compile(r"(?:s(\d+))?((?:f\d+)?e\d+)")


def tag_refs(snapshot: str, number: int) -> str:
    return _IN_SNAPSHOT.sub(lambda m: f"[ref=s{number}{m.group(1)}]", snapshot)


def resolve_ref(ref: str, current: int, fresh: bool) -> str:
    """Playwright's `aria-ref=...` selector for a ref, if it belongs to the current snapshot."""
    match = _GIVEN.fullmatch(ref.strip())
    if match is None:
        raise StaleRef(f"ref: {ref!r} is not an element ref; refs look like s1e5 (from browser_snapshot)", field="ref")
    number, local = match.group(1), match.group(2)
    if current == 0:
        raise StaleRef("ref: no snapshot of this page yet; call browser_snapshot first", field="ref")
    if number is not None and int(number) != current:
        raise StaleRef(
            f"ref: {ref} is from snapshot {number}, but the latest is snapshot {current}; "
            "use refs from the latest browser_snapshot", field="ref",
        )
    if not fresh:
        raise StaleRef(
            f"ref: {ref} is stale: the page has navigated since that snapshot; "
            "call browser_snapshot again", field="ref",
        )
    return f"aria-ref={local}"
