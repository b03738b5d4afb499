"""What of the dashboards rests on a topic's texts, registered with ``corpus.topic_editing`` (a
layer below): a summary is fixed once an imported judgment of it exists (it was made on the text as
it is). A deleted topic leaves the dataset's dashboard, recomputed after the commit.
"""

from collections import defaultdict
from contextlib import contextmanager

from django.db import transaction

from annotation.corpus.topic_editing import Counted, Dependent, Resting, register
from annotation.corpus.wording import count_noun, verb
from annotation.dashboards import snapshots
from annotation.dashboards.models import Judgment


def _resting(topic, kind: str, summaries: dict) -> dict[int, Resting]:
    """The metrics of the imported judgments of each summary (by its id): one query."""
    by_id = {summary.external_id: pk for pk, summary in summaries.items()}
    metrics = defaultdict(list)
    for summary_id, metric in (
        Judgment.objects.filter(topic=topic, summary__in=list(by_id))
        .order_by("metric")
        .values_list("summary", "metric")
    ):
        metrics[by_id[summary_id]].append(metric)
    return {
        pk: Resting(
            locks=[
                f"{count_noun(len(found), 'imported judgment')} ({', '.join(found)}) "
                f"{verb(len(found), 'was', 'were')} made on this text."
            ],
            words=[count_noun(len(found), "judgment")],
        )
        for pk, found in metrics.items()
    }


@contextmanager
def _deleting(topic):
    """After the delete, the dataset's dashboard is recomputed (once committed) without the topic."""
    yield
    dataset_id = topic.dataset_id
    transaction.on_commit(lambda: snapshots.schedule_with_workers([dataset_id]))


register(
    "dashboards",
    Dependent(
        resting=_resting,
        counts=(
            Counted(
                "judgments",
                Judgment,
                lambda t: Judgment.objects.filter(topic=t).count(),
                "imported judgment",
                "imported judgments",
            ),
        ),
        deleting=_deleting,
    ),
)
