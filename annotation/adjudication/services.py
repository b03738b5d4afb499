"""Compare the annotators' versions of one peer, and save a coordinator's decisions as the
adjudicated version.

Modelled on INCEpTION's curation mode: what every annotator marked identically is taken as it is;
each disagreement is shown side by side and decided by the coordinator; the result is a new
document and the annotators' own documents stay untouched (they still count for agreement).

The unit of comparison is one SCU of the pyramid (plus one item for the non-matching content
units): an annotator's matches of that SCU, each with its evidence spans. Two annotators agree on
an SCU when they have the same matches (same number, same spans). A decision takes one
annotator's matches, both (every distinct match of either, a match with the same spans in several
versions once), or neither.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction

from annotation.adjudication.models import Adjudication
from annotation.corpus.models import PeerSummary
from annotation.history.changes import annotation_action
from annotation.peers.editing import add_match
from annotation.peers.models import PeerAnnotation, PeerMatchPart
from annotation.peers.results import counted
from annotation.pyramids.models import SCU, Pyramid
from annotation.pyramids.scoring_inputs import load_pyramids
from scoring.model import Convention

NON_MATCHING = "non_matching"
BOTH, NEITHER = "both", "neither"

Spans = tuple[tuple[int, int], ...]


class NotShared(Exception):
    """Fewer than two annotators finished this peer with this pyramid: nothing to adjudicate."""


@dataclass(frozen=True)
class Source:
    """One annotator's version (an annotation that counts, ``results.counted``)."""

    pk: int
    annotator: str
    revision: int


@dataclass
class Item:
    """One SCU (``uid``) or the non-matching units (``uid`` None): each source's matches as span tuples."""

    key: str
    uid: int | None
    label: str
    weight: int | None
    matches: list[list[Spans]]  # per source, in the order of ``Comparison.sources``

    @property
    def kind(self) -> str:
        """``agreed``, ``one_only`` (found by some annotators only), ``count`` (different numbers of
        matches) or ``spans`` (as many matches, different evidence)."""
        found = [m for m in self.matches if m]
        if all(sorted(m) == sorted(self.matches[0]) for m in self.matches):
            return "agreed"
        if len(found) < len(self.matches):
            return "one_only"
        if len({len(m) for m in self.matches}) > 1:
            return "count"
        return "spans"

    @property
    def disagreement(self) -> bool:
        return self.kind != "agreed"

    def chosen(self, choice: str, sources: list[Source]) -> list[Spans]:
        """The matches a decision keeps."""
        if choice == NEITHER:
            return []
        if choice == BOTH:
            distinct = []
            for matches in self.matches:
                for spans in matches:
                    if spans not in distinct:
                        distinct.append(spans)
            return distinct
        return self.matches[[str(s.pk) for s in sources].index(choice)]


@dataclass
class Comparison:
    peer: PeerSummary
    pyramid: Pyramid
    sources: list[Source]
    items: list[Item]

    @property
    def disagreements(self) -> list[Item]:
        return [i for i in self.items if i.disagreement]

    @property
    def token(self) -> str:
        """The sources' revisions the page was drawn from: a save against other ones is refused."""
        return ",".join(f"{s.pk}:{s.revision}" for s in self.sources)

    def choices(self) -> list[str]:
        return [str(s.pk) for s in self.sources] + [BOTH, NEITHER]


def _sources(peer: PeerSummary, pyramid: Pyramid) -> list[Source]:
    annotations = (
        counted(PeerAnnotation.objects.filter(peer=peer, pyramid=pyramid, annotator__isnull=False))
        .select_related("annotator")
        .order_by("annotator__username")
    )
    sources = [Source(a.pk, a.annotator.username, a.revision) for a in annotations]
    if len(sources) < 2:
        raise NotShared(
            f"Peer {peer.external_id} has fewer than two finished annotations against pyramid {pyramid.pk}."
        )
    return sources


def _matches(annotation_ids: list[int]) -> dict[int, dict[int | None, list[Spans]]]:
    """annotation id -> SCU uid (None: non-matching) -> its matches' span tuples (two queries' worth)."""
    parts: dict[int, list[tuple[int, int]]] = defaultdict(list)
    owner: dict[int, tuple[int, int | None]] = {}
    for match_id, annotation_id, uid, start, end in (
        PeerMatchPart.objects.filter(match__annotation_id__in=annotation_ids)
        .order_by("match_id", "start", "end")
        .values_list("match_id", "match__annotation_id", "match__scu__uid", "start", "end")
    ):
        parts[match_id].append((start, end))
        owner[match_id] = (annotation_id, uid)
    out: dict[int, dict[int | None, list[Spans]]] = {pk: defaultdict(list) for pk in annotation_ids}
    for match_id in sorted(parts):
        annotation_id, uid = owner[match_id]
        out[annotation_id][uid].append(tuple(parts[match_id]))
    return out


def compare(peer: PeerSummary, pyramid: Pyramid, convention: Convention = Convention.NIST) -> Comparison:
    """Every SCU at least one annotator found in the peer, and the non-matching units, per annotator;
    ordered by weight (heaviest first), then uid. Raises ``NotShared`` below two annotators."""
    sources = _sources(peer, pyramid)
    matches = _matches([s.pk for s in sources])
    scoring = load_pyramids([pyramid.pk])[pyramid.pk]
    weights = {s.uid: scoring.weight(s, convention) for s in scoring.scus}
    labels = dict(SCU.objects.filter(pyramid=pyramid).values_list("uid", "label"))
    found = sorted(
        {uid for m in matches.values() for uid in m if uid is not None}, key=lambda u: (-weights.get(u, 0), u)
    )
    items = [
        Item(
            str(uid), uid, labels.get(uid, ""), weights.get(uid), [sorted(matches[s.pk].get(uid, [])) for s in sources]
        )
        for uid in found
    ]
    items.append(
        Item(
            NON_MATCHING,
            None,
            "Non-matching content units",
            None,
            [sorted(matches[s.pk].get(None, [])) for s in sources],
        )
    )
    return Comparison(peer, pyramid, sources, items)


def adjudicated_version(peer: PeerSummary, pyramid: Pyramid) -> PeerAnnotation | None:
    return (
        PeerAnnotation.objects.filter(peer=peer, pyramid=pyramid, adjudication__isnull=False)
        .select_related("adjudication")
        .first()
    )


def adjudicate(peer: PeerSummary, pyramid: Pyramid, user, decisions: dict[str, str], token: str) -> PeerAnnotation:
    """Save the adjudicated version of ``peer`` against ``pyramid``: what every annotator agreed on,
    and for each disagreement the ``decisions`` (item key -> source annotation id, ``both`` or
    ``neither``). A second adjudication replaces the first one's matches (one adjudicated version per
    peer and pyramid). ``token`` is ``Comparison.token`` of the page the decisions were made on:
    if an annotator changed their version since, nothing is saved (ValidationError)."""
    with transaction.atomic():
        PeerSummary.objects.select_for_update().get(pk=peer.pk)  # one adjudication of this peer at a time
        comparison = compare(peer, pyramid)
        if token != comparison.token:
            raise ValidationError(
                "An annotator changed their annotation of this peer since the page was opened: review it again."
            )
        allowed = comparison.choices()
        undecided = [i.label or i.key for i in comparison.disagreements if decisions.get(i.key) not in allowed]
        if undecided:
            raise ValidationError(f"Decide every disagreement first (still open: {', '.join(undecided)}).")
        chosen = {
            i.key: (decisions[i.key] if i.disagreement else str(comparison.sources[0].pk)) for i in comparison.items
        }
        scus = {s.uid: s for s in SCU.objects.filter(pyramid=pyramid)}
        existing = adjudicated_version(peer, pyramid)
        version = existing or PeerAnnotation.objects.create(
            peer=peer, pyramid=pyramid, annotator=None, status=PeerAnnotation.Status.DONE
        )
        source = f"Adjudicated by {user.username} from {', '.join(s.annotator for s in comparison.sources)}"
        version.source = source[: PeerAnnotation._meta.get_field("source").max_length]
        version.status = PeerAnnotation.Status.DONE
        version.save(update_fields=["source", "status", "updated_at"])

        def replace_matches(annotation):
            annotation.matches.all().delete()
            for item in comparison.items:
                for spans in item.chosen(chosen[item.key], comparison.sources):
                    add_match(annotation, scus[item.uid] if item.uid is not None else None, spans)

        annotation_action(
            version.pk,
            user,
            action="adjudicate",
            mutate=replace_matches,
            summary=lambda _: f"Adjudicated from {len(comparison.sources)} annotators' versions",
        )
        record, _ = Adjudication.objects.update_or_create(
            annotation=version,
            defaults={
                "adjudicator": user,
                "decisions": {i.key: chosen[i.key] for i in comparison.disagreements},
                "source_revisions": {str(s.pk): s.revision for s in comparison.sources},
            },
        )
        record.sources.set([s.pk for s in comparison.sources])
        return version
