# browserq worker image: Debian's Chromium driven by Playwright (no browser download at build time).
#   docker build -t browserq .
#   docker run --rm --shm-size=1g -e BROWSERQ_REDIS_URL=redis://redis:6379/0 browserq
# The same image runs Flower (`celery --app worker.flower_app flower`), `browserq mcp` and `browserq status`.
FROM python:3.12-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# The same system packages scripts/setup.sh installs for a worker (redis-server is not needed here:
# Redis is its own service). fonts-liberation gives pages metric-compatible Arial/Times/Courier.
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium fonts-liberation \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY pyproject.toml README.md ./
COPY client ./client
COPY worker ./worker
RUN pip install '.[worker,flower,mcp]'

# Non-root. Chromium's own sandbox needs user namespaces that Docker's default seccomp profile
# denies, so the container is the sandbox: --no-sandbox (browserq adds it by itself only as root).
RUN useradd --create-home --uid 10001 browserq
USER browserq
WORKDIR /home/browserq
ENV BROWSERQ_REDIS_URL=redis://redis:6379/0 \
    BROWSERQ_BROWSER_ARGS=--no-sandbox

# Healthy = this container's worker is heartbeating into Redis (not merely: the process exists).
HEALTHCHECK --interval=30s --timeout=10s --start-period=30s --retries=3 \
    CMD ["browserq", "status", "--healthcheck"]

# Exec form: `docker stop` delivers SIGTERM to the worker itself (pid 1), never to Chromium, so the
# worker drains, checkpoints its sessions to Redis and closes its browser (see stop_grace_period).
CMD ["browserq", "worker"]
