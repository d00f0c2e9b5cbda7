"""The compact dialects (seed 000's go-rod tools, seed 003's single `browser` tool) through a real worker."""

from __future__ import annotations

import base64

import pytest

from client import BrowserClient, InvalidInput, Session

from .site import FixtureSite


@pytest.fixture
def s(client: BrowserClient, site: FixtureSite, request: pytest.FixtureRequest) -> Session:
    session = client.session(request.node.name.replace("_", "-")[:100])
    session.call("browser_navigate", {"url": site.url + "/widgets"}).raise_for_error()
    return session


def act(s: Session, **args):  # noqa: ANN003, ANN201
    r = s.call("browser_action", args)
    assert r.ok, r.error
    return r


def test_browser_action_click_type_eval(s: Session) -> None:
    act(s, action="click", selector="#agree")
    act(s, action="type", selector="#email", text="go@rod.dev")
    r = act(s, action="eval", text="[document.getElementById('agree').checked, document.getElementById('email').value]")
    assert r.data == [True, "go@rod.dev"]


def test_browser_action_get_text_and_element_info(s: Session, site: FixtureSite) -> None:
    assert act(s, action="get_text", selector="#item").data["text"] == "Drag me"
    s.call("browser_navigate", {"url": site.url + "/"})
    info = act(s, action="get_element_info", selector="#next").data
    assert info["tagName"] == "A" and info["id"] == "next" and info["innerText"] == "Next page"
    assert info["href"] == site.url + "/page2" and info["value"] is None
    field = act(s, action="get_element_info", selector="#name").data
    assert field["tagName"] == "INPUT" and field["value"] == ""


def test_browser_action_wait_defaults_to_ten_seconds_and_honours_timeout(s: Session, site: FixtureSite) -> None:
    s.call("browser_navigate", {"url": site.url + "/later"})
    assert act(s, action="wait", selector="#msg").ok
    missing = s.call("browser_action", {"action": "wait", "selector": "#never", "timeout": 0.3})
    assert not missing.ok and missing.error.type == "timeout" and "300ms" in missing.error.message


def test_browser_action_needs_its_fields(s: Session) -> None:
    with pytest.raises(InvalidInput, match="selector is required"):
        s.call("browser_action", {"action": "click"})
    with pytest.raises(InvalidInput, match="text is required"):
        s.call("browser_action", {"action": "type", "selector": "#email"})


def test_browser_screenshot_viewport_and_full_page(s: Session) -> None:
    s.call("browser_resize", {"width": 400, "height": 300})
    small = base64.b64decode(s.call("browser_screenshot", {}).images[0].data)
    full = base64.b64decode(s.call("browser_screenshot", {"fullPage": True}).images[0].data)
    assert small[:4] == full[:4] == b"\x89PNG"
    height = lambda png: int.from_bytes(png[20:24], "big")  # noqa: E731 - PNG IHDR height
    assert height(small) == 300 and height(full) > 300


def test_single_browser_tool(client: BrowserClient, site: FixtureSite) -> None:
    s = client.session("single-tool")
    nav = s.call("browser", {"action": "navigate", "url": site.url + "/form"})
    assert nav.ok and nav.data["title"] == "Search form"
    assert s.call("browser", {"action": "type", "selector": "#q", "text": "single"}).ok
    assert s.call("browser", {"action": "click", "selector": "button"}).ok
    text = s.call("browser", {"action": "get_text"})
    assert text.ok and text.data["text"] == "found" and text.data["url"].endswith("/submitted?q=single")
    assert s.call("browser", {"action": "evaluate", "script": "() => document.title"}).data == "Results for single"
    shot = s.call("browser", {"action": "screenshot"})
    assert base64.b64decode(shot.images[0].data)[:4] == b"\x89PNG"
    with pytest.raises(InvalidInput, match="url is required"):
        s.call("browser", {"action": "navigate"})
    with pytest.raises(InvalidInput, match="no scheme"):
        s.call("browser", {"action": "navigate", "url": "example.com"})
