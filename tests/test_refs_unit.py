"""Snapshot-tagged element refs: pure string logic, importable without Playwright."""

from __future__ import annotations

import subprocess
import sys

import pytest

from worker.errors import StaleRef
from worker.refs import resolve_ref, tag_refs

SNAPSHOT = """- heading "Shop" [level=1] [ref=e2]
- link "Details" [ref=e5] [cursor=pointer]:
  - /url: /details
- iframe [ref=e7]:
  - button "Pay" [ref=f1e2]
- text: see [ref=e9x] and [ref=x5] and [refs=e3]
"""


def test_tag_refs_prefixes_snapshot_number():
    out = tag_refs(SNAPSHOT, 3)
    assert "[ref=s3e2]" in out
    assert "[ref=s3e5]" in out
    assert "[ref=s3e7]" in out
    assert "[ref=s3f1e2]" in out
    assert "[ref=e5]" not in out and "[ref=f1e2]" not in out


def test_tag_refs_leaves_other_brackets_alone():
    out = tag_refs(SNAPSHOT, 3)
    for untouched in ("[level=1]", "[cursor=pointer]", "[ref=e9x]", "[ref=x5]", "[refs=e3]"):
        assert untouched in out
    # Exactly the four refs changed, nothing else.
    assert out.replace("[ref=s3", "[ref=") == SNAPSHOT


def test_tag_refs_uses_the_given_number():
    assert tag_refs("[ref=e1]", 12) == "[ref=s12e1]"
    assert tag_refs("no refs here", 1) == "no refs here"


@pytest.mark.parametrize(
    ("ref", "selector"),
    [("s3e5", "aria-ref=e5"), ("s3f1e2", "aria-ref=f1e2"), (" s3e5 ", "aria-ref=e5"), ("s3e120", "aria-ref=e120")],
)
def test_resolve_current_ref(ref, selector):
    assert resolve_ref(ref, current=3, fresh=True) == selector


def stale(ref: str, current: int, fresh: bool) -> StaleRef:
    with pytest.raises(StaleRef) as info:
        resolve_ref(ref, current=current, fresh=fresh)
    assert info.value.field == "ref"
    assert info.value.type == "stale_ref"
    return info.value


def test_ref_from_older_snapshot_is_refused():
    err = stale("s2e5", current=3, fresh=True)
    assert "latest" in err.message
    assert "snapshot 2" in err.message and "snapshot 3" in err.message


def test_ref_from_newer_snapshot_is_refused():
    assert "latest" in stale("s4e5", current=3, fresh=True).message


def test_ref_after_navigation_is_refused():
    err = stale("s3e5", current=3, fresh=False)
    assert "call browser_snapshot again" in err.message


def test_ref_before_any_snapshot_is_refused():
    err = stale("s1e5", current=0, fresh=True)
    assert "browser_snapshot" in err.message


@pytest.mark.parametrize("garbage", ["button", "", "s3", "3e5", "s3e", "e5; drop", "s3e5 s3e6", "S3E5", "#submit"])
def test_garbage_is_not_a_ref(garbage):
    err = stale(garbage, current=3, fresh=True)
    assert "not an element ref" in err.message


def test_importing_refs_does_not_import_playwright():
    code = "import sys, worker.refs; print(any(m.split('.')[0] == 'playwright' for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
