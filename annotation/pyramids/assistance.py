"""The assisted builder's service (issue 30 §2): a stored pyramid read into the proposals' pure
interface (``proposals``: texts by reference name, SCUs as drafts), and the proposals answered in
the database's terms (reference ids), for the builder and the API.

A dataset's coordinators may turn assistance off (``Dataset.assisted_building``: unassisted
building for agreement studies): then nothing is proposed and accepting is refused
(``AssistanceOff``), so an unassisted pyramid never holds an accepted proposal.

The blind rule holds: only the pyramid's own SCUs and its references are read, never another
annotator's pyramid of the topic.
"""

from django.core.exceptions import PermissionDenied
from django.db.models import F

from annotation.pyramids import proposals
from annotation.pyramids.models import SCU, ContributorPart, Pyramid

OFF = "Assistance is off for this dataset (its coordinators build it unassisted): nothing is proposed."


class AssistanceOff(PermissionDenied):
    """The pyramid's dataset builds without proposals."""


def is_assisted(pyramid: Pyramid) -> bool:
    return pyramid.topic.dataset.assisted_building


def require_assistance(pyramid: Pyramid) -> None:
    if not is_assisted(pyramid):
        raise AssistanceOff(OFF)


def _texts(pyramid: Pyramid) -> tuple[tuple[proposals.ReferenceText, ...], dict[str, int]]:
    """The references as the proposals read them (keyed by name), and name -> id."""
    references = list(pyramid.references.order_by("external_id").values_list("id", "external_id", "text"))
    return tuple(proposals.ReferenceText(name, text) for _, name, text in references), {
        name: pk for pk, name, _ in references
    }


def _drafts(pyramid: Pyramid) -> dict[int, proposals.DraftSCU]:
    """SCU id -> its draft: label, and contributors with the parts in their own reference (the
    legacy parts in another one left out), in reference-name order."""
    scus = {pk: [label, {}] for pk, label in pyramid.scus.order_by("uid").values_list("id", "label")}
    rows = (
        ContributorPart.objects.filter(contributor__scu__pyramid=pyramid, reference=F("contributor__reference"))
        .order_by("contributor__reference__external_id", "contributor_id", "start")
        .values_list("contributor__scu_id", "contributor_id", "reference__external_id", "start", "end")
    )
    for scu, contributor, reference, start, end in rows:
        scus[scu][1].setdefault(contributor, (reference, []))[1].append((start, end))
    return {
        pk: proposals.DraftSCU(
            label,
            tuple(proposals.DraftContributor(ref, tuple(parts)) for ref, parts in contributors.values()),
        )
        for pk, (label, contributors) in scus.items()
    }


def _parts(parts) -> list[dict]:
    return [{"start": start, "end": end} for start, end in parts]


def contributor_proposals(scu: SCU) -> list[dict]:
    """The likely contributors of ``scu`` in the pyramid's other references, best first:
    ``{reference, parts, confidence, why, text}`` (``text``: the parts' words joined with "...")."""
    pyramid = scu.pyramid
    require_assistance(pyramid)
    texts, ids = _texts(pyramid)
    drafts = _drafts(pyramid)
    found = proposals.contributor_proposals(
        texts, drafts[scu.pk], list(drafts.values()), proposals.load_model(), topic=proposals.read_topic(texts)
    )
    text_of = {t.key: t.text for t in texts}
    return [
        {
            "reference": ids[p.reference],
            "parts": _parts(p.parts),
            "confidence": p.confidence,
            "why": p.why,
            "text": "...".join(text_of[p.reference][s:e] for s, e in p.parts),
        }
        for p in found
        if p.reference in ids
    ]


def scu_proposals(pyramid: Pyramid) -> list[dict]:
    """New SCUs for the text no contributor covers yet, best first: ``{label, confidence,
    contributors: [{reference, parts, text}]}``."""
    require_assistance(pyramid)
    texts, ids = _texts(pyramid)
    text_of = {t.key: t.text for t in texts}
    found = proposals.scu_proposals(
        texts, list(_drafts(pyramid).values()), proposals.load_model(), topic=proposals.read_topic(texts)
    )
    return [
        {
            "label": p.label,
            "confidence": p.confidence,
            "contributors": [
                {
                    "reference": ids[c.reference],
                    "parts": _parts(c.parts),
                    "text": "...".join(text_of[c.reference][s:e] for s, e in c.parts),
                }
                for c in p.contributors
            ],
        }
        for p in found
        if all(c.reference in ids for c in p.contributors)
    ]
