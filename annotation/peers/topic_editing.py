"""What of the peer annotations rests on a topic's texts, registered with ``corpus.topic_editing``
(a layer below): a peer is fixed once an annotation of it exists (its matches point into the text
by character offsets). A delete of the topic removes its annotations with their matches, stored
scores and agreement, and bumps nothing on the way (``score_events.topics_deleted``).
"""

from collections import defaultdict

from annotation.corpus.topic_editing import Counted, Dependent, Resting, register
from annotation.corpus.wording import count_noun, verb
from annotation.peers import score_events
from annotation.peers.models import AnnotationScore, PeerAnnotation, PeerMatch, TopicAgreement


def _resting(topic, kind: str, summaries: dict) -> dict[int, Resting]:
    """The annotations of each peer (annotator and status): one query however many peers."""
    if kind != "peer":
        return {}
    annotations = defaultdict(list)
    for peer_id, annotator, status in (
        PeerAnnotation.objects.filter(peer__in=summaries)
        .order_by("annotator__username", "id")
        .values_list("peer_id", "annotator__username", "status")
    ):
        annotations[peer_id].append(f"{annotator or 'unknown'} ({PeerAnnotation.Status(status).label.lower()})")
    return {
        pk: Resting(
            locks=[
                f"{count_noun(len(found), 'peer annotation')} ({', '.join(found)}) "
                f"{verb(len(found), 'points', 'point')} into this text by character offsets."
            ],
            words=[count_noun(len(found), "annotation")],
        )
        for pk, found in annotations.items()
    }


register(
    "peers",
    Dependent(
        resting=_resting,
        counts=(
            Counted(
                "annotations",
                PeerAnnotation,
                lambda t: PeerAnnotation.objects.filter(pyramid__topic=t).count(),
                "peer annotation",
                "peer annotations",
                True,
            ),
            Counted(
                "matches",
                PeerMatch,
                lambda t: PeerMatch.objects.filter(annotation__pyramid__topic=t).count(),
                "peer match",
                "peer matches",
            ),
            Counted(
                "scores",
                AnnotationScore,
                lambda t: AnnotationScore.objects.filter(annotation__pyramid__topic=t).count(),
                "stored score",
                "stored scores",
            ),
            Counted(
                "agreement",
                TopicAgreement,
                lambda t: TopicAgreement.objects.filter(topic=t).count(),
                "stored agreement figure",
                "stored agreement figures",
            ),
        ),
        deleting=lambda topic: score_events.topics_deleted(),
    ),
)
