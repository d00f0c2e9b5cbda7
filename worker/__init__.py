"""browserq's execution side: the Celery app, the browser host, sessions and tool handlers."""
