"""Real parts: a redis-server on a free loopback port, the fixture site, `browserq worker` processes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from client import BrowserClient, Settings
from worker.cluster import RedisServer, WorkerProcess

from .site import FixtureSite


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    server = RedisServer().start()
    yield server
    server.stop()


def db_url(server: RedisServer, db: int) -> str:
    """A separate Redis database: a fleet of its own on the same server."""
    return server.url.rsplit("/", 1)[0] + f"/{db}"


@pytest.fixture(scope="session")
def site() -> Iterator[FixtureSite]:
    s = FixtureSite()
    yield s
    s.close()


@pytest.fixture(scope="session")
def worker_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("worker-logs")


@pytest.fixture(scope="session")
def fleet_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("fleet")
    return {"upload": root / "uploads", "artifact": root / "artifacts", "state": root / "state"}


DENIED_HOST = "denied.localhost"  # loopback, so a policy failure still never leaves the machine


@pytest.fixture(scope="session")
def fleet(redis_server: RedisServer, worker_logs: Path, fleet_dirs: dict[str, Path]) -> Iterator[list[WorkerProcess]]:
    """Two workers shared by the integration tests (db 0), with the capabilities enabled."""
    env = {"BROWSERQ_CAPS": "vision,pdf", "BROWSERQ_MAX_TABS": "4", "BROWSERQ_MAX_CONTEXTS": "3",
           "BROWSERQ_MAX_EVAL_BYTES": "200000", "BROWSERQ_DENY_HOSTS": DENIED_HOST,
           **{f"BROWSERQ_{k.upper()}_DIR": str(v) for k, v in fleet_dirs.items()}}
    procs = [WorkerProcess(redis_server.url, n, env=env, log_dir=worker_logs).start() for n in ("w-a", "w-b")]
    try:
        for p in procs:
            p.wait_ready(60)
        yield procs
    finally:
        for p in procs:
            p.stop()


@pytest.fixture
def client(redis_server: RedisServer, fleet: list[WorkerProcess]) -> Iterator[BrowserClient]:
    """A client on the shared fleet, starting and ending with no sessions open."""
    c = BrowserClient(Settings(redis_url=redis_server.url))
    close_all(c)
    yield c
    close_all(c)
    c.close()


def close_all(c: BrowserClient) -> None:
    for s in c.sessions():
        c.close_session(s.id)
