"""The architecture page, generated from the code: the layer order, the three main flows, the
concept packages with their modules, every URL pattern with the view that answers it, every Celery
task and every public function of the pure scoring core, each with the module that holds it
(``manage.py architecture``).

Read from the live objects (the URL resolver, the Celery app's registry, the modules' own
docstrings) and from the layer contract itself (``pyproject.toml``'s ``[tool.importlinter]``, which
``tests/foundation/test_layers.py`` enforces), never from a list kept by hand, so a new URL, task,
score function or layer appears on the page by itself and ``tests/foundation/test_architecture.py``
fails until the page is regenerated. The flows are written here by hand, but every function they
name is looked up when the page is drawn: a renamed or moved one stops the generator.

It imports every module it describes by name (``importlib``): the one introspection allowed to, as
``tests/foundation/test_layers.py`` says.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONCEPTS = (
    "corpus",
    "access",
    "pyramids",
    "history",
    "peers",
    "adjudication",
    "lightweight",
    "dashboards",
    "transfer",
    "jobs",
    "api",
    "formats",
)
SCORING_MODULES = "scoring"


def first_line(obj) -> str:
    doc = inspect.getdoc(obj) or ""
    return " ".join(doc.split("\n\n")[0].split()).replace("|", "\\|") if doc else ""


def _modules(package: str) -> list[str]:
    module = importlib.import_module(package)
    return sorted(
        f"{package}.{info.name}" for info in pkgutil.iter_modules(module.__path__) if not info.name.startswith("_")
    )


def layer_contract() -> dict:
    """The layers contract of ``pyproject.toml`` (the one place the order is written)."""
    with open(ROOT / "pyproject.toml", "rb") as handle:
        linter = tomllib.load(handle)["tool"]["importlinter"]
    [contract] = [c for c in linter["contracts"] if c["id"] == "layers"]
    return contract


def _layer_cell(layer: str) -> str:
    independent = "|" in layer
    names = [name.strip() for name in re.split(r"[|:]", layer)]
    joined = (r" \| " if independent else " : ").join(f"`{name}`" for name in names)
    if len(names) == 1:
        return joined
    return joined + (" (independent: neither imports the other)" if independent else " (may import each other)")


def layers() -> list[str]:
    contract = layer_contract()
    lines = [
        "## Layers",
        "",
        "Top to bottom, as `pyproject.toml`'s `[tool.importlinter]` contract writes them (the one place the order is",
        "written; `tests/foundation/test_layers.py` checks every import against it, imports inside functions and",
        "chains through other modules included, and no import is exempt). A layer may import the layers below it,",
        "never one above, so no two packages import each other. Work that must go up is published by name through",
        "the job queue (`annotation.jobs.queue.JOBS`); a synchronous hook that must go up is registered with the",
        "lower package, by a module of the higher one that `annotation.apps` imports when the app is ready:",
        "",
        "| registry (lower package) | what registers with it |",
        "|---|---|",
    ]
    for registry, what in REGISTRIES:
        _resolve(registry)  # a registry renamed or gone fails the page, not a reader
        lines.append(f"| `{registry}` | {what} |")
    lines += [
        "",
        "```mermaid",
        "flowchart TD",
    ]
    names = [" ".join(name.strip() for name in re.split(r"([|:])", layer)) for layer in contract["layers"]]
    lines += [f'    L{n}["{name}"]' + (f" --> L{n + 1}" if n < len(names) else "") for n, name in enumerate(names, 1)]
    lines += ["```", "", "| # | layer |", "|---|---|"]
    lines += [f"| {n} | {_layer_cell(layer)} |" for n, layer in enumerate(contract["layers"], 1)]
    return lines + [""]


# The registries through which a higher concept joins a lower one (each resolved when the page is drawn).
REGISTRIES = [
    ("annotation.access.rules.register", "each concept's access rules (`<concept>/access.py`)"),
    (
        "annotation.history.changes.register",
        "each document the audit history records (`pyramids/document_states.py`, `peers/document_states.py`); "
        "`bump_revisions_with`: the revision hook of `peers/score_events.py`",
    ),
    (
        "annotation.corpus.topic_editing.register",
        "what rests on a topic's texts, what a delete removes, what to lock and let go "
        "(`history`, `pyramids`, `peers`, `dashboards`, `lightweight`: `<concept>/topic_editing.py`)",
    ),
    (
        "annotation.pyramids.construction.score_peers_with",
        "the peers' scores construction agreement's practical test compares (`peers/construction_scores.py`)",
    ),
    (
        "annotation.peers.results.register_adjudicated",
        "adjudication's part of the rule of what counts (`adjudication/counting.py`)",
    ),
]


# The three main flows, step by step: (the function that does the step, or None for the HTTP
# request, what happens). Every name is resolved when the page is drawn.
FLOWS = {
    "A match saved to a stored score": [
        (
            None,
            "`POST /api/matches/` (the annotator's editor) reaches the match's view (URL patterns below), "
            "which checks the access rule and calls the peers' action.",
        ),
        ("annotation.peers.actions.match_span", "the action, recorded in the audit history and undoable."),
        (
            "annotation.history.changes.annotation_action",
            "locks the annotation's row, checks the revision the client saw (409 with the changes since), "
            "reads the state before.",
        ),
        ("annotation.peers.editing.add_match", "writes the match and its spans whole or not at all."),
        (
            "annotation.peers.score_events.revisions_bumped_once",
            "the hook the history calls around the action: the annotation's and its topic's revisions move once, "
            "in the same transaction.",
        ),
        (
            "annotation.peers.recompute.schedule",
            "after the commit, everything the transaction made stale is published by name: "
            "`annotation`, `topic` (its agreement and construction agreement, one job).",
        ),
        (
            "annotation.jobs.queue.publish",
            "hands the ids to the background runner's thread; the request has answered already.",
        ),
        (
            "annotation.jobs.queue.dispatch",
            "runs the job in-process (no Redis) or sends its Celery task (`annotation.recompute_scores`), "
            "once per burst.",
        ),
        (
            "annotation.peers.recompute.recompute_annotations",
            "reads the revisions first, then the prepared pyramid and the matches, "
            "and stores both conventions' scores.",
        ),
        ("scoring.scores.score_prepared", "the pure score of one annotation against its prepared pyramid."),
        (
            "annotation.peers.recompute.recompute_topics",
            "the topic's agreement and construction agreement (at most once per `AGREEMENT_SPACING_SECONDS`), "
            "then the dashboards of its dataset are published by name (`dashboard`).",
        ),
        (
            "annotation.dashboards.snapshots.recompute_datasets",
            "recomputes the dataset's dashboard snapshot, which the pages read (one nobody looks at once its "
            "data is quiet for `DASHBOARD_QUIET_SECONDS`).",
        ),
    ],
    "A DUCView import": [
        (None, "`POST /api/datasets/<pk>/import/` (or `manage.py import_ducview`): the dataset's coordinators only."),
        (
            "annotation.access.rules.coordinated_dataset",
            "404 if the dataset is not visible, 403 if it is not coordinated.",
        ),
        ("annotation.transfer.uploads.collect_files", "reads the uploaded files and zip archives, every size bounded."),
        ("annotation.transfer.uploads.import_files", "names the annotators, pyramids first."),
        (
            "annotation.transfer.ducview_import.import_all",
            "imports each file whole or not at all, in batches, the score events batched.",
        ),
        (
            "annotation.formats.ducview.parse_pyramid",
            "parses a `.pyr` (pure Python, no database; `parse_peer_annotation` for a `.pan`).",
        ),
        (
            "annotation.peers.score_events.touch_pyramid",
            "bulk writes bypass the signals: the import bumps the revisions itself "
            "(`annotations_created` for the annotations).",
        ),
        (
            "annotation.peers.recompute.schedule",
            "once at the end of the batch: the scores, agreement and construction agreement of what was imported, "
            "as for a match.",
        ),
    ],
    "A crowd judgment": [
        (
            None,
            "`POST /api/crowd/<token>/` from a crowd worker "
            "(no login: the link's token opens only its own work, rate limited).",
        ),
        ("annotation.lightweight.work.link_of", "the crowd link the token names."),
        (
            "annotation.lightweight.work.submit_judgments",
            "checks the worker's hold on the task and stores the answers, with a completion code.",
        ),
        (
            "annotation.lightweight.runs.touch",
            "bumps the run's revision; after the commit the run is published by name (`lightweight`).",
        ),
        (
            "annotation.lightweight.scores.recompute_runs",
            "recomputes the runs whose stored result is not current (Celery task `annotation.recompute_lightweight`).",
        ),
        (
            "scoring.lightweight.evaluate",
            "the pure aggregation: worker quality, majority labels, summary and system scores, crowd alpha.",
        ),
        ("annotation.lightweight.dashboard", "what the coordinator sees of the run, read from the stored result."),
    ],
}


def _resolve(dotted: str):
    """The module or function ``dotted`` names (the longest importable module, then attributes)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            found = getattr(found, name)
        return found
    raise LookupError(
        f"a flow or registry names {dotted!r}, which does not exist: correct FLOWS or REGISTRIES in "
        "annotation/architecture.py"
    )


def flows() -> list[str]:
    lines = [
        "## Three flows",
        "",
        "What runs, layer by layer, for the three things the app is for. The functions are checked to exist",
        "whenever this page is generated.",
        "",
    ]
    for title, steps in FLOWS.items():
        lines += [f"### {title}", ""]
        for number, (dotted, text) in enumerate(steps, 1):
            if dotted is None:
                lines.append(f"{number}. {text}")
                continue
            _resolve(dotted)
            layer = next(
                (
                    name
                    for layer in layer_contract()["layers"]
                    for name in re.split(r"[|:]", layer)
                    if dotted == name.strip() or dotted.startswith(name.strip() + ".")
                ),
                "",
            )
            lines.append(f"{number}. `{dotted}` ({layer.strip()}): {text}")
        lines.append("")
    return lines


def concepts() -> list[str]:
    lines = [
        "## Concepts",
        "",
        "`annotation/` is one Django app (one set of tables and migrations) made of one package per concept.",
        "",
    ]
    for concept in CONCEPTS:
        package = f"annotation.{concept}"
        lines += [
            f"### `{package}`",
            "",
            first_line(importlib.import_module(package)),
            "",
            "| module | what it is for |",
            "|---|---|",
        ]
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

    lines = [
        "## URL patterns",
        "",
        "Every route the app answers (Django's admin left out), with the view and its module.",
        "",
        "| route | name | view |",
        "|---|---|---|",
    ]
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
    lines = [
        "## Celery tasks",
        "",
        "Every task the workers run, and what sends it (`annotation.jobs.queue.JOBS`, `CELERY_BEAT_SCHEDULE`).",
        "",
        "| task | function | sent by |",
        "|---|---|---|",
    ]
    for name in sorted(n for n in app.tasks if not n.startswith("celery.")):
        task = app.tasks[name]
        run = getattr(task, "run", task)
        lines.append(f"| `{name}` | `{run.__module__}.{run.__name__}` | {started_by.get(name, '')} |")
    return lines + [""]


def score_functions() -> list[str]:
    lines = [
        "## Score functions",
        "",
        "The public functions of the pure scoring core (`scoring/`, no Django), module by module.",
        "",
    ]
    for name in _modules(SCORING_MODULES):
        module = importlib.import_module(name)
        functions = [
            f
            for f_name, f in inspect.getmembers(module, inspect.isfunction)
            if f.__module__ == name and not f_name.startswith("_")
        ]
        if not functions:
            continue
        lines += [f"### `{name}`", "", first_line(module), "", "| function | what it computes |", "|---|---|"]
        lines += [f"| `{f.__name__}` | {first_line(f)} |" for f in sorted(functions, key=lambda f: f.__name__)]
        lines.append("")
    return lines


def render() -> str:
    lines = [
        "# Architecture",
        "",
        "Generated from the code by `python manage.py architecture --output docs/architecture.md`;",
        "`tests/foundation/test_architecture.py` fails when it is out of date. The layout's reasons are in",
        "[README's layout section](../README.md#layout).",
        "",
    ]
    lines += layers() + flows() + concepts() + url_patterns() + tasks() + score_functions()
    return "\n".join(line.rstrip() for line in lines).rstrip() + "\n"
