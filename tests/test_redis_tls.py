"""TLS to Redis (`rediss://`): a real redis-server serving TLS only, with a throwaway CA.

Every connection goes through the one URL: the client's routing and reply lists (redis-py, sync and
asyncio), the workers' Celery broker (kombu) and result backend, their registry heartbeats, queue
purges and checkpoints. A server the URL's CA does not vouch for is refused at once.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import pytest
import redis

from client import AsyncBrowserClient, BrokerUnavailable, BrowserClient, Settings
from client.transport import make_celery
from worker.cluster import WorkerProcess, free_port, redis_reachable

from .procs import wait_until
from .site import FixtureSite

OPENSSL_CNF = """[req]
distinguished_name = dn
[dn]
[ca]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[server]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = IP:127.0.0.1,DNS:localhost
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[client]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = clientAuth
"""
EC_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]


def openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_ca(d: Path, name: str) -> None:
    openssl("req", "-x509", *EC_KEY, "-keyout", f"{name}.key", "-out", f"{name}.pem", "-days", "2",
            "-subj", f"/CN=browserq test {name}", "-config", "openssl.cnf", "-extensions", "ca", cwd=d)


def make_cert(d: Path, name: str, serial: int) -> None:
    """`name`.pem and `name`.key, signed by ca.pem, with the `name` extensions of openssl.cnf."""
    openssl("req", "-new", *EC_KEY, "-keyout", f"{name}.key", "-out", f"{name}.csr",
            "-subj", f"/CN=127.0.0.1 {name}", "-config", "openssl.cnf", cwd=d)
    openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-set_serial", str(serial),
            "-days", "2", "-out", f"{name}.pem", "-extfile", "openssl.cnf", "-extensions", name, cwd=d)


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A CA, a server certificate it signs for 127.0.0.1, a client certificate, an unrelated CA."""
    if shutil.which("openssl") is None:
        pytest.fail("the openssl command is needed to make test certificates (apt-get install openssl)")
    d = tmp_path_factory.mktemp("tls")
    (d / "openssl.cnf").write_text(OPENSSL_CNF)
    make_ca(d, "ca")
    make_ca(d, "other-ca")
    make_cert(d, "server", 2)
    make_cert(d, "client", 3)
    return d


def stored(r: redis.Redis, key: str, containing: bytes = b"", timeout: float = 10) -> bytes:
    """The value at `key` once it exists (and contains `containing`)."""
    deadline = time.monotonic() + timeout
    while containing not in (value := r.get(key) or b"") or not value:
        assert time.monotonic() < deadline, f"{key} holding {containing!r} never appeared"
        time.sleep(0.05)
    return value


def tls_url(port: int, ca: Path | None = None, db: int = 0) -> str:
    url = f"rediss://127.0.0.1:{port}/{db}"
    return url if ca is None else f"{url}?ssl_cert_reqs=required&ssl_ca_certs={quote(str(ca))}"


def client_cert(certs: Path) -> str:
    return f"&ssl_certfile={quote(str(certs / 'client.pem'))}&ssl_keyfile={quote(str(certs / 'client.key'))}"


@contextmanager
def tls_redis_server(certs: Path, *, client_certs: bool = False) -> Iterator[int]:
    """redis-server with TLS on a free loopback port and the plain TCP port off; yields the port."""
    port = free_port()
    argv = ["redis-server", "--port", "0", "--tls-port", str(port), "--bind", "127.0.0.1",
            "--tls-cert-file", str(certs / "server.pem"), "--tls-key-file", str(certs / "server.key"),
            "--tls-ca-cert-file", str(certs / "ca.pem"), "--tls-auth-clients", "yes" if client_certs else "no",
            "--save", "", "--appendonly", "no", "--dir", str(certs)]
    log = open(certs / f"redis-{port}.log", "ab")  # noqa: SIM115 - closed with the server
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    probe_url = tls_url(port, certs / "ca.pem") + (client_cert(certs) if client_certs else "")

    def serving() -> bool:
        if proc.poll() is not None:
            raise AssertionError("redis-server did not serve TLS (built without TLS?): "
                                 + (certs / f"redis-{port}.log").read_text())
        return redis_reachable(probe_url, timeout=1)

    try:
        wait_until(serving, 10, "redis-server to serve TLS")
        yield port
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(10)
        log.close()


@pytest.fixture(scope="module")
def tls_redis(certs: Path) -> Iterator[int]:
    with tls_redis_server(certs) as port:
        yield port


def test_the_server_speaks_tls_only(tls_redis: int, certs: Path) -> None:
    assert redis.Redis.from_url(tls_url(tls_redis, certs / "ca.pem")).ping()
    with pytest.raises(redis.ConnectionError):
        redis.Redis.from_url(f"redis://127.0.0.1:{tls_redis}/0", socket_connect_timeout=2).ping()


def test_core_flow_over_tls(tls_redis: int, certs: Path, site: FixtureSite, worker_logs: Path,
                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Two workers on one TLS Redis: one given the CA in its URL (`ssl_ca_certs`), one with a bare
    `rediss://` URL that trusts the CA through the system store (`SSL_CERT_FILE` stands in for it)."""
    url = tls_url(tls_redis, certs / "ca.pem", db=1)
    bare = tls_url(tls_redis, db=1)
    monkeypatch.setenv("SSL_CERT_FILE", str(certs / "ca.pem"))  # this process trusts the CA too
    redis.Redis.from_url(url).flushdb()
    workers = [WorkerProcess(url, "w-tls-ca", log_dir=worker_logs),
               WorkerProcess(bare, "w-tls-bare", env={"SSL_CERT_FILE": str(certs / "ca.pem")},
                             log_dir=worker_logs)]
    try:
        for w in workers:
            w.start()
        for w in workers:
            w.wait_ready(60)  # registry heartbeats arrived over TLS
        r = redis.Redis.from_url(url)
        with BrowserClient(Settings(redis_url=url)) as c:
            assert sorted(w.name for w in c.workers()) == ["w-tls-bare", "w-tls-ca"]
            served = {}
            for sid in ("tls-1", "tls-2"):  # least-loaded routing: one session per worker
                nav = c.call("browser_navigate", {"url": f"{site.url}/set-cookie?name=who&value={sid}"},
                             session=sid)
                assert nav.ok, nav.error
                pending = c.submit("browser_evaluate", {"function": "() => [document.cookie, location.pathname]"},
                                   session=sid)
                got = pending.result()
                assert got.ok and got.data == [f"who={sid}", "/set-cookie"], got.error
                assert got.worker == nav.worker
                served[sid] = got.worker
                # over TLS too: Celery's result backend (written just after the reply) and the
                # checkpoint mirror (written after the result)
                assert json.loads(stored(r, f"celery-task-meta-{pending.task_id}"))["status"] == "SUCCESS"
                stored(r, f"bq:checkpoint:{sid}", containing=f'"value":"{sid}"'.encode())
            assert sorted(served.values()) == ["w-tls-bare", "w-tls-ca"]
            assert {s.id: s.worker for s in c.sessions()} == served
            assert all(c.close_session(sid) for sid in served)
            assert c.sessions() == []

        async def from_asyncio() -> list:
            async with AsyncBrowserClient(Settings(redis_url=bare)) as ac:
                res = await ac.call("browser_evaluate", {"function": "() => 6 * 7"}, session="tls-async")
                assert await ac.close_session("tls-async")
                return [res.ok, res.data]

        assert asyncio.run(from_asyncio()) == [True, 42]
    finally:
        for w in workers:
            w.stop()
    for w in workers:
        log = w.logs()
        assert "insecure SSL" not in log and "Unrecoverable" not in log, log[-2000:]
        assert "CERTIFICATE_VERIFY_FAILED" not in log


def test_an_untrusted_server_is_refused_at_once_with_a_clear_error(tls_redis: int, certs: Path) -> None:
    wrong = tls_url(tls_redis, certs / "other-ca.pem")
    started = time.monotonic()
    with BrowserClient(Settings(redis_url=wrong)) as c, pytest.raises(BrokerUnavailable) as caught:
        c.call("browser_snapshot", session="tls-wrong")
    assert "CERTIFICATE_VERIFY_FAILED" in str(caught.value) and f"127.0.0.1:{tls_redis}" in str(caught.value)

    async def from_asyncio() -> None:
        async with AsyncBrowserClient(Settings(redis_url=wrong)) as ac:
            await ac.workers()

    with pytest.raises(BrokerUnavailable, match="CERTIFICATE_VERIFY_FAILED"):
        asyncio.run(from_asyncio())
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("which", ["wrong CA", "bare URL, CA not in the system store"])
def test_celery_broker_and_result_backend_verify_the_server(
    tls_redis: int, certs: Path, which: str
) -> None:
    """What the worker's Celery connections do with an untrusted server: refuse it. Left to its
    defaults kombu would connect without verifying a bare `rediss://` URL, and Celery's backend
    would reject that URL outright."""
    url = tls_url(tls_redis, certs / "other-ca.pem") if which == "wrong CA" else tls_url(tls_redis)
    app = make_celery(Settings(redis_url=url))
    with app.connection_for_write() as conn, pytest.raises(Exception, match="CERTIFICATE_VERIFY_FAILED"):
        conn.ensure_connection(max_retries=0)
    with pytest.raises(redis.ConnectionError, match="CERTIFICATE_VERIFY_FAILED"):
        app.backend.client.ping()


def test_a_client_certificate_goes_in_the_url_too(certs: Path) -> None:
    """`--tls-auth-clients yes`: `ssl_certfile` and `ssl_keyfile` reach redis-py, kombu and Celery's
    backend alike; without them the server refuses the connection."""
    with tls_redis_server(certs, client_certs=True) as port:
        url = tls_url(port, certs / "ca.pem") + client_cert(certs)
        app = make_celery(Settings(redis_url=url))
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=0)
            assert conn.default_channel.client.ping()
        assert app.backend.client.ping()
        with BrowserClient(Settings(redis_url=url)) as c:
            assert c.workers() == []
        with BrowserClient(Settings(redis_url=tls_url(port, certs / "ca.pem"))) as c, \
                pytest.raises(BrokerUnavailable):
            c.workers()
