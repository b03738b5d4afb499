"""Changing a topic after it was added: renaming it, correcting, adding or removing its summaries,
deleting it with everything in it (the set-up pages' topic page calls these; views stay thin).

What may change, and why:

- **A summary's text is fixed once something rests on it.** Pyramid contributors and peer matches
  point into a text by character offsets: a changed text would silently move them onto other
  words. The same holds, less mechanically, for what was judged on the text as it was: a pyramid
  built from a reference (its SCUs were read against it, even where this reference contributes
  none), imported judgments of the summary (content responsiveness...) and crowd statements or
  judging tasks of a lightweight pyramid. ``locks`` lists each of these as a sentence for the
  coordinator; a text with none may be corrected, and a summary with none removed. A pyramid that
  lists a reference but has no SCUs yet rests on nothing in its text: it does not lock it, and
  removing the reference first takes it out of that pyramid.
- **Topic ids stay unique within the dataset** (the database says so too) and usable in page
  addresses (no ``/``: the dashboards name topics and peers in their paths).
- **A delete says what it removes** (``contents``), and removes exactly that: the coordinator
  confirms the counts they were shown (``TopicContents.token``); if the topic changed meanwhile the
  delete is refused with the new counts rather than removing more than was shown.

Score freshness: every write goes through the models, so ``annotation.peers.score_events`` sees it: an
edited reference bumps the pyramids that list it, a reference taken out of a pyramid bumps that
pyramid (the m2m signal), a renamed topic bumps its topic (its stored agreement rows name it),
and the dashboards' fingerprint (``dashboard_snapshots``) notices ids and topics that changed or
went. Adding a summary, or correcting one nothing rests on, changes no score. A deleted topic's
stored scores and agreement go with it in the cascade (``score_events.topics_deleted`` spares
the per-row bumps of what is being deleted anyway); lightweight runs that had statements or tasks
in it are touched so their scores are recomputed without it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import astuple, dataclass, field, fields

from django.db import IntegrityError, transaction
from django.db.models import Count

from annotation.corpus.models import Assignment, PeerSummary, ReferenceSummary, Topic
from annotation.corpus.natural_order import natural_key
from annotation.corpus.wording import count_noun
from annotation.dashboards import snapshots
from annotation.dashboards.models import Judgment
from annotation.formats.nist_names import peer_key
from annotation.formats.summary_texts import MAX_ID, normalise
from annotation.history.models import Change
from annotation.lightweight import runs as lightweight_runs
from annotation.lightweight.models import LightweightPyramid, LiteAssignment, LiteStatement, LiteTask, LiteWriting
from annotation.peers import score_events
from annotation.peers.models import AnnotationScore, PeerAnnotation, PeerMatch, TopicAgreement
from annotation.pyramids.models import SCU, Contributor, ContributorPart, Pyramid

KINDS = {"reference": ReferenceSummary, "peer": PeerSummary}


class EditRefused(ValueError):
    """The change cannot be made as asked; the message says why, ``field`` which input to change."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


class ChangedMeanwhile(EditRefused):
    """The topic no longer holds what the coordinator was shown; ``contents`` is what it holds now."""

    def __init__(self, contents: TopicContents):
        super().__init__(
            "The topic changed since you opened this page: check what a delete removes now, then confirm again."
        )
        self.contents = contents


# --- ids --------------------------------------------------------------------------------------


def clean_id(value: str, what: str) -> str:
    """The id without surrounding spaces, or EditRefused: empty, longer than the column, or with a
    ``/`` (ids name topics and peers in the dashboards' addresses)."""
    value = (value or "").strip()
    if not value:
        raise EditRefused(f"Give the {what} an id.")
    if len(value) > MAX_ID:
        raise EditRefused(f"A {what} id has at most {MAX_ID} characters.")
    if "/" in value:
        raise EditRefused(f"A {what} id cannot contain “/” (ids name {what}s in page addresses).")
    return value


def clean_text(value: str) -> str:
    """The text as the imports store it (one line-end convention); EditRefused if empty."""
    text = normalise(value or "")
    if not text.strip():
        raise EditRefused("A summary needs a text.", "text")
    return text


# --- what rests on a summary --------------------------------------------------------------------


@dataclass
class SummaryRow:
    """A summary of the topic with what rests on it (the topic page's row, the edit page's state)."""

    kind: str
    summary: ReferenceSummary | PeerSummary
    pyramids: list[dict] = field(
        default_factory=list
    )  # references: the pyramids listing it (id, creator, contributors)
    contributors: int = 0  # references: contributors with a part in its text
    annotations: list[dict] = field(default_factory=list)  # peers: annotator and status of each annotation
    judgments: list[str] = field(default_factory=list)  # metrics of imported judgments of it
    crowd: int = 0  # crowd statements/writings from it (references) or judging tasks of it (peers)

    @property
    def words(self) -> int:
        return len(self.summary.text.split())

    @property
    def characters(self) -> int:
        return len(self.summary.text)

    @property
    def locks(self) -> list[str]:
        """Why its text may not change nor it be removed, one sentence each (empty: it may)."""
        reasons = []
        if self.contributors:
            reasons.append(
                f"{count_noun(self.contributors, 'pyramid contributor')} {_verb(self.contributors, 'points', 'point')} "
                "into this text by character offsets."
            )
        built = [p for p in self.pyramids if p["contributors"]]
        if built:
            reasons.append(
                f"{_pyramid_names(built)} {_verb(len(built), 'was', 'were')} built from it: "
                "the SCUs were read against this text."
            )
        if self.annotations:
            who = ", ".join(f"{a['annotator']} ({a['status']})" for a in self.annotations)
            reasons.append(
                f"{count_noun(len(self.annotations), 'peer annotation')} ({who}) "
                f"{_verb(len(self.annotations), 'points', 'point')} "
                "into this text by character offsets."
            )
        if self.judgments:
            reasons.append(
                f"{count_noun(len(self.judgments), 'imported judgment')} ({', '.join(self.judgments)}) "
                f"{_verb(len(self.judgments), 'was', 'were')} made on this text."
            )
        if self.crowd:
            what = "crowd statement" if self.kind == "reference" else "crowd judging task"
            reasons.append(
                f"{count_noun(self.crowd, what)} of a lightweight pyramid "
                f"{_verb(self.crowd, 'rests', 'rest')} on this text."
            )
        return reasons

    @property
    def editable(self) -> bool:
        return not self.locks

    @property
    def empty_pyramids(self) -> list[dict]:
        """Pyramids listing this reference without any SCU yet (they do not lock it)."""
        return [p for p in self.pyramids if not p["contributors"]]

    @property
    def rests_on(self) -> str:
        """What rests on it, in a few words for the table."""
        parts = []
        if self.kind == "reference":
            if self.pyramids:
                note = (
                    f"{count_noun(self.contributors, 'contributor')} here"
                    if self.contributors
                    else ("no SCUs yet" if not any(p["contributors"] for p in self.pyramids) else "")
                )
                parts.append(_pyramid_names(self.pyramids) + (f" ({note})" if note else ""))
        elif self.annotations:
            parts.append(count_noun(len(self.annotations), "annotation"))
        if self.judgments:
            parts.append(count_noun(len(self.judgments), "judgment"))
        if self.crowd:
            parts.append(count_noun(self.crowd, "crowd statement" if self.kind == "reference" else "crowd task"))
        return ", ".join(parts)


def _verb(count: int, one: str, many: str) -> str:
    return one if count == 1 else many


def _pyramid_names(pyramids: list[dict]) -> str:
    """ "Pyramid 3 by alice" or "Pyramids 3 by alice, 5 by bob"."""
    names = [f"{p['id']}" + (f" by {p['creator']}" if p["creator"] else "") for p in pyramids]
    return ("Pyramid " if len(names) == 1 else "Pyramids ") + ", ".join(names)


def summary_rows(topic: Topic, kind: str, only: int | None = None) -> list[SummaryRow]:
    """The topic's summaries of ``kind`` (or only the one with pk ``only``) in natural id order,
    each with what rests on it: a fixed number of queries however many there are."""
    model = KINDS[kind]
    summaries = model.objects.filter(topic=topic)
    if only is not None:
        summaries = summaries.filter(pk=only)
    rows = {s.pk: SummaryRow(kind, s) for s in summaries}
    if not rows:
        return []
    by_id = {row.summary.external_id: row for row in rows.values()}
    for summary_id, metric in (
        Judgment.objects.filter(topic=topic, summary__in=list(by_id))
        .order_by("metric")
        .values_list("summary", "metric")
    ):
        by_id[summary_id].judgments.append(metric)
    if kind == "reference":
        pyramids = {
            p.pk: {"id": p.pk, "creator": p.creator.username if p.creator_id else "", "contributors": p.n}
            for p in Pyramid.objects.filter(topic=topic)
            .select_related("creator")
            .annotate(n=Count("scus__contributors"))
        }
        for reference_id, pyramid_id in (
            Pyramid.references.through.objects.filter(referencesummary__in=rows)
            .order_by("pyramid_id")
            .values_list("referencesummary_id", "pyramid_id")
        ):
            if pyramid_id in pyramids:
                rows[reference_id].pyramids.append(pyramids[pyramid_id])
        # Contributors whose parts lie in the text (a legacy contributor may have parts in another reference).
        pointing = defaultdict(set)
        for contributor_id, reference_id in Contributor.objects.filter(reference__in=rows).values_list(
            "id", "reference_id"
        ):
            pointing[reference_id].add(contributor_id)
        for contributor_id, reference_id in ContributorPart.objects.filter(reference__in=rows).values_list(
            "contributor_id", "reference_id"
        ):
            pointing[reference_id].add(contributor_id)
        for reference_id, contributors in pointing.items():
            rows[reference_id].contributors = len(contributors)
        for model_, key in ((LiteStatement, "reference"), (LiteWriting, "reference")):
            for reference_id, n in (
                model_.objects.filter(**{f"{key}__in": rows}).values(key).annotate(n=Count("id")).values_list(key, "n")
            ):
                rows[reference_id].crowd += n
    else:
        for peer_id, annotator, status in (
            PeerAnnotation.objects.filter(peer__in=rows)
            .order_by("annotator__username", "id")
            .values_list("peer_id", "annotator__username", "status")
        ):
            rows[peer_id].annotations.append(
                {"annotator": annotator or "unknown", "status": PeerAnnotation.Status(status).label.lower()}
            )
        for peer_id, n in (
            LiteTask.objects.filter(peer__in=rows).values("peer").annotate(n=Count("id")).values_list("peer", "n")
        ):
            rows[peer_id].crowd += n
    return sorted(rows.values(), key=lambda row: natural_key(row.summary.external_id))


def summary_row(topic: Topic, kind: str, summary_id: int) -> SummaryRow | None:
    """One summary of the topic with what rests on it; None if the topic has no such summary."""
    found = summary_rows(topic, kind, only=summary_id)
    return found[0] if found else None


# --- editing -------------------------------------------------------------------------------------


def rename_topic(topic: Topic, external_id: str, title: str) -> bool:
    """Give the topic another id and title; returns whether the id changed. EditRefused (field
    ``external_id``) if another topic of the dataset has that id."""
    external_id = _on_field(clean_id, external_id, "topic", on="external_id")
    title = (title or "").strip()
    renamed = external_id != topic.external_id
    if Topic.objects.filter(dataset_id=topic.dataset_id, external_id=external_id).exclude(pk=topic.pk).exists():
        raise EditRefused(f"Another topic of this dataset is called {external_id}: choose another id.", "external_id")
    old = topic.external_id, topic.title
    topic.external_id, topic.title = external_id, title
    try:
        with transaction.atomic():
            topic.save(update_fields=["external_id", "title"])  # its agreement is marked stale (score_events)
    except IntegrityError:  # taken meanwhile
        topic.external_id, topic.title = old
        raise EditRefused(
            f"Another topic of this dataset is called {external_id}: choose another id.", "external_id"
        ) from None
    return renamed


def _on_field(check, value, *args, on: str):
    try:
        return check(value, *args)
    except EditRefused as error:
        raise EditRefused(str(error), on) from None


def add_summary(topic: Topic, kind: str, external_id: str, text: str) -> ReferenceSummary | PeerSummary:
    """A new reference or peer of the topic. EditRefused if the topic has one with that id (``01``
    and ``1`` are the same peer). Nothing rests on a new summary: no score changes."""
    model = KINDS[kind]
    external_id = _on_field(clean_id, external_id, kind, on="external_id")
    text = clean_text(text)
    key = peer_key(external_id)
    for existing in model.objects.filter(topic=topic).values_list("external_id", flat=True):
        if existing == external_id or (kind == "peer" and peer_key(existing) == key):  # as the imports match peers
            raise EditRefused(
                f"Topic {topic.external_id} has a {kind} {existing} already: choose another id "
                "(or open it to correct its text).",
                "external_id",
            )
    try:
        with transaction.atomic():
            return model.objects.create(topic=topic, external_id=external_id, text=text)
    except IntegrityError:
        raise EditRefused(
            f"Topic {topic.external_id} has a {kind} {external_id} already: choose another id.", "external_id"
        ) from None


def _locked_row(topic: Topic, kind: str, summary_id: int) -> SummaryRow:
    """Inside a transaction: the summary's row locked (annotations and contributors that would
    point into it wait; a pyramid action locks its pyramid, locked here too), then what rests on
    it read again, as it is now."""
    model = KINDS[kind]
    if not model.objects.select_for_update().filter(topic=topic, pk=summary_id).exists():
        raise EditRefused(f"This {kind} is no longer in topic {topic.external_id}.")
    if kind == "reference":
        list(
            Pyramid.objects.select_for_update()
            .filter(references=summary_id)
            .order_by("pk")
            .values_list("pk", flat=True)
        )
    row = summary_row(topic, kind, summary_id)
    if row.locks:
        raise EditRefused(f"The text of {kind} {row.summary.external_id} is fixed: " + " ".join(row.locks))
    return row


def edit_text(topic: Topic, kind: str, summary_id: int, text: str) -> bool:
    """Replace the text of a summary nothing rests on; returns whether it changed. EditRefused
    when something does (checked again under a lock, not from the page the coordinator saw).
    Saved through the model: an edited reference marks the scores of empty pyramids listing it
    stale (``score_events._on_reference_saved``)."""
    text = clean_text(text)
    with transaction.atomic():
        row = _locked_row(topic, kind, summary_id)
        if row.summary.text == text:
            return False
        row.summary.text = text
        row.summary.save(update_fields=["text"])
    return True


def remove_summary(topic: Topic, kind: str, summary_id: int) -> SummaryRow:
    """Delete a summary nothing rests on (returns what it was). A reference is first taken out of
    the pyramids that list it without SCUs, through the m2m relation, so their scores are marked
    stale (a cascade would drop the link without the signal)."""
    with transaction.atomic():
        row = _locked_row(topic, kind, summary_id)
        if kind == "reference":
            for pyramid in Pyramid.objects.filter(references=row.summary):
                pyramid.references.remove(row.summary)
        row.summary.delete()
    return row


# --- deleting a topic ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TopicContents:
    """Everything a delete of the topic removes, counted. The first five are always shown."""

    references: int
    peers: int
    pyramids: int
    scus: int
    annotations: int
    contributors: int
    matches: int
    assignments: int
    judgments: int
    crowd_statements: int
    crowd_writings: int
    crowd_tasks: int
    crowd_answers: int
    history: int
    scores: int
    agreement: int

    LABELS = {
        "references": ("reference summary", "reference summaries"),
        "peers": ("peer summary", "peer summaries"),
        "pyramids": ("pyramid", "pyramids"),
        "scus": ("SCU", "SCUs"),
        "annotations": ("peer annotation", "peer annotations"),
        "contributors": ("SCU contributor", "SCU contributors"),
        "matches": ("peer match", "peer matches"),
        "assignments": ("assignment", "assignments"),
        "judgments": ("imported judgment", "imported judgments"),
        "crowd_statements": ("crowd statement", "crowd statements"),
        "crowd_writings": ("crowd writing assignment", "crowd writing assignments"),
        "crowd_tasks": ("crowd judging task", "crowd judging tasks"),
        "crowd_answers": ("crowd answer set", "crowd answer sets"),
        "history": ("edit history entry", "edit history entries"),
        "scores": ("stored score", "stored scores"),
        "agreement": ("stored agreement figure", "stored agreement figures"),
    }
    MAIN = ("references", "peers", "pyramids", "scus", "annotations")
    # Which model's rows each count is (Django's delete() reports its counts by these labels).
    MODELS = {
        "references": ReferenceSummary,
        "peers": PeerSummary,
        "pyramids": Pyramid,
        "scus": SCU,
        "annotations": PeerAnnotation,
        "contributors": Contributor,
        "matches": PeerMatch,
        "assignments": Assignment,
        "judgments": Judgment,
        "crowd_statements": LiteStatement,
        "crowd_writings": LiteWriting,
        "crowd_tasks": LiteTask,
        "crowd_answers": LiteAssignment,
        "history": Change,
        "scores": AnnotationScore,
        "agreement": TopicAgreement,
    }

    def items(self, names=None) -> list[dict]:
        """(name, count, label) of the counts, in order: ``names`` or all."""
        return [
            {"name": f.name, "count": getattr(self, f.name), "label": self.LABELS[f.name][getattr(self, f.name) != 1]}
            for f in fields(self)
            if names is None or f.name in names
        ]

    @property
    def main(self) -> list[dict]:
        return self.items(self.MAIN)

    @property
    def others(self) -> list[dict]:
        """The other counts that are not zero."""
        return [item for item in self.items() if item["name"] not in self.MAIN and item["count"]]

    @property
    def token(self) -> str:
        """The counts as the confirmation form carries them back."""
        return ".".join(str(n) for n in astuple(self))

    def by_model(self) -> dict[str, int]:
        """Counts by model label, as ``QuerySet.delete()`` reports what it deleted."""
        return {self.MODELS[f.name]._meta.label: getattr(self, f.name) for f in fields(self)}


def contents(topic: Topic) -> TopicContents:
    """What deleting the topic removes (everything in it cascades), counted (one query per count)."""
    t = topic.pk
    annotations = PeerAnnotation.objects.filter(pyramid__topic=t)
    return TopicContents(
        references=ReferenceSummary.objects.filter(topic=t).count(),
        peers=PeerSummary.objects.filter(topic=t).count(),
        pyramids=Pyramid.objects.filter(topic=t).count(),
        scus=SCU.objects.filter(pyramid__topic=t).count(),
        annotations=annotations.count(),
        contributors=Contributor.objects.filter(scu__pyramid__topic=t).count(),
        matches=PeerMatch.objects.filter(annotation__pyramid__topic=t).count(),
        assignments=Assignment.objects.filter(topic=t).count(),
        judgments=Judgment.objects.filter(topic=t).count(),
        crowd_statements=LiteStatement.objects.filter(topic=t).count(),
        crowd_writings=LiteWriting.objects.filter(reference__topic=t).count(),
        crowd_tasks=LiteTask.objects.filter(topic=t).count(),
        crowd_answers=LiteAssignment.objects.filter(task__topic=t).count(),
        history=Change.objects.filter(pyramid__topic=t).count()
        + Change.objects.filter(annotation__pyramid__topic=t).count(),
        scores=AnnotationScore.objects.filter(annotation__pyramid__topic=t).count(),
        agreement=TopicAgreement.objects.filter(topic=t).count(),
    )


def delete_topic(topic: Topic, typed_id: str, shown: str) -> TopicContents:
    """Delete the topic and everything in it; returns what was deleted.

    ``typed_id`` must be the topic's id (the coordinator typed it: EditRefused, field ``confirm``,
    otherwise) and ``shown`` the ``token`` of the contents they were shown: the topic and its
    summaries and pyramids are locked, counted again, and if the counts differ (someone annotated
    meanwhile) ChangedMeanwhile carries the new ones and nothing is deleted.
    """
    if (typed_id or "").strip() != topic.external_id:
        raise EditRefused(f"Type the topic id, {topic.external_id}, exactly as shown to confirm.", "confirm")
    with transaction.atomic():
        if not Topic.objects.select_for_update().filter(pk=topic.pk).exists():
            raise EditRefused(f"Topic {topic.external_id} was deleted already.")
        for model in (ReferenceSummary, PeerSummary, Pyramid):
            list(model.objects.select_for_update().filter(topic=topic).order_by("pk").values_list("pk", flat=True))
        now = contents(topic)
        if now.token != shown:
            raise ChangedMeanwhile(now)
        runs = list(
            LightweightPyramid.objects.filter(pk__in=LiteStatement.objects.filter(topic=topic).values("pyramid"))
            | LightweightPyramid.objects.filter(pk__in=LiteTask.objects.filter(topic=topic).values("pyramid"))
        )
        with score_events.topics_deleted():
            Topic.objects.filter(pk=topic.pk).delete()
        for run in runs:
            lightweight_runs.touch(run)
        dataset_id = topic.dataset_id
        transaction.on_commit(lambda: snapshots.schedule_with_workers([dataset_id]))  # the topic leaves the dashboards
    return now
