"""gunicorn's settings for the production shape (Dockerfile, docker-compose.yml, bench/): read
with ``gunicorn pyramid_app.wsgi -c pyramid_app/gunicorn_conf.py`` (run from the repository or /app).

Threaded workers (gthread): a request spends part of its time waiting for PostgreSQL and Redis,
during which a sync worker's core would idle; with several threads per process another request
runs meanwhile, and HTTP keep-alive spares a connection per request. One process per core plus
one keeps both cores of a small server busy without a crowd of processes fighting over them
(measured with ``bench/lightweight_crowd.py``: docs/performance.md). Each thread holds
its own database connection (``DB_CONN_MAX_AGE``): processes x threads connections.

``WEB_CONCURRENCY`` (processes) and ``GUNICORN_THREADS`` override the defaults.
"""

import os

workers = int(os.environ.get("WEB_CONCURRENCY", (os.cpu_count() or 1) + 1))
worker_class = "gthread"
threads = int(os.environ.get("GUNICORN_THREADS", 4))


def post_worker_init(worker):
    """Import every view before the worker takes its first request: resolving the URL
    configuration imports the views and what they import (the API), and scipy's statistics, which
    the scoring modules import on first use (``scoring.scipy_stats``), some 0.8 s that the first
    visitor of each worker would otherwise wait for. And build the tables
    that reversing a URL reads (each namespace's): built on the first ``reverse``/``{% url %}``,
    by every thread that reverses before one has finished them (a crowd's first submissions, whose
    page links the next task, built them about seven times per process, a twentieth of the app's
    CPU in a 200-worker burst). And read the trained suggestions and proposals models, when their files
    exist, and the lemmatizer's English dictionary: the first suggestions of each worker otherwise
    waited for them (scikit-learn imported and a model unpickled, 1.2 CPU-s; the dictionary 0.1), which
    made the first "Done, next peer" of a session wait half a second for its read-ahead."""
    from django.urls import get_resolver

    from annotation.pyramids import proposals, suggestion_features, suggestion_model
    from scoring.scipy_stats import stats

    stats()
    suggestion_model.load()
    proposals.load_model()
    suggestion_features.tokens("warm")
    resolver = get_resolver()
    resolver.url_patterns  # noqa: B018  (reading it imports every view)
    _reversal_tables(resolver)


def _reversal_tables(resolver) -> None:
    resolver.reverse_dict  # noqa: B018  (reading it builds the resolver's tables)
    for _, included in resolver.namespace_dict.values():
        _reversal_tables(included)
