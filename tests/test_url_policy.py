"""The URL policy for navigations a tool asks for (unit: the rules; integration: through a worker)."""

from __future__ import annotations

import pytest

from client import BrowserClient, Settings
from worker.errors import HandlerError
from worker.policy import check_url

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
