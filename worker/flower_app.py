"""The Celery app Flower loads by module path: `celery --app worker.flower_app flower`.

Flower (like `celery inspect` and `celery events`) needs an importable app with the fleet's broker
settings. This one comes from the same `Settings` as every component (so `BROWSERQ_REDIS_URL` or
browserq.toml pick the Redis), defines no tasks (Flower learns task names from the workers'
events) and imports neither Playwright nor the worker runtime, so it starts nothing.
"""

from __future__ import annotations

from client.settings import Settings
from client.transport import make_celery

__all__ = ["app"]

app = make_celery(Settings(), "browserq-flower")
# Flower's /api/task/result builds AsyncResult without an app: it must find this one's backend.
app.set_default()
