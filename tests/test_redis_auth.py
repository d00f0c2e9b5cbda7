"""The core flow against a redis-server that requires a password (credentials in the URL)."""

from __future__ import annotations

from pathlib import Path

import pytest

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
