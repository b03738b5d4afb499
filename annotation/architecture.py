"""The architecture page, generated from the code: the concept packages with their modules, every
URL pattern with the view that answers it, every Celery task and every public function of the
pure scoring core, each with the module that holds it (``manage.py architecture``).

Read from the live objects (the URL resolver, the Celery app's registry, the modules' own
docstrings), never from a list kept by hand, so a new URL, task or score function appears on the
page by itself and ``tests/foundation/test_architecture.py`` fails until the page is regenerated.
"""
from __future__ import annotations

import importlib
import re
import inspect
import pkgutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONCEPTS = ("corpus", "access", "pyramids", "history", "peers", "adjudication", "lightweight", "dashboards", "transfer", "jobs", "api", "formats")
SCORING_MODULES = "scoring"


def first_line(obj) -> str:
    doc = inspect.getdoc(obj) or ""
    return " ".join(doc.split("\n\n")[0].split()).replace("|", "\\|") if doc else ""


def _modules(package: str) -> list[str]:
    module = importlib.import_module(package)
    return sorted(f"{package}.{info.name}" for info in pkgutil.iter_modules(module.__path__) if not info.name.startswith("_"))


def concepts() -> list[str]:
    lines = ["## Concepts", "",
             "`annotation/` is one Django app (one set of tables and migrations) made of one package per concept.", ""]
    for concept in CONCEPTS:
        package = f"annotation.{concept}"
        lines += [f"### `{package}`", "", first_line(importlib.import_module(package)), "", "| module | what it is for |", "|---|---|"]
        for name in _modules(package):
            lines.append(f"| `{name}` | {first_line(importlib.import_module(name))} |")
        lines.append("")
    return lines


def _walk(patterns, prefix=""):
    from django.urls import URLPattern, URLResolver

    for pattern in patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            yield from _walk(pattern.url_patterns, route)
        elif isinstance(pattern, URLPattern):
            yield route, pattern


def readable(route: str) -> str:
    """A route as people write it: ``^scus/(?P<pk>[^/.]+)/$`` (a DRF router's regex) is ``scus/<pk>/``."""
    route = re.sub(r"\(\?P<(\w+)>[^)]*\)", r"<\1>", route)
    return route.replace("^", "").replace("$", "").replace("\\.", ".").replace("/?", "/")


def _view_path(callback) -> str:
    """The view, or for an action defined outside the view's module (a mixin of another concept,
    as ``history``'s undo, or one a higher concept adds through ``urls.extends``), the class that
    defines it: where its code is."""
    view = getattr(callback, "view_class", None) or getattr(callback, "cls", None) or callback
    for name in set((getattr(callback, "actions", None) or {}).values()):
        owner = next((base for base in view.__mro__ if name in vars(base)), view)
        if getattr(getattr(owner, name), "mapping", None) is not None and owner.__module__ != view.__module__:
            return f"{owner.__module__}.{owner.__qualname__}"
    return f"{view.__module__}.{view.__qualname__}"


def url_patterns() -> list[str]:
    from django.urls import get_resolver

    lines = ["## URL patterns", "", "Every route the app answers (Django's admin left out), with the view and its module.", "",
             "| route | name | view |", "|---|---|---|"]
    for route, pattern in _walk(get_resolver().url_patterns):
        if route.startswith("admin/"):
            continue
        name = pattern.name or ""
        lines.append(f"| `/{readable(route)}` | {name} | `{_view_path(pattern.callback)}` |")
    return lines + [""]


def tasks() -> list[str]:
    from django.conf import settings

    from pyramid_app.celery import app

    app.loader.import_default_modules()
    from annotation.jobs.queue import JOBS

    started_by = {job.task: f"job `{kind}`, published by the services" for kind, job in JOBS.items() if job.task}
    for entry in settings.CELERY_BEAT_SCHEDULE.values():
        started_by.setdefault(entry["task"], f"beat, every {entry['schedule']:g} s")
    lines = ["## Celery tasks", "",
             "Every task the workers run, and what sends it (`annotation.jobs.queue.JOBS`, `CELERY_BEAT_SCHEDULE`).", "",
             "| task | function | sent by |", "|---|---|---|"]
    for name in sorted(n for n in app.tasks if not n.startswith("celery.")):
        task = app.tasks[name]
        run = getattr(task, "run", task)
        lines.append(f"| `{name}` | `{run.__module__}.{run.__name__}` | {started_by.get(name, '')} |")
    return lines + [""]


def score_functions() -> list[str]:
    lines = ["## Score functions", "",
             "The public functions of the pure scoring core (`scoring/`, no Django), module by module.", ""]
    for name in _modules(SCORING_MODULES):
        module = importlib.import_module(name)
        functions = [f for f_name, f in inspect.getmembers(module, inspect.isfunction)
                     if f.__module__ == name and not f_name.startswith("_")]
        if not functions:
            continue
        lines += [f"### `{name}`", "", first_line(module), "", "| function | what it computes |", "|---|---|"]
        lines += [f"| `{f.__name__}` | {first_line(f)} |" for f in sorted(functions, key=lambda f: f.__name__)]
        lines.append("")
    return lines


def render() -> str:
    lines = ["# Architecture", "",
             "Generated from the code by `python manage.py architecture --output docs/architecture.md`;",
             "`tests/foundation/test_architecture.py` fails when it is out of date. The layout's reasons are in",
             "[README's layout section](../README.md#layout).", ""]
    lines += concepts() + url_patterns() + tasks() + score_functions()
    return "\n".join(line.rstrip() for line in lines).rstrip() + "\n"
