"""The URL policy, for navigations a tool asks for and for those the page makes itself (redirect hops,
popups, script navigations): unit tests of the rules, integration through a worker."""

from __future__ import annotations

import time

import pytest

from client import BrowserClient, Settings
from client.handles import Session
from worker.errors import HandlerError
from worker.policy import check_url

from .conftest import DENIED_HOST
from .procs import wait_until
from .site import FixtureSite


@pytest.mark.parametrize("url", ["file:///etc/passwd", "chrome://settings", "javascript:alert(1)",
                                 "http://169.254.169.254/latest/meta-data/", "ftp://example.com/"])
def test_refused_by_default(url: str) -> None:
    with pytest.raises(HandlerError) as info:
        check_url(url, Settings())
    assert info.value.type == "url_refused" and info.value.field == "url"


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000/", "https://example.com/a", "about:blank",
                                 "data:text/html,<b>hi</b>"])
def test_allowed_by_default(url: str) -> None:
    check_url(url, Settings())


def test_configuration_loosens_and_tightens() -> None:
    check_url("file:///tmp/x.html", Settings(allowed_schemes=["http", "file"]))
    check_url("http://169.254.169.254/", Settings(allow_hosts=["169.254.169.254"]))
    tight = Settings(allow_hosts=["*.example.com", "example.com"], deny_hosts=["bad.example.com"])
    check_url("https://docs.example.com/", tight)
    check_url("https://example.com/", tight)
    for url in ("https://bad.example.com/", "https://example.org/", "https://notexample.com/"):
        with pytest.raises(HandlerError):
            check_url(url, tight)


def test_a_worker_refuses_and_keeps_the_session(client: BrowserClient, site: FixtureSite) -> None:
    s = client.session("policy-1")
    s.navigate(site.url + "/page2").raise_for_error()
    for url in ("file:///etc/passwd", "http://169.254.169.254/latest/meta-data/"):
        r = s.navigate(url)
        assert not r.ok and r.error.type == "url_refused" and "URL policy" in r.error.message
    tab = s.call("browser_tabs", {"action": "new", "url": "chrome://version"})
    assert not tab.ok and tab.error.type == "url_refused"
    assert s.evaluate("() => location.pathname").data == "/page2"


def _denied(site: FixtureSite, path: str = "/secret") -> str:
    return site.url.replace("127.0.0.1", DENIED_HOST) + path


def test_a_redirect_to_a_refused_url_is_stopped_before_it_is_sent(
        client: BrowserClient, site: FixtureSite) -> None:
    s = client.session("policy-redirect")
    ok = s.navigate(f"{site.url}/redirect?to={site.url}/page2")
    assert ok.ok and ok.data["title"] == "Page Two"
    target = _denied(site, "/secret-redirect")
    r = s.navigate(f"{site.url}/redirect?to={target}")
    assert not r.ok and r.error.type == "url_refused" and r.error.field == "url"
    assert target in r.error.message
    assert site.hits["/secret-redirect"] == 0
    assert s.navigate(site.url + "/page2").ok


def test_a_new_tab_redirected_to_a_refused_url_is_refused_the_same_way(
        client: BrowserClient, site: FixtureSite) -> None:
    s = client.session("policy-tab-redirect")
    target = _denied(site, "/secret-tab")
    r = s.call("browser_tabs", {"action": "new", "url": f"{site.url}/redirect?to={target}"})
    assert not r.ok and r.error.type == "url_refused" and target in r.error.message
    assert site.hits["/secret-tab"] == 0


def test_a_popup_to_a_refused_url_never_loads(client: BrowserClient, site: FixtureSite) -> None:
    s = client.session("policy-popup")
    target = _denied(site, "/secret-popup")
    s.navigate(f"{site.url}/opener?to={target}").raise_for_error()
    s.click(selector="#open").raise_for_error()
    wait_until(lambda: len(_tab_urls(s)) == 2, 10, "the popup tab")
    time.sleep(0.5)
    assert not any(url.startswith(target) for url in _tab_urls(s))
    assert site.hits["/secret-popup"] == 0


def test_a_script_navigation_to_a_refused_url_is_reported(client: BrowserClient, site: FixtureSite) -> None:
    s = client.session("policy-script")
    target = _denied(site, "/secret-script")
    s.navigate(f"{site.url}/opener?to={target}").raise_for_error()
    texts = [s.click(selector="#jump").raise_for_error().text]

    def reported() -> bool:
        texts.append(s.evaluate("() => 1 + 1").raise_for_error().text)
        return any(f"Navigation to {target} was refused by the URL policy" in t for t in texts)

    wait_until(reported, 10, "the refusal note")
    assert site.hits["/secret-script"] == 0
    assert s.evaluate("() => location.href").data != target


def _tab_urls(s: Session) -> list[str]:
    return [t["url"] for t in s.call("browser_tabs", {"action": "list"}).raise_for_error().data]
