"""The Dockerfile and docker-compose.yml, checked without Docker (none runs here): the compose file
parses, every command a service runs is a real command of this version, ports and environment
agree with each other, and the image installs what the worker needs."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from client import Settings
from worker.cluster import browserq_command

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES: dict[str, Any] = COMPOSE["services"]


def dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with line continuations joined and comments dropped."""
    text = re.sub(r"\\\n", " ", (ROOT / "Dockerfile").read_text())
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in lines]


def instructions(name: str) -> list[str]:
    return [args for instr, args in dockerfile() if instr == name]


def run_help(argv: list[str]) -> subprocess.CompletedProcess[str]:
    """`<service argv> --help`, run from this checkout's environment (the command must exist)."""
    program, *rest = argv
    prefix = {"browserq": browserq_command(), "celery": [sys.executable, "-m", "celery"]}[program]
    return subprocess.run([*prefix, *rest, "--help"], capture_output=True, text=True, timeout=60,
                          env={"COLUMNS": "200", "PATH": "/usr/bin:/bin",
                               "BROWSERQ_REDIS_URL": "redis://127.0.0.1:1/0"})


def flower_options() -> set[str]:
    """Flower's own options are tornado options (its click `--help` does not list them)."""
    import flower.options  # noqa: F401 - defines them
    from tornado.options import options

    return {f"--{name}" for name in options}


def options_of(argv: list[str]) -> list[str]:
    return [a.split("=", 1)[0] for a in argv if a.startswith("--")]


def test_compose_parses_and_has_the_spec_services() -> None:
    assert set(SERVICES) == {"redis", "worker", "flower", "mcp"}
    assert "redis-data" in COMPOSE["volumes"]


@pytest.mark.parametrize("service", ["worker", "flower", "mcp"])
def test_service_commands_are_real_commands_of_this_version(service: str) -> None:
    argv = SERVICES[service]["command"]
    assert isinstance(argv, list), "exec form, so signals reach the process itself"
    helped = run_help(argv)
    assert helped.returncode == 0, helped.stderr
    known = helped.stdout + (" ".join(flower_options()) + " --app" if argv[0] == "celery" else "")
    for option in options_of(argv):
        assert option in known, f"{service}: {option} is not an option of {argv[:4]}"
    if argv[0] == "celery":
        assert "Web based tool for monitoring" in helped.stdout  # it really is Flower's command
        assert argv[argv.index("--app") + 1] == "worker.flower_app"


def test_mcp_service_is_published_on_loopback_only() -> None:
    mcp = SERVICES["mcp"]
    assert mcp["command"][:2] == ["browserq", "mcp"] and "profiles" not in mcp
    assert mcp["ports"] == ["127.0.0.1:8931:8931"] and "8931" in mcp["command"]


def test_redis_persists_and_reports_health() -> None:
    redis = SERVICES["redis"]
    assert redis["command"][:3] == ["redis-server", "--appendonly", "yes"]
    assert "noeviction" in redis["command"]
    assert any(v.endswith(":/data") for v in redis["volumes"])
    assert redis["healthcheck"]["test"] == ["CMD", "redis-cli", "ping"]


def test_workers_scale_drain_and_have_shared_memory() -> None:
    worker = SERVICES["worker"]
    assert "ports" not in worker and "container_name" not in worker, "needed for --scale worker=N"
    assert worker["shm_size"] in ("1gb", "2gb")
    assert worker["stop_grace_period"] == "60s" and worker["restart"] == "unless-stopped"
    assert worker["depends_on"]["redis"]["condition"] == "service_healthy"


def test_ports_and_environment_agree() -> None:
    for name, service in SERVICES.items():
        if name == "redis":
            continue
        url = service["environment"]["BROWSERQ_REDIS_URL"]
        assert url == "redis://redis:6379/0", name  # the redis service, on its default port
        assert Settings(redis_url=url).redis_url == url
    flower = SERVICES["flower"]
    assert "--port=5555" in flower["command"] and flower["ports"] == ["127.0.0.1:5555:5555"]
    assert flower["environment"]["FLOWER_BASIC_AUTH"].startswith("${FLOWER_BASIC_AUTH:?")
    assert "FLOWER_UNAUTHENTICATED_API" not in json.dumps(COMPOSE)
    assert "5555/healthcheck" in " ".join(flower["healthcheck"]["test"])


def test_dockerfile_base_packages_user_and_commands() -> None:
    (base,) = instructions("FROM")
    assert re.fullmatch(r"python:3\.\d+-slim-(bookworm|trixie)", base)
    apt = " ".join(i for i in instructions("RUN") if "apt-get install" in i)
    packages = set(shlex.split(apt.split("apt-get install", 1)[1].split("&&")[0])) - {"-y", "--no-install-recommends"}
    setup = (ROOT / "scripts" / "setup.sh").read_text()
    worker_packages = set(re.search(r"missing\+=\(chromium ([^)]*)\)", setup).group(1).split()) | {"chromium"}
    assert worker_packages <= packages, "the image must have what setup.sh installs for a worker"
    assert "redis-server" not in packages
    pip = " ".join(i for i in instructions("RUN") if "pip install" in i)
    extras = set(re.search(r"\.\[([^\]]+)\]", pip).group(1).split(","))
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert extras <= set(declared) and {"worker", "flower"} <= extras

    (user,) = instructions("USER")
    assert user not in ("root", "0")
    assert json.loads(instructions("CMD")[0]) == ["browserq", "worker"]  # exec form
    (health,) = instructions("HEALTHCHECK")
    argv = json.loads(health.split("CMD", 1)[1])
    assert argv[:2] == ["browserq", "status"]
    helped = run_help(argv)
    assert helped.returncode == 0 and all(o in helped.stdout for o in options_of(argv))


def test_dockerignore_keeps_the_context_small() -> None:
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {".git", ".venv", "tests"} <= set(ignored)
