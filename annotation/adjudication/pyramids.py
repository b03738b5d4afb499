"""Adjudicating two pyramids of a topic into the topic's adjudicated pyramid.

The comparison pairs the SCUs of two annotators' pyramids of the same references with the
construction agreement's alignment (``pyramids.construction.stored_span_pyramids`` and
``scoring.pyramid_agreement``: contributors by character overlap, SCUs by shared contributors);
the decisions and the merge are pure functions (``pyramid_merge``). Saving writes (or rewrites)
the topic's adjudicated pyramid: an ordinary ``Pyramid`` without a creator, finished, built from
the same references, with a ``PyramidAdjudication`` record. Its SCUs are written through the
history app (``history.changes.pyramid_action``, action ``adjudicate``), as every pyramid edit.

What follows from it (``peers.results.counting``): scores of the topic rest on the adjudicated
pyramid, i.e. on the peer annotations made against it (``peers.assignments`` gives it to
annotators of peers from then on), and every score row says ``pyramid: adjudicated``. The
annotators' pyramids stay unchanged; construction agreement keeps comparing them and leaves the
adjudicated one out. One adjudicated pyramid per topic; adjudicating again (the same pair or
another) rewrites it, an SCU keeping its uid when it comes from the same item, and refusing to
remove an SCU that peer annotations are matched against.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction

from annotation.adjudication import pyramid_merge, reannotation
from annotation.adjudication.models import PyramidAdjudication
from annotation.corpus.models import Assignment, Topic
from annotation.history.changes import pyramid_action
from annotation.pyramids.construction import THRESHOLD, pyramid_name, stored_span_pyramids
from annotation.pyramids.document_states import apply_scu_states, scu_states
from annotation.pyramids.models import Pyramid
from scoring.pyramid_agreement import align_contributors, align_scus


class NotComparable(Exception):
    """These two pyramids cannot be adjudicated together (the message says why)."""


def adjudicated_pyramid_topics(dataset) -> list[str]:
    """The topics of ``dataset`` whose scores rest on their adjudicated pyramid, by id: what every
    score page and download states beside the rows' ``version``."""
    return list(
        PyramidAdjudication.objects.filter(topic__dataset=dataset)
        .order_by("topic__external_id")
        .values_list("topic__external_id", flat=True)
    )


def adjudicated_pyramid(topic: Topic) -> Pyramid | None:
    return (
        Pyramid.objects.filter(topic=topic, pyramid_adjudication__isnull=False)
        .select_related("pyramid_adjudication")
        .first()
    )


@dataclass
class PyramidComparison:
    a: Pyramid
    b: Pyramid
    items: list[pyramid_merge.Item]

    @property
    def disagreements(self) -> list[pyramid_merge.Item]:
        return [i for i in self.items if not i.agreed]

    @property
    def agreed(self) -> list[pyramid_merge.Item]:
        return [i for i in self.items if i.agreed]

    @property
    def token(self) -> str:
        """The revisions of both pyramids the page was drawn from: a save against other ones is refused."""
        return f"{self.a.pk}:{self.a.revision},{self.b.pk}:{self.b.revision}"

    @property
    def names(self) -> tuple[str, str]:
        return pyramid_name(self.a), pyramid_name(self.b)


def _check_pair(a: Pyramid, b: Pyramid) -> None:
    if a.pk == b.pk:
        raise NotComparable("A pyramid is compared with another one, not with itself.")
    if a.topic_id != b.topic_id:
        raise NotComparable("The two pyramids belong to different topics.")
    adjudicated = set(PyramidAdjudication.objects.filter(pyramid__in=[a, b]).values_list("pyramid_id", flat=True))
    if adjudicated:
        raise NotComparable(
            f"Pyramid {min(adjudicated)} is the adjudicated pyramid: adjudicate the annotators' pyramids."
        )
    if set(a.references.values_list("pk", flat=True)) != set(b.references.values_list("pk", flat=True)):
        raise NotComparable("The two pyramids are built from different references: they cannot be merged.")
    unfinished = [pyramid_name(p) for p in (a, b) if p.status != Pyramid.Status.DONE]
    if unfinished:
        raise NotComparable(f"Only finished pyramids are adjudicated; not finished yet: {', '.join(unfinished)}.")


def compare(a: Pyramid, b: Pyramid) -> PyramidComparison:
    """Every SCU of ``a`` and ``b`` in an item (``pyramid_merge.items``), aligned as construction
    agreement aligns them. Raises ``NotComparable`` for pyramids that cannot be merged."""
    _check_pair(a, b)
    spans, _ = stored_span_pyramids([a, b])
    contributors = align_contributors(spans[a.pk], spans[b.pk], THRESHOLD)
    scus = align_scus(spans[a.pk], spans[b.pk], contributors)
    sa = {int(uid): state for uid, state in scu_states(a, a.scus.values_list("uid", flat=True)).items()}
    sb = {int(uid): state for uid, state in scu_states(b, b.scus.values_list("uid", flat=True)).items()}
    reference_of = {
        (scu.uid, i): c.spans[0].reference for scu in spans[a.pk].scus for i, c in enumerate(scu.contributors)
    }
    # items() notes those across SCU pairs; sorted, so the notes do not follow the contributors' ids
    moved = sorted((x.a[0], x.b[0], reference_of[x.a]) for x in contributors.aligned)
    return PyramidComparison(a, b, pyramid_merge.items(sa, sb, [(m.a, m.b) for m in scus.matched], moved))


def adjudicate(a: Pyramid, b: Pyramid, user, decisions: dict[str, str], token: str) -> Pyramid:
    """Save the topic's adjudicated pyramid from ``a`` and ``b``: agreed SCUs as they are, each
    disagreement as decided (item key -> choice, ``pyramid_merge``). ``token`` is
    ``PyramidComparison.token`` of the page the decisions were made on: if either pyramid changed
    since, nothing is saved (ValidationError). Returns the adjudicated pyramid."""
    with transaction.atomic():
        Topic.objects.select_for_update().get(pk=a.topic_id)  # one adjudication of this topic at a time
        a, b = Pyramid.objects.get(pk=a.pk), Pyramid.objects.get(pk=b.pk)
        try:
            comparison = compare(a, b)
        except NotComparable as error:
            raise ValidationError(str(error)) from error
        if token != comparison.token:
            raise ValidationError(
                "One of the pyramids changed since the page was opened: review the disagreements again."
            )
        missing = pyramid_merge.undecided(comparison.items, decisions)
        if missing:
            raise ValidationError(
                f"Decide every disagreement first (still open: {', '.join(_name(i) for i in missing)})."
            )
        merged = pyramid_merge.merge(comparison.items, decisions)
        if not merged:
            raise ValidationError("Every SCU was dropped: an adjudicated pyramid needs at least one SCU.")
        existing = adjudicated_pyramid(a.topic)
        if existing is None:
            pyramid = Pyramid.objects.create(topic=a.topic, creator=None, status=Pyramid.Status.DONE)
            pyramid.references.set(a.references.all())
            previous = {}
        else:
            pyramid = existing
            if set(pyramid.references.values_list("pk", flat=True)) != set(a.references.values_list("pk", flat=True)):
                pyramid.references.set(a.references.all())
            previous = existing.pyramid_adjudication.uids
        pyramid.source = _bounded_source(f"Adjudicated by {user.username} from {' and '.join(comparison.names)}")
        pyramid.status = Pyramid.Status.DONE
        pyramid.save(update_fields=["source", "status", "updated_at"])
        chosen = {i.key: decisions[i.key] for i in comparison.disagreements}
        plan: dict = {}

        def uids(p):  # under the pyramid's lock: the uids every SCU gets, and those that go
            new, last = pyramid_merge.assign_uids([key for key, _ in merged], previous, p.last_uid)
            Pyramid.objects.filter(pk=p.pk).update(last_uid=last)
            p.last_uid = last
            current = set(p.scus.values_list("uid", flat=True))
            plan["states"] = {str(uid): None for uid in current - set(new)} | {
                str(uid): state for uid, (_, state) in zip(new, merged, strict=True)
            }
            plan["uids"] = {key: uid for uid, (key, _) in zip(new, merged, strict=True)}
            return current | set(new)

        pyramid_action(
            pyramid.pk,
            user,
            action="adjudicate",
            uids=uids,
            mutate=lambda p: apply_scu_states(p, plan["states"]),
            summary=lambda _: f"Adjudicated from {' and '.join(comparison.names)}: {len(merged)} SCUs",
        )
        record, _ = PyramidAdjudication.objects.update_or_create(
            topic=a.topic,
            defaults={
                "pyramid": pyramid,
                "adjudicator": user,
                "decisions": chosen,
                "uids": plan["uids"],
                "source_revisions": {str(p.pk): p.revision for p in (a, b)},
                "source_order": [a.pk, b.pk],
            },
        )
        record.sources.set([a, b])
        reannotation.sync_status(Assignment.objects.filter(topic_id=a.topic_id))  # their finished peers are to redo
        return pyramid


def _name(item: pyramid_merge.Item) -> str:
    if item.kind == pyramid_merge.ONLY_B:
        return f"B's SCU {item.uid_b}"
    return f"SCU {item.uid_a}" + (f"/{item.uid_b}" if item.uid_b is not None else "")


def _bounded_source(text: str) -> str:
    return text[: Pyramid._meta.get_field("source").max_length]
