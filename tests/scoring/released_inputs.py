"""Released lightweight-pyramid files as scoring input (no database), which the reproduction tests
score directly (the app imports them through ``annotation.lightweight.importing``).

A Phase-2 results row is one assignment; its task is (event, summary, the statement ids in order).
A Lite2-3Pyramid label line is one *aggregated* assignment without a worker: its single answer per
statement is the released label, so the majority vote gives the label back and no worker filter
applies (the answers themselves were not released).
"""

from __future__ import annotations

from annotation.formats.lightweight_csv import Phase2Result
from annotation.formats.lite23pyramid import Lite23Dataset
from scoring.lightweight import Assignment


def task_key(event: str, summary: str, statements) -> tuple:
    return (event, summary, tuple(statements))


def assignments_from_phase2(results: list[Phase2Result]) -> list[Assignment]:
    return [
        Assignment(
            task=task_key(r.task.event, r.task.summary, (q for q, _ in r.task.statements)),
            topic=r.task.event,
            summary=r.task.summary,
            worker=r.worker,
            answers=r.answers,
        )
        for r in results
    ]


def assignments_from_lite23(dataset: Lite23Dataset) -> list[Assignment]:
    """Statement ids are positions in ``SCUs.txt`` (``0``, ``1``, ...), the summary id is the system."""
    out = []
    for system in dataset.systems:
        for document, labels in zip(dataset.documents, system.labels, strict=True):
            ids = [str(i) for i in range(len(labels))]
            out.append(
                Assignment(
                    task=task_key(document, system.system, ids),
                    topic=document,
                    summary=system.system,
                    worker=None,
                    answers=tuple(zip(ids, labels, strict=True)),
                )
            )
    return out
