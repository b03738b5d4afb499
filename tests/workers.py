"""Each pytest-xdist worker its own Redis database (loaded with ``-p``, before Django reads its
settings): the database after the configured one, one per worker (``gw0`` the next). pytest-django
names a test database per worker, and the fault and scale stacks look for ports per worker
(``tests/faults/harness.worker_number``). Outside xdist nothing changes."""

import os
from urllib.parse import urlsplit, urlunsplit

REDIS_DATABASES = 16  # redis-server's default


def worker_redis_url(url: str, worker: str) -> str:
    """``url`` naming the database of ``worker`` (gw0, gw1, ...)."""
    parts = urlsplit(url)
    configured = int(parts.path.strip("/") or 0)
    database = (configured + 1 + int(worker.removeprefix("gw"))) % REDIS_DATABASES
    return urlunsplit(parts._replace(path=f"/{database}"))


if os.environ.get("PYTEST_XDIST_WORKER") and os.environ.get("REDIS_URL"):
    os.environ["REDIS_URL"] = worker_redis_url(os.environ["REDIS_URL"], os.environ["PYTEST_XDIST_WORKER"])
