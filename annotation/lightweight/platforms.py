"""Crowd workers sent by a platform: who they are, and how their work ends.

MTurk opens an external question with ``assignmentId``, ``hitId``, ``workerId`` and
``turkSubmitTo`` in the URL (in the preview before the HIT is accepted, only
``assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE``); Prolific with ``PROLIFIC_PID``, ``STUDY_ID`` and
``SESSION_ID``. Their ids are taken from the URL instead of being typed (a typed id stays for other
crowds), validated (length, charset, and ``turkSubmitTo`` only MTurk's own two sites: it is where
the end of the task posts to), and recorded with each submission (``PlatformSubmission``).

The end of the task follows each platform: MTurk's external-question submit (a form POST of
``assignmentId`` to ``turkSubmitTo/mturk/externalSubmit``; the completion code goes along as
``surveycode``, so MTurk's batch results carry it as ``Answer.surveycode``), and Prolific's
completion redirect with the study's completion code set by the coordinator. One MTurk assignment
is one piece of work: opening the HIT again shows its end again rather than another task.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlencode

from annotation.corpus.models import ReferenceSummary
from annotation.lightweight.models import CrowdLink, LiteAssignment, LiteTask, LiteWriting, PlatformSubmission
from annotation.lightweight.work import WorkError

Platform = PlatformSubmission.Platform
MTURK_PREVIEW = "ASSIGNMENT_ID_NOT_AVAILABLE"
MTURK_SITES = ("https://www.mturk.com", "https://workersandbox.mturk.com")
PROLIFIC_COMPLETE = "https://app.prolific.com/submissions/complete"
_MTURK_ID = re.compile(r"[A-Z0-9]{1,64}")  # MTurk's worker, assignment and HIT ids
_PROLIFIC_ID = re.compile(r"[0-9a-f]{24}")  # Prolific's ids are 24 hex digits
MTURK_PARAMS = ("assignmentId", "hitId", "workerId", "turkSubmitTo")
PROLIFIC_PARAMS = ("PROLIFIC_PID", "STUDY_ID", "SESSION_ID")


@dataclass(frozen=True)
class Visit:
    """A worker arriving from a platform (``worker`` empty in MTurk's preview)."""

    platform: str
    worker: str = ""
    assignment: str = ""  # MTurk assignmentId / Prolific SESSION_ID
    task: str = ""  # MTurk hitId / Prolific STUDY_ID
    submit_to: str = ""  # MTurk turkSubmitTo
    preview: bool = False

    def record(self) -> dict:
        """The ``PlatformSubmission`` fields of a submission made in this visit."""
        return {"platform": self.platform, "platform_assignment": self.assignment, "platform_task": self.task}

    def query(self) -> str:
        """The platform's parameters again, for the links and forms of the following pages."""
        if self.platform == Platform.MTURK:
            values = (
                {"assignmentId": MTURK_PREVIEW}
                if self.preview
                else {
                    "assignmentId": self.assignment,
                    "hitId": self.task,
                    "workerId": self.worker,
                    "turkSubmitTo": self.submit_to,
                }
            )
        else:
            values = {"PROLIFIC_PID": self.worker, "STUDY_ID": self.task, "SESSION_ID": self.assignment}
        return urlencode(values)


def _one(params, name: str, pattern: re.Pattern, what: str) -> str:
    value = params.get(name, "")
    if not isinstance(value, str) or not pattern.fullmatch(value):
        raise WorkError(
            f"The link from {what} is incomplete or damaged ({name} is missing or not a {what} id). "
            f"Please open the task again from {what}."
        )
    return value


def visit_of(params) -> Visit | None:
    """The platform visit named by these URL parameters; None without any (a typed id is asked).
    Raises ``WorkError`` when they are there but not valid."""
    if any(name in params for name in MTURK_PARAMS):
        if params.get("assignmentId") == MTURK_PREVIEW:
            return Visit(Platform.MTURK, preview=True)
        submit_to = params.get("turkSubmitTo", "").rstrip("/")
        if submit_to not in MTURK_SITES:
            raise WorkError(
                "The link from MTurk is incomplete or damaged (turkSubmitTo is not MTurk). "
                "Please open the task again from MTurk."
            )
        return Visit(
            Platform.MTURK,
            worker=_one(params, "workerId", _MTURK_ID, "MTurk"),
            assignment=_one(params, "assignmentId", _MTURK_ID, "MTurk"),
            task=_one(params, "hitId", _MTURK_ID, "MTurk"),
            submit_to=submit_to,
        )
    if any(name in params for name in PROLIFIC_PARAMS):
        return Visit(
            Platform.PROLIFIC,
            worker=_one(params, "PROLIFIC_PID", _PROLIFIC_ID, "Prolific"),
            task=_one(params, "STUDY_ID", _PROLIFIC_ID, "Prolific"),
            assignment=_one(params, "SESSION_ID", _PROLIFIC_ID, "Prolific"),
        )
    return None


def submitted(link: CrowdLink, visit: Visit) -> LiteAssignment | LiteWriting | None:
    """The submission already made in this MTurk assignment (one assignment, one piece of work)."""
    if visit.platform != Platform.MTURK or visit.preview:
        return None
    found = {"platform": Platform.MTURK, "platform_assignment": visit.assignment, "worker_id": visit.worker}
    if link.kind == CrowdLink.Kind.WRITING:
        return LiteWriting.objects.filter(pyramid_id=link.pyramid_id, **found).first()
    return LiteAssignment.objects.filter(task__pyramid_id=link.pyramid_id, **found).first()


def preview_work(link: CrowdLink) -> LiteTask | ReferenceSummary | None:
    """What MTurk's preview shows: a piece of the link's work, with no hold taken."""
    if link.kind == CrowdLink.Kind.WRITING:
        return (
            ReferenceSummary.objects.filter(topic__dataset_id=link.pyramid.dataset_id)
            .order_by("topic__external_id", "external_id")
            .first()
        )
    tasks = LiteTask.objects.filter(pyramid_id=link.pyramid_id).select_related("peer").order_by("id")
    return (tasks.filter(batch=link.batch) if link.batch else tasks).first()


def ending(visit: Visit | None, code: str, prolific_code: str) -> dict | None:
    """How the worker hands the work in: ``{"mturk": action URL, "fields": {...}}`` (a form POST),
    ``{"prolific": URL}`` (a link), or None (the worker copies the completion code itself; also for
    Prolific while the coordinator has not set the study's code)."""
    if visit is None:
        return None
    if visit.platform == Platform.MTURK:
        return {
            "mturk": f"{visit.submit_to}/mturk/externalSubmit",
            "origin": visit.submit_to,
            "fields": {"assignmentId": visit.assignment, "surveycode": code},
        }
    if prolific_code:
        return {"prolific": f"{PROLIFIC_COMPLETE}?{urlencode({'cc': prolific_code})}"}
    return None
