"""Named contexts: isolation, a proxy that really carries the traffic, storage state round trips."""

from __future__ import annotations

import base64
import json
import threading
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from client import BrowserClient, InvalidInput

from .site import FixtureSite


class TinyProxy:
    """A loopback HTTP forward proxy with basic auth; any host it is asked for is the fixture site."""

    def __init__(self, upstream: str, user: str, password: str) -> None:
        self.seen: list[str] = []
        self.refused = 0
        expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                if self.headers.get("Proxy-Authorization") != expected:
                    proxy.refused += 1
                    self.send_response(407)
                    self.send_header("Proxy-Authenticate", 'Basic realm="tiny"')
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                proxy.seen.append(self.path)
                parts = urlsplit(self.path)
                with urllib.request.urlopen(upstream + parts.path + (f"?{parts.query}" if parts.query else "")) as r:
                    body = r.read()
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def proxy(site: FixtureSite) -> Iterator[TinyProxy]:
    p = TinyProxy(site.url, "agent", "s3cret-proxy-pw")
    yield p
    p.server.shutdown()


def test_contexts_are_isolated_and_listed(client: BrowserClient, site: FixtureSite) -> None:
    s = client.session("ctx-iso")
    s.navigate(f"{site.url}/set-cookie?name=home&value=1")
    made = s.call("browser_context_create", {"name": "clean"})
    assert made.ok and made.data["isActive"]
    assert s.navigate(site.url + "/cookies").data["title"] == "cookies: none"
    listing = {c["name"]: c for c in s.call("browser_context_list").data}
    assert listing["default"]["isActive"] is False and listing["clean"]["isActive"] is True
    assert listing["default"]["currentUrl"].endswith("/set-cookie?name=home&value=1")
    assert listing["clean"]["pageCount"] == 1 and listing["clean"]["currentUrl"] == site.url + "/cookies"
    s.call("browser_context_switch", {"name": "default"}).raise_for_error()
    assert s.navigate(site.url + "/cookies").data["title"] == "cookies: home"


def test_closing_contexts(client: BrowserClient, site: FixtureSite) -> None:
    s = client.session("ctx-close")
    s.navigate(site.url + "/")
    only = s.call("browser_context_close", {"name": "default"})
    assert not only.ok and only.error.message == "Cannot close the only remaining context"
    s.call("browser_context_create", {"name": "temp"}).raise_for_error()
    closed = s.call("browser_context_close", {"name": "temp"})
    assert closed.ok and closed.data["active"] == "default"
    assert s.evaluate("() => location.pathname").data == "/"
    missing = s.call("browser_context_switch", {"name": "temp"})
    assert not missing.ok and missing.error.field == "name"
    with pytest.raises(InvalidInput):
        s.call("browser_context_create", {"name": "bad name!"})


def test_a_proxy_context_sends_its_traffic_through_the_proxy(client: BrowserClient, proxy: TinyProxy) -> None:
    s = client.session("ctx-proxy")
    r = s.call("browser_context_create", {"name": "uk_proxy", "proxy": {
        "server": proxy.url, "username": "agent", "password": "s3cret-proxy-pw"}})
    assert r.ok and r.data["proxy"] == proxy.url
    assert "s3cret-proxy-pw" not in r.model_dump_json()
    page = s.navigate("http://fixture.example/page2")  # resolvable only through the proxy
    assert page.ok and page.data["title"] == "Page Two", page.error
    assert "http://fixture.example/page2" in proxy.seen and proxy.refused >= 1
    listing = s.call("browser_context_list")
    assert "s3cret-proxy-pw" not in listing.model_dump_json()


def test_saved_storage_recreates_a_logged_in_context(
    client: BrowserClient, site: FixtureSite, fleet_dirs: dict[str, Path]
) -> None:
    s = client.session("ctx-storage")
    s.navigate(f"{site.url}/set-cookie?name=session_token&value=abc123")
    s.evaluate("() => localStorage.setItem('user', 'ada')")
    saved = s.call("browser_context_save_storage", {"path": "logged-in.json"})
    assert saved.ok and "abc123" not in saved.text
    assert json.loads((fleet_dirs["state"] / "logged-in.json").read_text())["cookies"][0]["name"] == "session_token"

    other = client.session("ctx-storage-2")
    other.call("browser_context_create", {"name": "returning_user", "storageState": "logged-in.json"}).raise_for_error()
    assert other.navigate(site.url + "/cookies").data["title"] == "cookies: session_token"
    assert other.evaluate("() => localStorage.getItem('user')").data == "ada"

    inline = client.session("ctx-storage-3")
    inline.call("browser_context_create", {"name": "inline", "storageState": saved.data["storageState"]})
    assert inline.navigate(site.url + "/cookies").data["title"] == "cookies: session_token"
    escape = inline.call("browser_context_create", {"name": "evil", "storageState": "../../etc/passwd"})
    assert not escape.ok and escape.error.field == "storageState"
