"""Limits with clear errors (the shared fleet runs with 4 tabs, 3 contexts, 200 kB evaluate results)."""

from __future__ import annotations

import pytest

from client import BrowserClient, InvalidInput

from .procs import wait_until
from .site import FixtureSite


def test_evaluate_result_size_is_capped(client: BrowserClient, site: FixtureSite) -> None:
    s = client.session("limit-eval")
    s.navigate(site.url + "/")
    big = s.evaluate("() => 'x'.repeat(300000)")
    assert not big.ok and big.error.type == "limit_exceeded" and "200000" in big.error.message
    assert s.evaluate("() => 'x'.repeat(1000)").ok


def test_tabs_per_context_are_capped_for_new_tabs_and_popups(client: BrowserClient, site: FixtureSite) -> None:
    s = client.session("limit-tabs")
    s.navigate(site.url + "/widgets")
    for _ in range(3):
        s.call("browser_tabs", {"action": "new"}).raise_for_error()
    fifth = s.call("browser_tabs", {"action": "new"})
    assert not fifth.ok and fifth.error.type == "limit_exceeded" and "close one first" in fifth.error.message
    s.call("browser_tabs", {"action": "close", "index": 3}).raise_for_error()
    s.call("browser_tabs", {"action": "select", "index": 0}).raise_for_error()
    s.click(selector="#popups").raise_for_error()  # the page tries to open 8 more
    count = lambda: len(s.call("browser_tabs", {"action": "list"}).data)  # noqa: E731
    wait_until(lambda: count() == 4, 10, "the popups to be opened and the excess closed")
    assert count() == 4


def test_contexts_per_session_are_capped(client: BrowserClient, site: FixtureSite) -> None:
    s = client.session("limit-ctx")
    s.navigate(site.url + "/")
    for name in ("one", "two"):
        s.call("browser_context_create", {"name": name}).raise_for_error()
    third = s.call("browser_context_create", {"name": "three"})
    assert not third.ok and third.error.type == "limit_exceeded" and third.error.field == "name"


def test_timeouts_and_text_length_are_capped_before_anything_runs(client: BrowserClient) -> None:
    with pytest.raises(InvalidInput) as too_long:
        client.call("browser_wait_for", {"time": 1, "timeout": 301}, session="limit-input")
    assert too_long.value.field == "timeout"
    with pytest.raises(InvalidInput) as huge:
        client.call("browser_type", {"selector": "#q", "text": "x" * 100_001}, session="limit-input")
    assert huge.value.field == "text"
