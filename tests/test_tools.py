"""The foundation's tools, end to end through a real worker against the fixture site."""

from __future__ import annotations

import base64
import re

import pytest

from client import BrowserClient, Session

from .site import FixtureSite


@pytest.fixture
def s(client: BrowserClient, request: pytest.FixtureRequest) -> Session:
    return client.session(re.sub(r"[^A-Za-z0-9]", "-", request.node.name)[:100])


def ref_of(snapshot: str, role: str, name: str) -> str:
    match = re.search(rf'{role} "{re.escape(name)}"[^\n]*\[ref=(s\d+e\d+)\]', snapshot)
    assert match, f"no {role} {name!r} in:\n{snapshot}"
    return match.group(1)


def test_navigate_returns_url_title_and_snippet(s: Session, site: FixtureSite) -> None:
    r = s.navigate(site.url + "/")
    assert r.ok and r.data["title"] == "Fixture Home" and r.data["status"] == 200
    assert r.data["url"] == site.url + "/" and "Home" in r.data["snippet"]
    assert "Title: Fixture Home" in r.text


def test_snapshot_refs_are_clickable_and_go_stale_after_navigation(s: Session, site: FixtureSite) -> None:
    s.navigate(site.url + "/")
    snap = s.snapshot().data["snapshot"]
    rename, link = ref_of(snap, "button", "Rename"), ref_of(snap, "link", "Next page")
    assert s.click(ref=rename, element="Rename button").ok
    assert s.evaluate("() => document.title").data == "Renamed"
    clicked = s.click(ref=link)
    assert clicked.ok and "Page Two" in clicked.text  # the click waited for the new page
    stale = s.click(ref=rename)
    assert not stale.ok and stale.error.type == "stale_ref" and "browser_snapshot" in stale.error.message


def test_refs_from_an_older_snapshot_are_refused(s: Session, site: FixtureSite) -> None:
    s.navigate(site.url + "/")
    old = ref_of(s.snapshot().data["snapshot"], "button", "Rename")
    s.snapshot()
    r = s.click(ref=old)
    assert not r.ok and r.error.field == "ref" and "latest" in r.error.message


def test_selector_is_an_alternative_to_ref(s: Session, site: FixtureSite) -> None:
    s.navigate(site.url + "/")
    assert s.click(selector="#rename").ok
    assert s.evaluate("() => document.title").data == "Renamed"


def test_type_with_submit_lands_on_the_results_page(s: Session, site: FixtureSite) -> None:
    s.navigate(site.url + "/form")
    box = ref_of(s.snapshot().data["snapshot"], "textbox", "Query")
    r = s.type("browsers", ref=box, submit=True)
    assert r.ok and "Results for browsers" in r.text
    assert s.evaluate("() => document.title").data == "Results for browsers"


def test_press_key_waits_for_the_navigation_it_starts(s: Session, site: FixtureSite) -> None:
    s.navigate(site.url + "/form")
    s.type("keys", selector="#q")
    r = s.press_key("Enter")
    assert r.ok and "Results for keys" in r.text


def test_type_slowly_fires_key_events(s: Session, site: FixtureSite) -> None:
    s.navigate(site.url + "/")
    s.evaluate("() => { window.keys = []; document.getElementById('name').addEventListener('keydown', e => window.keys.push(e.key)) }")
    s.type("abcd", selector="#name", slowly=True)
    keys, value = s.evaluate("() => [window.keys, document.getElementById('name').value]").data
    assert keys[-4:] == ["a", "b", "c", "d"] and value == "abcd"


def test_screenshot_returns_images(s: Session, site: FixtureSite) -> None:
    s.navigate(site.url + "/")
    png = s.screenshot()
    assert png.ok and png.images[0].mime == "image/png"
    assert base64.b64decode(png.images[0].data)[:8] == b"\x89PNG\r\n\x1a\n"
    jpeg = s.screenshot(type="jpeg", selector="h1")
    assert base64.b64decode(jpeg.images[0].data)[:3] == b"\xff\xd8\xff"


def test_evaluate_on_an_element(s: Session, site: FixtureSite) -> None:
    s.navigate(site.url + "/")
    assert s.evaluate("(el) => el.textContent", selector="h1").data == "Home"
    ref = ref_of(s.snapshot().data["snapshot"], "link", "Next page")
    assert s.evaluate("(el) => el.getAttribute('href')", ref=ref).data == "/page2"


def test_wait_for_text_text_gone_and_time(s: Session, site: FixtureSite) -> None:
    s.navigate(site.url + "/later")
    assert s.wait_for(textGone="Loading...").ok
    assert s.wait_for(text="Ready now").ok
    r = s.wait_for(time=0.2)
    assert r.ok and "0.2" in r.text
    missing = s.wait_for(text="never shows up", timeout=0.3)
    assert not missing.ok and missing.error.type == "timeout"


def test_navigate_back_and_close_tab(s: Session, site: FixtureSite) -> None:
    s.navigate(site.url + "/")
    s.navigate(site.url + "/page2")
    back = s.navigate_back()
    assert back.ok and back.data["title"] == "Fixture Home"
    closed = s.close_tab()
    assert closed.ok and closed.data["tabs"] == 0
    assert s.evaluate("() => location.href").data == "about:blank"  # a fresh tab in the same session


def test_snapshot_depth_and_subtree(s: Session, site: FixtureSite) -> None:
    s.navigate(site.url + "/nested")
    full = s.snapshot().data["snapshot"]
    shallow = s.snapshot(depth=1).data["snapshot"]
    assert "Deep link" in full and "Deep link" not in shallow and "main" in shallow
    sub = s.snapshot(selector="nav").data["snapshot"]
    assert "Deep link" in sub and "Top" not in sub
