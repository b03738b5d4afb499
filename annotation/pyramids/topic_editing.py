"""What of the pyramids rests on a topic's texts, registered with ``corpus.topic_editing`` (a layer
below): a reference is fixed once a contributor points into it or a pyramid listing it has SCUs
(they were read against it); a pyramid listing it without SCUs yet rests on nothing in it, and
removing the reference first takes it out of that pyramid. Pyramid actions lock their pyramid, so
these are locked too while a text is checked and changed, or its topic deleted.
"""

from collections import defaultdict

from django.db.models import Count

from annotation.corpus.topic_editing import Counted, Dependent, Resting, register
from annotation.corpus.wording import count_noun, verb
from annotation.pyramids.models import SCU, Contributor, ContributorPart, Pyramid


def _names(pyramids: list[dict]) -> str:
    """ "Pyramid 3 by alice" or "Pyramids 3 by alice, 5 by bob"."""
    names = [f"{p['id']}" + (f" by {p['creator']}" if p["creator"] else "") for p in pyramids]
    return ("Pyramid " if len(names) == 1 else "Pyramids ") + ", ".join(names)


def _resting(topic, kind: str, summaries: dict) -> dict[int, Resting]:
    """The pyramids listing each reference (id, creator, contributors) and the contributors with a
    part in its text: four queries however many references."""
    if kind != "reference":
        return {}
    pyramids = {
        p.pk: {"id": p.pk, "creator": p.creator.username if p.creator_id else "", "contributors": p.n}
        for p in Pyramid.objects.filter(topic=topic).select_related("creator").annotate(n=Count("scus__contributors"))
    }
    listing = defaultdict(list)
    for reference_id, pyramid_id in (
        Pyramid.references.through.objects.filter(referencesummary__in=summaries)
        .order_by("pyramid_id")
        .values_list("referencesummary_id", "pyramid_id")
    ):
        if pyramid_id in pyramids:
            listing[reference_id].append(pyramids[pyramid_id])
    # Contributors whose parts lie in the text (a legacy contributor may have parts in another reference).
    pointing = defaultdict(set)
    for contributor_id, reference_id in Contributor.objects.filter(reference__in=summaries).values_list(
        "id", "reference_id"
    ):
        pointing[reference_id].add(contributor_id)
    for contributor_id, reference_id in ContributorPart.objects.filter(reference__in=summaries).values_list(
        "contributor_id", "reference_id"
    ):
        pointing[reference_id].add(contributor_id)
    return {
        pk: _rests(listing.get(pk, []), len(pointing.get(pk, ())))
        for pk in summaries
        if pk in listing or pk in pointing
    }


def _rests(listing: list[dict], contributors: int) -> Resting:
    """What the pyramids rest on one reference: ``listing``, the pyramids listing it;
    ``contributors``, how many point into its text."""
    part = Resting()
    if contributors:
        part.locks.append(
            f"{count_noun(contributors, 'pyramid contributor')} {verb(contributors, 'points', 'point')} "
            "into this text by character offsets."
        )
    built = [p for p in listing if p["contributors"]]
    if built:
        part.locks.append(
            f"{_names(built)} {verb(len(built), 'was', 'were')} built from it: the SCUs were read against this text."
        )
    if listing:
        note = (
            f"{count_noun(contributors, 'contributor')} here" if contributors else ("no SCUs yet" if not built else "")
        )
        part.words.append(_names(listing) + (f" ({note})" if note else ""))
    empty = [p for p in listing if not p["contributors"]]
    if empty:
        listed = ", ".join(f"pyramid {p['id']}" + (f" by {p['creator']}" if p["creator"] else "") for p in empty)
        part.notes.append(
            f"Listed by {listed}, which has no SCUs yet: saving marks its scores for recomputation; "
            "removing the reference takes it out of the pyramid."
        )
    return part


def _lock(topic, kind: str | None, summary_id: int | None) -> None:
    """Lock the pyramids listing the reference (all the topic's with ``kind`` None)."""
    if kind == "peer":
        return
    pyramids = Pyramid.objects.select_for_update()
    pyramids = pyramids.filter(topic=topic) if kind is None else pyramids.filter(references=summary_id)
    list(pyramids.order_by("pk").values_list("pk", flat=True))


def _removing(kind: str, summary) -> None:
    """Take the reference out of the pyramids listing it, through the m2m relation (its signal marks
    their scores stale; a cascade would drop the link without it)."""
    if kind == "reference":
        for pyramid in Pyramid.objects.filter(references=summary):
            pyramid.references.remove(summary)


register(
    "pyramids",
    Dependent(
        resting=_resting,
        counts=(
            Counted(
                "pyramids", Pyramid, lambda t: Pyramid.objects.filter(topic=t).count(), "pyramid", "pyramids", True
            ),
            Counted("scus", SCU, lambda t: SCU.objects.filter(pyramid__topic=t).count(), "SCU", "SCUs", True),
            Counted(
                "contributors",
                Contributor,
                lambda t: Contributor.objects.filter(scu__pyramid__topic=t).count(),
                "SCU contributor",
                "SCU contributors",
            ),
        ),
        lock=_lock,
        removing=_removing,
    ),
)
