"""What of the crowd's lightweight pyramids rests on a topic's texts, registered with
``corpus.topic_editing`` (a layer below): a reference is fixed once crowd statements or writing
assignments come from it, a peer once crowd judging tasks are of it. The runs that had statements
or tasks in a deleted topic are touched, so their scores are recomputed without it.
"""

from contextlib import contextmanager

from django.db.models import Count

from annotation.corpus.topic_editing import Counted, Dependent, Resting, register
from annotation.corpus.wording import count_noun, verb
from annotation.lightweight import runs
from annotation.lightweight.models import LightweightPyramid, LiteAssignment, LiteStatement, LiteTask, LiteWriting


def _resting(topic, kind: str, summaries: dict) -> dict[int, Resting]:
    """Crowd statements and writings from each reference, or judging tasks of each peer: a query each."""
    sources = (
        ((LiteStatement, "reference"), (LiteWriting, "reference")) if kind == "reference" else ((LiteTask, "peer"),)
    )
    crowd: dict[int, int] = {}
    for model, key in sources:
        for summary_id, n in (
            model.objects.filter(**{f"{key}__in": summaries}).values(key).annotate(n=Count("id")).values_list(key, "n")
        ):
            crowd[summary_id] = crowd.get(summary_id, 0) + n
    what, words = (
        ("crowd statement", "crowd statement") if kind == "reference" else ("crowd judging task", "crowd task")
    )
    return {
        pk: Resting(
            locks=[f"{count_noun(n, what)} of a lightweight pyramid {verb(n, 'rests', 'rest')} on this text."],
            words=[count_noun(n, words)],
        )
        for pk, n in crowd.items()
        if n
    }


@contextmanager
def _deleting(topic):
    """The runs with statements or tasks in the topic, read before the delete, touched after it."""
    touched = list(
        LightweightPyramid.objects.filter(pk__in=LiteStatement.objects.filter(topic=topic).values("pyramid"))
        | LightweightPyramid.objects.filter(pk__in=LiteTask.objects.filter(topic=topic).values("pyramid"))
    )
    yield
    for run in touched:
        runs.touch(run)


register(
    "lightweight",
    Dependent(
        resting=_resting,
        counts=(
            Counted(
                "crowd_statements",
                LiteStatement,
                lambda t: LiteStatement.objects.filter(topic=t).count(),
                "crowd statement",
                "crowd statements",
            ),
            Counted(
                "crowd_writings",
                LiteWriting,
                lambda t: LiteWriting.objects.filter(reference__topic=t).count(),
                "crowd writing assignment",
                "crowd writing assignments",
            ),
            Counted(
                "crowd_tasks",
                LiteTask,
                lambda t: LiteTask.objects.filter(topic=t).count(),
                "crowd judging task",
                "crowd judging tasks",
            ),
            Counted(
                "crowd_answers",
                LiteAssignment,
                lambda t: LiteAssignment.objects.filter(task__topic=t).count(),
                "crowd answer set",
                "crowd answer sets",
            ),
        ),
        deleting=_deleting,
    ),
)
