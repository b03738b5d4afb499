"""A small demo dataset (original text) so a fresh install has something to browse and score.

One topic, four references, a pyramid of nine SCUs (one contributor discontinuous), and two peers,
each annotated by two annotators (so agreement figures exist), with a repetition and a
non-matching unit. Loading is idempotent: an existing demo dataset is left as it is. It lives with
the peer annotations, the highest concept it writes (the corpus, pyramids and peers below it).
"""

from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import transaction

from annotation.corpus.models import Assignment, Dataset, PeerSummary, ReferenceSummary, Topic
from annotation.corpus.roles import ANNOTATOR, COORDINATOR, role_group
from annotation.peers.models import PeerAnnotation, PeerMatch, PeerMatchPart
from annotation.pyramids.models import SCU, Contributor, ContributorPart, Pyramid

DATASET = "Demo"

REFERENCES = {
    "A": "The Kestrel Harbour Bridge reopened on Monday after eighteen months of repairs. Engineers replaced the "
    "corroded steel cables and widened the footpath. The work cost 42 million euros, twice the first estimate. "
    "Cyclists now have a separate lane.",
    "B": "After a year and a half of closure, the Kestrel Harbour Bridge is open again. The repair bill reached 42 "
    "million euros, double what the council had planned. New cables replace the old ones, which had rusted. "
    "Ferry operators, who carried commuters during the closure, expect fewer passengers.",
    "C": "Kestrel's harbour bridge opened to traffic again this week. Rusted cables were the reason for the long "
    "closure. A dedicated cycle lane was added. Local shops near the bridge say business suffered during the works.",
    "D": "The city council celebrated the reopening of the harbour bridge on Monday. The repairs took eighteen months "
    "and went far over budget. The mayor promised yearly inspections so the cables never rust this badly again.",
}

# uid -> (label, {reference: [phrase, ...]}); several phrases = a discontinuous contributor.
SCUS = {
    1: (
        "The harbour bridge has reopened",
        {
            "A": ["The Kestrel Harbour Bridge reopened on Monday"],
            "B": ["the Kestrel Harbour Bridge is open again"],
            "C": ["Kestrel's harbour bridge opened to traffic again"],
            "D": ["reopening of the harbour bridge"],
        },
    ),
    2: (
        "The repairs took eighteen months",
        {
            "A": ["after eighteen months of repairs"],
            "B": ["After a year and a half of closure"],
            "D": ["The repairs took eighteen months"],
        },
    ),
    3: (
        "The rusted cables were replaced",
        {
            "A": ["Engineers replaced the corroded steel cables"],
            "B": ["New cables replace the old ones, which had rusted"],
            "C": ["Rusted cables were the reason for the long closure"],
        },
    ),
    4: (
        "The repairs cost far more than planned",
        {
            "A": ["The work cost 42 million euros, twice the first estimate"],
            "B": ["The repair bill reached 42 million euros, double what the council had planned"],
            "D": ["The repairs", "went far over budget"],
        },
    ),
    5: (
        "There is a new cycle lane",
        {"A": ["Cyclists now have a separate lane"], "C": ["A dedicated cycle lane was added"]},
    ),
    6: ("The footpath was widened", {"A": ["widened the footpath"]}),
    7: (
        "Ferry operators expect fewer passengers",
        {"B": ["Ferry operators, who carried commuters during the closure, expect fewer passengers"]},
    ),
    8: (
        "Local shops lost business during the works",
        {"C": ["Local shops near the bridge say business suffered during the works"]},
    ),
    9: ("The mayor promised yearly inspections", {"D": ["The mayor promised yearly inspections"]}),
}

PEERS = {
    "1": "The harbour bridge in Kestrel is open again after eighteen months. Its rusted cables were replaced and the "
    "repairs cost 42 million euros. The bridge now has a cycle lane. Traffic was heavy on the first day, and the "
    "bridge is open again to cars.",
    "2": "Kestrel council reopened the bridge. It had been closed because of rust. Shops lost customers during the "
    "works. The weather was sunny.",
}

# annotator -> peer -> [(uid or None for non-matching, phrase)]
ANNOTATIONS = {
    "alice": {
        "1": [
            (1, "The harbour bridge in Kestrel is open again"),
            (2, "after eighteen months"),
            (3, "Its rusted cables were replaced"),
            (4, "the repairs cost 42 million euros"),
            (5, "The bridge now has a cycle lane"),
            (None, "Traffic was heavy on the first day"),
            (1, "the bridge is open again to cars"),
        ],
        "2": [
            (1, "Kestrel council reopened the bridge"),
            (3, "It had been closed because of rust"),
            (8, "Shops lost customers during the works"),
            (None, "The weather was sunny"),
        ],
    },
    "bob": {
        "1": [
            (1, "The harbour bridge in Kestrel is open again"),
            (2, "after eighteen months"),
            (3, "Its rusted cables were replaced"),
            (5, "The bridge now has a cycle lane"),
            (None, "Traffic was heavy on the first day"),
        ],
        "2": [
            (1, "Kestrel council reopened the bridge"),
            (8, "Shops lost customers during the works"),
            (None, "The weather was sunny"),
        ],
    },
}

USERS = [
    # username, password, group, staff, superuser
    ("admin", "demo-admin", None, True, True),
    ("coordinator", "demo-coordinator", COORDINATOR, True, False),
    ("alice", "demo-alice", ANNOTATOR, False, False),
    ("bob", "demo-bob", ANNOTATOR, False, False),
]


@dataclass
class DemoResult:
    created: bool
    users: list[tuple[str, str]]


def _span(text: str, phrase: str, after: int = 0) -> tuple[int, int]:
    start = text.index(phrase, after)
    return start, start + len(phrase)


def _users() -> dict[str, User]:
    users = {}
    for username, password, group, staff, superuser in USERS:
        user, created = User.objects.get_or_create(
            username=username, defaults={"is_staff": staff, "is_superuser": superuser}
        )
        if created:
            user.set_password(password)
            user.save()
        if group:
            user.groups.add(role_group(group))
        users[username] = user
    return users


@transaction.atomic
def load_demo() -> DemoResult:
    users = _users()
    credentials = [(u, p) for u, p, *_ in USERS]
    if Dataset.objects.filter(name=DATASET).exists():
        return DemoResult(created=False, users=credentials)
    dataset = Dataset.objects.create(name=DATASET, description="A made-up topic to try the tools on.")
    dataset.coordinators.add(users["coordinator"])
    topic = Topic.objects.create(
        dataset=dataset,
        external_id="T01",
        title="The Kestrel Harbour Bridge reopens",
        narrative="Summarise the reopening of the bridge: why it closed, what was done, what it cost.",
    )
    references = {
        rid: ReferenceSummary.objects.create(topic=topic, external_id=rid, text=text)
        for rid, text in REFERENCES.items()
    }
    pyramid = Pyramid.objects.create(topic=topic, creator=users["alice"], status=Pyramid.Status.DONE, source="demo")
    pyramid.references.set(references.values())
    scus = {}
    for uid, (label, contributors) in SCUS.items():
        scus[uid] = scu = SCU.objects.create(pyramid=pyramid, uid=uid, label=label)
        for rid, phrases in contributors.items():
            contributor = Contributor.objects.create(scu=scu, reference=references[rid])
            for phrase in phrases:
                start, end = _span(REFERENCES[rid], phrase)
                ContributorPart.objects.create(contributor=contributor, reference=references[rid], start=start, end=end)
    peers = {
        pid: PeerSummary.objects.create(topic=topic, external_id=pid, system_id=f"system-{pid}", text=text)
        for pid, text in PEERS.items()
    }
    for username, by_peer in ANNOTATIONS.items():
        for pid, matches in by_peer.items():
            annotation = PeerAnnotation.objects.create(
                peer=peers[pid], pyramid=pyramid, annotator=users[username], status=PeerAnnotation.Status.DONE
            )
            for uid, phrase in matches:
                match = PeerMatch.objects.create(annotation=annotation, scu=scus[uid] if uid else None)
                start, end = _span(PEERS[pid], phrase)
                PeerMatchPart.objects.create(match=match, start=start, end=end)
        Assignment.objects.create(
            topic=topic,
            annotator=users[username],
            task=Assignment.Task.ANNOTATE_PEERS,
            status=Assignment.Status.DONE,
            created_by=users["coordinator"],
        )
    Assignment.objects.create(
        topic=topic,
        annotator=users["alice"],
        task=Assignment.Task.BUILD_PYRAMID,
        status=Assignment.Status.DONE,
        created_by=users["coordinator"],
    )
    return DemoResult(created=True, users=credentials)
