"""The Django project: settings, URLs and the Celery app.

The Celery app (``pyramid_app.celery``) is imported on first use, not whenever Django starts: every
process imports this package (the settings live in it) and importing Celery costs a command about a
fifth of a second. Tasks are only sent by name through ``annotation.jobs.queue.dispatch``, which
imports the app first; a worker started with ``celery -A pyramid_app`` loads ``pyramid_app.celery``
itself, and with it every concept's ``tasks`` module.
"""

__all__ = ("celery_app",)


def __getattr__(name: str):
    if name == "celery_app":
        from .celery import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
