"""The rest of the tool catalogue, end to end through a real worker, each asserting the visible effect."""

from __future__ import annotations

import base64
import re

import pytest

from client import BrowserClient, InvalidInput, Session, Settings, UnknownTool
from worker.cluster import RedisServer, WorkerProcess

from .procs import wait_until
from .site import FixtureSite
from .test_tools import ref_of


@pytest.fixture
def s(client: BrowserClient, request: pytest.FixtureRequest, site: FixtureSite) -> Session:
    session = client.session(re.sub(r"[^A-Za-z0-9]", "-", request.node.name)[:100])
    session.navigate(site.url + "/widgets").raise_for_error()
    return session


def value(s: Session, js: str):  # noqa: ANN201
    return s.evaluate(js).raise_for_error().data


def test_hover(s: Session) -> None:
    assert s.call("browser_hover", {"selector": "#hoverme"}).ok
    assert value(s, "() => document.getElementById('hoverme').textContent") == "hovered"


def test_drag_and_drop(s: Session) -> None:
    r = s.call("browser_drag", {"startSelector": "#item", "startElement": "Drag me", "endSelector": "#zone"})
    assert r.ok, r.error
    assert value(s, "() => document.getElementById('zone').textContent") == "dropped"


def test_select_option_by_value_and_by_label(s: Session) -> None:
    r = s.call("browser_select_option", {"selector": "#colour", "values": ["g"]})
    assert r.ok and r.data["selected"] == ["g"]
    s.call("browser_select_option", {"selector": "#colour", "values": ["Blue"]}).raise_for_error()
    assert value(s, "() => document.getElementById('colour').value") == "b"


def test_fill_form_sets_every_kind_of_field(s: Session) -> None:
    email = ref_of(s.snapshot().data["snapshot"], "textbox", "Email")
    r = s.call("browser_fill_form", {"fields": [
        {"ref": email, "name": "Email", "type": "textbox", "value": "ada@example.com"},
        {"selector": "#agree", "name": "Agree", "type": "checkbox", "value": "true"},
        {"selector": "#large", "name": "Large", "type": "radio", "value": "l"},
        {"selector": "#colour", "name": "Colour", "type": "combobox", "value": "Green"},
        {"selector": "#volume", "name": "Volume", "type": "slider", "value": "7"},
    ]})
    assert r.ok, r.error
    state = value(s, """() => [document.getElementById('email').value, document.getElementById('agree').checked,
        document.getElementById('large').checked, document.getElementById('colour').value,
        document.getElementById('volume').value]""")
    assert state == ["ada@example.com", True, True, "g", "7"]
    assert "ada@example.com" not in r.text  # form values are not echoed back


def test_file_upload_sends_bytes_the_server_receives(s: Session, site: FixtureSite) -> None:
    s.navigate(site.url + "/upload")
    payload = b"hello \x00 upload \xff"
    r = s.call("browser_file_upload", {"selector": "#file",
                                        "files": [{"name": "note.bin", "content": base64.b64encode(payload).decode()}]})
    assert r.ok, r.error
    assert s.wait_for(text="sent note.bin 200").ok
    assert site.received["note.bin"] == payload


def test_file_upload_through_the_chooser_a_click_opened(s: Session, site: FixtureSite) -> None:
    s.navigate(site.url + "/upload")
    s.click(selector="#choose").raise_for_error()
    r = s.call("browser_file_upload", {"files": [{"name": "chosen.txt", "content": base64.b64encode(b"abc").decode()}]})
    assert r.ok, r.error
    assert s.wait_for(text="sent chosen.txt 200").ok and site.received["chosen.txt"] == b"abc"


def test_file_upload_paths_stay_inside_the_upload_dir(s: Session, site: FixtureSite, fleet_dirs: dict) -> None:
    fleet_dirs["upload"].mkdir(parents=True, exist_ok=True)
    (fleet_dirs["upload"] / "report.csv").write_bytes(b"a,b\n1,2\n")
    s.navigate(site.url + "/upload")
    assert s.call("browser_file_upload", {"selector": "#file", "paths": ["report.csv"]}).ok
    assert s.wait_for(text="sent report.csv 200").ok and site.received["report.csv"] == b"a,b\n1,2\n"
    for bad in ("/etc/passwd", "../../etc/passwd"):
        r = s.call("browser_file_upload", {"selector": "#file", "paths": [bad]})
        assert not r.ok and r.error.field == "paths", r.error


def test_console_messages_filtered_by_level(s: Session) -> None:
    errors = s.call("browser_console_messages", {"level": "error"}).data
    assert [m["text"] for m in errors] == ["broken thing"]
    warnings = [m["text"] for m in s.call("browser_console_messages", {"level": "warning"}).data]
    assert warnings == ["careful", "broken thing"]
    everything = [m["text"] for m in s.call("browser_console_messages", {"level": "debug"}).data]
    assert {"hello log", "careful", "broken thing"} <= set(everything)


def test_new_console_errors_are_reported_once_in_results(client: BrowserClient, site: FixtureSite) -> None:
    s = client.session("console-notes")
    first = s.navigate(site.url + "/widgets")
    assert "Console error: broken thing" in first.text
    assert "broken thing" not in s.evaluate("() => 1").text


def test_network_requests_since_the_page_loaded(s: Session, site: FixtureSite) -> None:
    s.wait_for(time=0.2)
    reqs = s.call("browser_network_requests").data
    by_url = {r["url"]: r for r in reqs}
    assert by_url[site.url + "/widgets"]["status"] == 200
    api = by_url[site.url + "/api/data"]
    assert (api["method"], api["status"], api["resourceType"]) == ("GET", 200, "fetch")
    s.navigate(site.url + "/page2")
    assert [r["url"] for r in s.call("browser_network_requests").data] == [site.url + "/page2"]


def test_find_returns_refs_that_work(s: Session) -> None:
    r = s.call("browser_find", {"text": "confirm"})
    assert r.ok and len(r.data["matches"]) == 1
    ref = re.search(r"\[ref=(s\d+e\d+)\]", r.data["matches"][0]).group(1)
    s.call("browser_handle_dialog", {"accept": True}).raise_for_error()
    assert s.click(ref=ref).ok
    assert value(s, "() => document.getElementById('out').textContent") == "yes"


def test_dialogs_accept_dismiss_and_prompt_text(s: Session) -> None:
    opened = s.click(selector="#confirm")
    assert opened.ok and "confirm dialog is open" in opened.text
    s.call("browser_handle_dialog", {"accept": False}).raise_for_error()
    assert value(s, "() => document.getElementById('out').textContent") == "no"
    s.call("browser_handle_dialog", {"accept": True, "promptText": "Ada"}).raise_for_error()  # armed
    s.click(selector="#prompt").raise_for_error()
    assert value(s, "() => document.getElementById('out').textContent") == "name=Ada"


def test_an_unhandled_dialog_does_not_hang_later_tools(s: Session) -> None:
    opened = s.click(selector="#alert")
    assert "alert dialog is open" in opened.text
    later = s.evaluate("() => document.title")
    assert later.ok and later.data == "Widgets" and "was open and has been dismissed" in later.text
    assert value(s, "() => document.getElementById('out').textContent") == "after alert"


def test_resize(s: Session) -> None:
    assert s.call("browser_resize", {"width": 640, "height": 480}).ok
    assert value(s, "() => [innerWidth, innerHeight]") == [640, 480]


def test_tabs_new_select_close_and_popups(s: Session, site: FixtureSite) -> None:
    s.click(selector="#popup").raise_for_error()
    urls = lambda: [t["url"] for t in s.call("browser_tabs", {"action": "list"}).data]  # noqa: E731
    expected = [site.url + "/widgets", site.url + "/page2"]
    wait_until(lambda: urls() == expected, 10, f"the popup to appear as a tab: {urls()}")  # it opens asynchronously
    opened = s.call("browser_tabs", {"action": "new", "url": site.url + "/form"}).data
    assert len(opened) == 3 and opened[2]["active"] and opened[2]["title"] == "Search form"
    assert value(s, "() => document.title") == "Search form"
    s.call("browser_tabs", {"action": "select", "index": 1}).raise_for_error()
    assert value(s, "() => document.title") == "Page Two"
    left = s.call("browser_tabs", {"action": "close", "index": 0}).data
    assert [t["title"] for t in left] == ["Page Two", "Search form"]
    bad = s.call("browser_tabs", {"action": "select", "index": 9})
    assert not bad.ok and bad.error.field == "index"


def test_install_reports_readiness_without_downloading(s: Session) -> None:
    r = s.call("browser_install")
    assert r.ok and r.data["ready"] and r.data["downloaded"] is False
    assert r.data["binary"].endswith("chromium") and r.data["version"].split(".")[0].isdigit()


def test_capability_tools_need_caps(
    redis_server: RedisServer, fleet: list[WorkerProcess], site: FixtureSite, fleet_dirs: dict
) -> None:
    with BrowserClient(Settings(redis_url=redis_server.url)) as plain:
        with pytest.raises(UnknownTool):
            plain.call("browser_mouse_click_xy", {"x": 1, "y": 1}, session="caps-plain")
        with pytest.raises(UnknownTool):
            plain.call("browser_pdf_save", {}, session="caps-plain")
    with BrowserClient(Settings(redis_url=redis_server.url, caps=["vision", "pdf"])) as c:
        s = c.session("caps-on")
        s.navigate(site.url + "/widgets")
        assert s.call("browser_mouse_click_xy", {"x": 325, "y": 325}).ok
        assert s.evaluate("() => document.getElementById('pad').textContent").data == "xy-clicked"
        s.call("browser_mouse_move_xy", {"x": 10, "y": 10}).raise_for_error()
        s.navigate(site.url + "/widgets")
        assert s.call("browser_mouse_drag_xy", {"startX": 1, "startY": 1, "endX": 50, "endY": 50}).ok
        pdf = s.call("browser_pdf_save", {"filename": "widgets.pdf"})
        assert pdf.ok and base64.b64decode(pdf.data["pdf"])[:5] == b"%PDF-"
        assert pdf.data["artifact"] == "widgets.pdf" and pdf.data["bytes"] > 1000
        assert (fleet_dirs["artifact"] / "widgets.pdf").read_bytes()[:5] == b"%PDF-"
        with pytest.raises(InvalidInput):
            s.call("browser_pdf_save", {"filename": "../x.pdf"})


def test_click_variants_double_right_and_modifiers(s: Session) -> None:
    s.click(selector="#clicker", doubleClick=True).raise_for_error()
    s.click(selector="#clicker", button="right").raise_for_error()
    s.click(selector="#clicker", modifiers=["Shift"]).raise_for_error()
    assert value(s, "() => ({...document.getElementById('clicker').dataset})") == {
        "dbl": "yes", "right": "yes", "shift": "true"}


def test_full_page_screenshot_is_taller_than_the_viewport(s: Session) -> None:
    s.call("browser_resize", {"width": 400, "height": 200}).raise_for_error()
    view = base64.b64decode(s.screenshot().images[0].data)
    full = base64.b64decode(s.screenshot(fullPage=True, type="jpeg").images[0].data)
    assert int.from_bytes(view[20:24], "big") == 200 and full[:3] == b"\xff\xd8\xff" and len(full) > 1000
