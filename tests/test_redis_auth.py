"""The core flow against a redis-server that requires a password (credentials in the URL)."""

from __future__ import annotations

from pathlib import Path

import pytest
import redis

from client import BrokerUnavailable, BrowserClient, Settings
from worker.cluster import RedisServer, WorkerProcess

from .site import FixtureSite


def test_core_flow_with_requirepass(site: FixtureSite, worker_logs: Path, tmp_path: Path) -> None:
    server = RedisServer(password="s3cret-redis-pw", workdir=tmp_path).start()
    worker = WorkerProcess(server.url, "w-auth", log_dir=worker_logs).start()
    try:
        worker.wait_ready(60)
        with BrowserClient(Settings(redis_url=server.url)) as c:
            r = c.call("browser_navigate", {"url": site.url + "/page2"}, session="auth-1")
            assert r.ok and r.worker == "w-auth" and r.data["title"] == "Page Two"
            assert [w.name for w in c.workers()] == ["w-auth"]
        wrong = server.url.replace("s3cret-redis-pw", "wrong")
        with BrowserClient(Settings(redis_url=wrong)) as bad, pytest.raises(BrokerUnavailable):
            bad.call("browser_snapshot", session="auth-1")
        assert "s3cret-redis-pw" not in worker.logs()
    finally:
        worker.stop()
        server.stop()


ACL_PASSWORD = "acl-pw-7f3e"
LEAST_PRIVILEGE = ("~*", "&*", "+@all", "-@dangerous")  # the ACL the README recommends


def acl_user_url(server: RedisServer, rules: tuple[str, ...]) -> str:
    """An ACL user `browserq` with these rules, and the default user switched off."""
    r = redis.Redis.from_url(server.url)
    r.execute_command("ACL", "SETUSER", "browserq", "on", f">{ACL_PASSWORD}", *rules)
    r.execute_command("ACL", "SETUSER", "default", "off")
    r.close()
    return server.url.replace("redis://", f"redis://browserq:{ACL_PASSWORD}@")


def test_core_flow_with_a_least_privilege_acl_user(site: FixtureSite, worker_logs: Path, tmp_path: Path) -> None:
    server = RedisServer(workdir=tmp_path).start()
    url = acl_user_url(server, LEAST_PRIVILEGE)
    worker = WorkerProcess(url, "w-acl", log_dir=worker_logs).start()
    try:
        worker.wait_ready(60)
        with BrowserClient(Settings(redis_url=url)) as c:
            r = c.call("browser_navigate", {"url": site.url + "/page2"}, session="acl-1")
            assert r.ok and r.worker == "w-acl" and r.data["title"] == "Page Two"
            assert c.close_session("acl-1") and c.sessions() == []
        with pytest.raises(redis.AuthenticationError):  # the default user is off: the ACL user it is
            redis.Redis.from_url(server.url).ping()
        assert worker.stop() == 0
        assert ACL_PASSWORD not in worker.logs() and "NOPERM" not in worker.logs().upper()
    finally:
        worker.stop()
        server.stop()


def test_a_worker_whose_acl_lacks_a_command_it_needs_exits_non_zero(worker_logs: Path, tmp_path: Path) -> None:
    """Not 0: a supervisor must see a failure (and restart, or alert), not a clean stop."""
    server = RedisServer(workdir=tmp_path).start()
    url = acl_user_url(server, (*LEAST_PRIVILEGE, "-brpop"))
    worker = WorkerProcess(url, "w-noperm", log_dir=worker_logs).start()
    try:
        assert worker.proc is not None
        assert worker.proc.wait(60) != 0
        assert "Unrecoverable error" in worker.logs() and "'brpop'" in worker.logs()
        assert ACL_PASSWORD not in worker.logs()
    finally:
        worker.stop()
        server.stop()
