"""A local fleet as real processes: an embedded redis-server and `browserq worker` processes.

`browserq up`, `browserq demo` and the test suite all start their fleets through this module.
Children run in their own sessions, so a terminal's Ctrl-C reaches only the parent, which then
stops each child by pid (TERM to the worker's main process only; see NOTES on process groups).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import redis

from client.routing import keys

__all__ = [
    "free_port", "redis_reachable", "RedisServer", "WorkerProcess", "FlowerProcess",
    "browserq_command", "flower_process",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def redis_reachable(url: str, timeout: float = 0.5) -> bool:
    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=timeout).ping())
    except (redis.RedisError, OSError, ValueError):
        return False


def browserq_command() -> list[str]:
    """The installed `browserq` script beside this interpreter, else the module form of it."""
    script = Path(sys.executable).with_name("browserq")
    return [str(script)] if script.exists() else [sys.executable, "-m", "worker"]


def _wait(predicate: object, timeout: float, what: str, proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{what}: process exited with code {proc.returncode}")
        time.sleep(0.05)
    raise TimeoutError(f"{what}: not ready after {timeout:.0f}s")


def _stop(proc: subprocess.Popen, sig: int, timeout: float) -> int:
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
    return proc.returncode


class RedisServer:
    """A throwaway `redis-server` on a free loopback port."""

    def __init__(self, port: int | None = None, *, password: str | None = None,
                 appendonly: bool = False, workdir: Path | None = None) -> None:
        self.port = port or free_port()
        self.password = password
        self.appendonly = appendonly
        self.workdir = workdir or Path(tempfile.mkdtemp(prefix="browserq-redis-"))
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 10) -> RedisServer:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed (Debian/Ubuntu: apt-get install redis-server)")
        argv = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "yes" if self.appendonly else "no", "--dir", str(self.workdir),
                "--maxmemory-policy", "noeviction"]
        if self.password:
            argv += ["--requirepass", self.password]
        log = open(self.workdir / "redis.log", "ab")  # noqa: SIM115 - lives as long as the server
        self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        _wait(lambda: redis_reachable(self.url), timeout, "redis-server", self.proc)
        return self

    def stop(self) -> None:
        if self.proc is not None:
            _stop(self.proc, signal.SIGTERM, 10)


class WorkerProcess:
    """One `browserq worker` process."""

    def __init__(self, redis_url: str, name: str, *, args: tuple[str, ...] = (),
                 env: Mapping[str, str] | None = None, log_dir: Path | None = None) -> None:
        self.redis_url = redis_url
        self.name = name
        self.args = args
        self.env = {**os.environ, **(env or {}), "BROWSERQ_REDIS_URL": redis_url}
        self.log_path = (log_dir or Path(tempfile.gettempdir())) / f"browserq-worker-{name}.log"
        self.proc: subprocess.Popen | None = None
        self._log: IO[bytes] | None = None

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self) -> WorkerProcess:
        argv = [*browserq_command(), "worker", "--name", self.name, *self.args]
        if self._log is not None:  # started again, as a supervisor restarts a worker
            self._log.close()
        self._log = open(self.log_path, "ab")  # noqa: SIM115
        self.proc = subprocess.Popen(argv, env=self.env, stdout=self._log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        return self

    def wait_ready(self, timeout: float = 30) -> WorkerProcess:
        r = redis.Redis.from_url(self.redis_url)

        def running() -> bool:
            return r.hget(keys.worker(self.name), "state") == b"running"

        try:
            _wait(running, timeout, f"worker {self.name} (log: {self.log_path})", self.proc)
        finally:
            r.close()
        return self

    def stop(self, timeout: float = 30) -> int:
        """Graceful: TERM to the worker's own pid, as `docker stop` would."""
        return _stop(self.proc, signal.SIGTERM, timeout) if self.proc else 0

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)

    def logs(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


class FlowerProcess:
    """`celery flower` watching a fleet, on loopback only.

    Flower's REST API refuses every request until auth is configured, and with auth off anyone who
    reaches the port can enqueue tasks (`/api/task/apply`). So: with `FLOWER_BASIC_AUTH`
    (user:password) in the environment it is passed through; without it the API is opened
    (`FLOWER_UNAUTHENTICATED_API=true`) for this local development process only, which is why
    the address is always 127.0.0.1 here.
    """

    APP = "worker.flower_app"

    def __init__(self, redis_url: str, port: int | None = None, *,
                 env: Mapping[str, str] | None = None, log_dir: Path | None = None) -> None:
        self.redis_url = redis_url
        self.port = port or free_port()
        self.env = {**os.environ, **(env or {}), "BROWSERQ_REDIS_URL": redis_url}
        if not self.env.get("FLOWER_BASIC_AUTH"):
            self.env["FLOWER_UNAUTHENTICATED_API"] = "true"
        self.log_path = (log_dir or Path(tempfile.gettempdir())) / f"browserq-flower-{self.port}.log"
        self.proc: subprocess.Popen | None = None
        self._log: IO[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def argv(self) -> list[str]:
        return [sys.executable, "-m", "celery", "--app", self.APP, "flower",
                "--address=127.0.0.1", f"--port={self.port}"]

    def start(self) -> FlowerProcess:
        self._log = open(self.log_path, "ab")  # noqa: SIM115 - lives as long as the process
        self.proc = subprocess.Popen(self.argv(), env=self.env, stdout=self._log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        return self

    def wait_ready(self, timeout: float = 30) -> FlowerProcess:
        """Ready when `/healthcheck` (which needs no auth) answers."""
        def answers() -> bool:
            try:
                with urllib.request.urlopen(self.url + "/healthcheck", timeout=1) as resp:
                    return resp.status == 200
            except (urllib.error.URLError, OSError):
                return False

        _wait(answers, timeout, f"flower on port {self.port} (log: {self.log_path})", self.proc)
        return self

    def stop(self, timeout: float = 10) -> int:
        return _stop(self.proc, signal.SIGTERM, timeout) if self.proc else 0

    def logs(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


@contextmanager
def flower_process(redis_url: str, port: int | None) -> Iterator[FlowerProcess | None]:
    """A started FlowerProcess (None when `port` is None), stopped on exit."""
    if port is None:
        yield None
        return
    flower = FlowerProcess(redis_url, port).start()
    try:
        yield flower
    finally:
        flower.stop()


@contextmanager
def local_fleet(redis_url: str, workers: int, *, embedded_if_unreachable: bool = True,
                prefix: str = "local", args: tuple[str, ...] = ()) -> Iterator[tuple[str, list[WorkerProcess]]]:
    """Redis (embedded when `redis_url` is unreachable) plus N workers; everything stopped on exit."""
    server = None
    if not redis_reachable(redis_url):
        if not embedded_if_unreachable:
            raise RuntimeError(f"Redis at {redis_url} is not reachable")
        server = RedisServer().start()
        redis_url = server.url
    procs = [WorkerProcess(redis_url, f"{prefix}-{i + 1}", args=args) for i in range(workers)]
    try:
        for p in procs:
            p.start()
        yield redis_url, procs
    finally:
        for p in procs:
            p.stop()
        if server is not None:
            server.stop()
