"""What a delete of a topic removes of the edit history (its pyramids' and annotations' changes go
with them in the cascade), registered with ``corpus.topic_editing`` (a layer below)."""

from annotation.corpus.topic_editing import Counted, Dependent, register
from annotation.history.models import Change


def _changes(topic_id: int) -> int:
    return (
        Change.objects.filter(pyramid__topic=topic_id).count()
        + Change.objects.filter(annotation__pyramid__topic=topic_id).count()
    )


register(
    "history", Dependent(counts=(Counted("history", Change, _changes, "edit history entry", "edit history entries"),))
)
