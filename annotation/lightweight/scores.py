"""Scores of a lightweight-pyramid run: database rows in, ``scoring.lightweight`` out, and back.

- :func:`compute` reads a run's tasks and answers in a fixed number of queries and evaluates them
  with the run's settings (or overrides, for exports "what if").
- :func:`recompute` stores the result (``LiteResult``) unless a newer one is there; the job
  (:func:`recompute_runs`) calls it for runs whose result is not current, on a Celery worker after
  every change (``annotation.lightweight.tasks``), in-process without Redis.
- :func:`rows` gives the export levels (summary, system, worker, label) as the command line, the
  API and the pages show them; :func:`export_rows` adds which answers were counted (the run's
  ``verified_only``: all answers, or only those whose completion code the platform confirmed) and,
  on request, worker pseudonyms.
"""

from __future__ import annotations

from dataclasses import asdict

from django.db import IntegrityError, transaction

from annotation.jobs import queue
from annotation.lightweight.codes import counted_assignments, unverified
from annotation.lightweight.models import (
    ANSWER_BLANK,
    ANSWER_PRESENT,
    LightweightPyramid,
    LiteResult,
    LiteStatement,
    LiteTask,
)
from annotation.lightweight.privacy import export_worker
from annotation.lightweight.runs import PENDING_KIND
from scoring.lightweight import Assignment, Result, Settings, evaluate

LEVELS = {
    "summary": ("topic", "system", "summary", "present", "statements", "score"),
    "system": ("system", "score", "summaries"),
    "worker": ("worker", "agreement", "pairs", "removed"),
    "label": ("topic", "summary", "statement", "label", "answers"),
}


def settings_of(run: LightweightPyramid, **overrides) -> Settings:
    values = {
        "agreement": run.agreement,
        "threshold": run.threshold,
        "blank": run.blank,
        "topic_filter": run.topic_filter,
    }
    values.update({k: v for k, v in overrides.items() if v is not None})
    return Settings(**values)


def _answer(code: str) -> bool | None:
    return None if code == ANSWER_BLANK else code == ANSWER_PRESENT


COUNTED = {False: "all answers", True: "verified answers only"}


def counting(run: LightweightPyramid, verified_only: bool | None = None) -> bool:
    return run.verified_only if verified_only is None else verified_only


def scoring_input(run: LightweightPyramid, verified_only: bool = False) -> list[Assignment]:
    """The run's counted assignments (``counted_assignments``) as scoring input; statements are
    named by their external ids."""
    statements = dict(LiteStatement.objects.filter(pyramid=run).values_list("id", "external_id"))
    tasks = {
        pk: (topic, peer, ids)
        for pk, topic, peer, ids in LiteTask.objects.filter(pyramid=run).values_list(
            "id", "topic__external_id", "peer__external_id", "statement_ids"
        )
    }
    out = []
    for task_id, worker, answers in (
        counted_assignments(run, verified_only).values_list("task_id", "worker_id", "answers").order_by("id")
    ):
        topic, peer, ids = tasks[task_id]
        out.append(
            Assignment(
                task=task_id,
                topic=topic,
                summary=peer,
                worker=worker or None,
                answers=tuple((statements[s], _answer(c)) for s, c in zip(ids, answers, strict=True)),
            )
        )
    return out


def compute(run: LightweightPyramid, settings: Settings | None = None, verified_only: bool | None = None) -> Result:
    return evaluate(scoring_input(run, counting(run, verified_only)), settings or settings_of(run))


def export_rows(
    run: LightweightPyramid, level: str, settings: Settings, verified_only: bool | None = None, pseudonyms: bool = False
) -> tuple[list[dict], tuple[str, ...]]:
    """The rows and columns of one export level, each row saying which answers were counted
    (``counted``); with ``pseudonyms`` the worker ids are the run's pseudonyms."""
    verified_only = counting(run, verified_only)
    out = rows(compute(run, settings, verified_only), level)
    shown = export_worker(run, pseudonyms)
    for row in out:
        row["counted"] = COUNTED[verified_only]
        if "worker" in row:
            row["worker"] = shown(row["worker"])
    return out, LEVELS[level] + ("counted",)


def rows(result: Result, level: str) -> list[dict]:
    """The export rows of one level (keys as ``LEVELS``; worker rows also carry ``reason``)."""
    if level == "summary":
        return [
            {
                "topic": s.topic,
                "system": s.system,
                "summary": s.summary,
                "present": s.present,
                "statements": s.statements,
                "score": s.score,
            }
            for s in sorted(result.summaries, key=lambda s: (s.topic, s.summary))
        ]
    if level == "system":
        return [
            {
                "system": s.system,
                "score": s.score,
                "summaries": s.summaries,
                "stdev": s.stdev,
                "min": s.minimum,
                "max": s.maximum,
            }
            for s in result.systems
        ]
    if level == "worker":
        return [
            {"worker": w.worker, "agreement": w.agreement, "pairs": w.pairs, "removed": w.removed, "reason": w.reason}
            for w in sorted(result.workers, key=lambda w: (w.agreement is None, w.agreement or 0, w.worker))
        ]
    if level == "label":
        return [
            {
                "topic": x.topic,
                "summary": x.summary,
                "statement": x.statement,
                "label": int(x.present),
                "answers": x.answers,
                "present_answers": x.present_answers,
            }
            for x in sorted(result.labels, key=lambda x: (x.topic, x.summary, _natural(x.statement)))
        ]
    raise ValueError(f"unknown level {level!r}: choose one of {', '.join(LEVELS)}")


def _natural(statement_id: str):
    return (0, int(statement_id), "") if str(statement_id).isdigit() else (1, 0, str(statement_id))


def payload(result: Result) -> dict:
    """What is stored and served: every level but labels (those are exported on demand)."""
    return {
        "summaries": rows(result, "summary"),
        "systems": rows(result, "system"),
        "workers": rows(result, "worker"),
        "topics": [
            {"topic": t.topic, "alpha": t.alpha, "tasks": t.tasks, "dropped": t.dropped}
            for t in sorted(result.topics, key=lambda t: t.topic)
        ],
    }


def stored_settings(run: LightweightPyramid) -> dict:
    """The run's settings as its result stores them (JSON), with which answers are counted."""
    values = {k: getattr(v, "value", v) for k, v in asdict(settings_of(run)).items()}
    return {**values, "verified_only": run.verified_only}


def is_current(run: LightweightPyramid, result: LiteResult | None) -> bool:
    """Was ``result`` computed from the run's revision and today's settings? (A setting changed
    without a new revision makes it stale too.)"""
    return result is not None and (result.revision, result.settings) == (run.revision, stored_settings(run))


def stale_among(run_ids) -> list[int]:
    """Those of these runs whose stored result is missing or not current."""
    ids = list(run_ids)
    stored = LiteResult.objects.filter(pyramid_id__in=ids).only("pyramid_id", "revision", "settings")
    results = {r.pyramid_id: r for r in stored}
    runs = LightweightPyramid.objects.filter(pk__in=ids).order_by("pk")
    return [run.pk for run in runs if not is_current(run, results.get(run.pk))]


def recompute(run_id: int) -> bool:
    """Compute and store a run's scores; False when the run is gone or a newer result is stored."""
    run = LightweightPyramid.objects.filter(pk=run_id).first()
    if run is None:
        return False
    revision = run.revision
    settings = settings_of(run)
    data = payload(compute(run, settings, run.verified_only))
    data["counted"] = COUNTED[run.verified_only]
    data["unverified"] = unverified(run).count()
    values = {"revision": revision, "payload": data, "settings": stored_settings(run)}
    updated = LiteResult.objects.filter(pyramid_id=run_id, revision__lte=revision).update(**values)
    if updated:
        return True
    try:
        with transaction.atomic():
            LiteResult.objects.create(pyramid_id=run_id, **values)
        return True
    except IntegrityError:
        return False  # a newer result was stored meanwhile


def stored(run: LightweightPyramid) -> tuple[dict | None, bool]:
    """(stored payload or None, whether it is current)."""
    result = LiteResult.objects.filter(pyramid=run).first()
    if result is None:
        return None, False
    return result.payload, is_current(run, result)


def recompute_runs(run_ids) -> int:
    """The lightweight job's work (the Celery task ``annotation.recompute_lightweight``, or the
    in-process runner): the runs are released first, so changes from now on publish anew; only
    those whose result is not current are computed (``stale_among``: a copy of a message delivered
    again, or another message for an unchanged run, computes nothing)."""
    return sum(recompute(pk) for pk in queue.start(PENDING_KIND, run_ids, stale_among))
