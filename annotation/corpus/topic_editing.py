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

What rests on a text belongs to the concepts above the corpus (pyramids, peer annotations, imported
judgments, crowd runs, the edit history): each registers with :func:`register` what of it rests on a
summary, what a delete of the topic removes of it (``Counted``), the rows to lock while a summary is
checked and changed, and what to do around a removal or a delete (``Dependent``). Its module does so
when the app is ready (``annotation.apps``), in the order of the layers, the order in which the
pages list them; nothing here imports a concept above the corpus.

Score freshness: every write goes through the models, so ``annotation.peers.score_events`` sees it: an
edited reference bumps the pyramids that list it, a reference taken out of a pyramid bumps that
pyramid (the m2m signal), a renamed topic bumps its topic (its stored agreement rows name it),
and the dashboards' fingerprint (``dashboard_snapshots``) notices ids and topics that changed or
went. Adding a summary, or correcting one nothing rests on, changes no score. A deleted topic's
stored scores and agreement go with it in the cascade (the peers' part spares the per-row bumps
of what is being deleted anyway); lightweight runs that had statements or tasks in it are touched
so their scores are recomputed without it.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass, field

from django.db import IntegrityError, transaction
from django.db.models import Model

from annotation.corpus.models import Assignment, PeerSummary, ReferenceSummary, Topic
from annotation.corpus.natural_order import natural_key
from annotation.formats.nist_names import peer_key
from annotation.formats.summary_texts import MAX_ID, normalise

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


# --- what the concepts above keep on a topic's texts -------------------------------------------


@dataclass
class Resting:
    """What one concept rests on one summary. ``locks``: why its text is fixed, a sentence each for
    the coordinator (none: it may change and go); ``words``: the same in a few words, for the table;
    ``notes``: what rests on it without fixing it, said before it is saved or removed."""

    locks: list[str] = field(default_factory=list)
    words: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Counted:
    """The rows of one model a delete of the topic removes with it: ``count(topic_id)`` counts them
    (one query); ``one`` and ``many`` name them; ``main`` ones are always shown, the others when
    there are some."""

    name: str
    model: type[Model]
    count: Callable[[int], int]
    one: str
    many: str
    main: bool = False


@dataclass(frozen=True)
class Dependent:
    """What one concept keeps on a topic's texts, and how editing the topic deals with it (each part
    optional):

    - ``resting(topic, kind, summaries)``: summary pk -> ``Resting``, for those of ``summaries`` (pk ->
      summary of ``kind``) something of it rests on, in a fixed number of queries however many;
    - ``counts``: what a delete of the topic removes of it;
    - ``lock(topic, kind, summary_id)``: inside the transaction, lock its rows that would come to point
      into the summary (``kind`` None: into any text of the topic), so they wait while it is checked
      and changed;
    - ``removing(kind, summary)``: before a summary nothing rests on is deleted;
    - ``deleting(topic)``: a context manager around the topic's delete, inside its transaction.
    """

    resting: Callable[[Topic, str, dict[int, Model]], dict[int, Resting]] | None = None
    counts: tuple[Counted, ...] = ()
    lock: Callable[[Topic, str | None, int | None], None] | None = None
    removing: Callable[[str, Model], None] | None = None
    deleting: Callable[[Topic], AbstractContextManager] | None = None


DEPENDENTS: dict[str, Dependent] = {}


def register(name: str, dependent: Dependent) -> None:
    """What the concept ``name`` keeps on a topic's texts (registering again replaces it in place)."""
    DEPENDENTS[name] = dependent


def delete_counts() -> dict[str, Counted]:
    """What a delete of a topic counts, by name, in the order the confirmation lists it."""
    return {counted.name: counted for dependent in DEPENDENTS.values() for counted in dependent.counts}


# The corpus's own rows, first.
register(
    "corpus",
    Dependent(
        counts=(
            Counted(
                "references",
                ReferenceSummary,
                lambda t: ReferenceSummary.objects.filter(topic=t).count(),
                "reference summary",
                "reference summaries",
                main=True,
            ),
            Counted(
                "peers",
                PeerSummary,
                lambda t: PeerSummary.objects.filter(topic=t).count(),
                "peer summary",
                "peer summaries",
                main=True,
            ),
            Counted(
                "assignments",
                Assignment,
                lambda t: Assignment.objects.filter(topic=t).count(),
                "assignment",
                "assignments",
            ),
        ),
    ),
)


# --- what rests on a summary --------------------------------------------------------------------


@dataclass
class SummaryRow:
    """A summary of the topic with what rests on it (the topic page's row, the edit page's state)."""

    kind: str
    summary: ReferenceSummary | PeerSummary
    resting: list[Resting] = field(default_factory=list)  # each concept's part, in the registered order

    @property
    def words(self) -> int:
        return len(self.summary.text.split())

    @property
    def characters(self) -> int:
        return len(self.summary.text)

    @property
    def locks(self) -> list[str]:
        """Why its text may not change nor it be removed, one sentence each (empty: it may)."""
        return [reason for part in self.resting for reason in part.locks]

    @property
    def editable(self) -> bool:
        return not self.locks

    @property
    def notes(self) -> list[str]:
        """What rests on it without fixing it (a pyramid listing it without SCUs yet)."""
        return [note for part in self.resting for note in part.notes]

    @property
    def rests_on(self) -> str:
        """What rests on it, in a few words for the table."""
        return ", ".join(words for part in self.resting for words in part.words)


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
    by_pk = {pk: row.summary for pk, row in rows.items()}
    for dependent in DEPENDENTS.values():
        if dependent.resting is not None:
            for pk, part in dependent.resting(topic, kind, by_pk).items():
                rows[pk].resting.append(part)
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
    for dependent in DEPENDENTS.values():
        if dependent.lock is not None:
            dependent.lock(topic, kind, summary_id)
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
    """Delete a summary nothing rests on (returns what it was). What still refers to it is let go
    first through the concepts' models (a reference is taken out of the pyramids that list it
    without SCUs, through the m2m relation, so their scores are marked stale: a cascade would drop
    the link without the signal)."""
    with transaction.atomic():
        row = _locked_row(topic, kind, summary_id)
        for dependent in DEPENDENTS.values():
            if dependent.removing is not None:
                dependent.removing(kind, row.summary)
        row.summary.delete()
    return row


# --- deleting a topic ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TopicContents:
    """Everything a delete of the topic removes, counted: name -> count, in the order of ``delete_counts()``."""

    counts: dict[str, int]

    def items(self, names=None) -> list[dict]:
        """(name, count, label) of the counts, in order: ``names`` or all."""
        kinds = delete_counts()
        return [
            {"name": name, "count": n, "label": kinds[name].one if n == 1 else kinds[name].many}
            for name, n in self.counts.items()
            if names is None or name in names
        ]

    @property
    def main(self) -> list[dict]:
        """The counts always shown."""
        return self.items([name for name, counted in delete_counts().items() if counted.main])

    @property
    def others(self) -> list[dict]:
        """The other counts that are not zero."""
        kinds = delete_counts()
        return [item for item in self.items() if not kinds[item["name"]].main and item["count"]]

    @property
    def token(self) -> str:
        """The counts as the confirmation form carries them back."""
        return ".".join(str(n) for n in self.counts.values())

    def by_model(self) -> dict[str, int]:
        """Counts by model label, as ``QuerySet.delete()`` reports what it deleted."""
        kinds = delete_counts()
        return {kinds[name].model._meta.label: n for name, n in self.counts.items()}


def contents(topic: Topic) -> TopicContents:
    """What deleting the topic removes (everything in it cascades), counted (one query per count)."""
    return TopicContents({name: counted.count(topic.pk) for name, counted in delete_counts().items()})


def delete_topic(topic: Topic, typed_id: str, shown: str) -> TopicContents:
    """Delete the topic and everything in it; returns what was deleted.

    ``typed_id`` must be the topic's id (the coordinator typed it: EditRefused, field ``confirm``,
    otherwise) and ``shown`` the ``token`` of the contents they were shown: the topic, its
    summaries and what points into them (its pyramids) are locked, counted again, and if the
    counts differ (someone annotated meanwhile) ChangedMeanwhile carries the new ones and nothing
    is deleted.
    """
    if (typed_id or "").strip() != topic.external_id:
        raise EditRefused(f"Type the topic id, {topic.external_id}, exactly as shown to confirm.", "confirm")
    with transaction.atomic():
        if not Topic.objects.select_for_update().filter(pk=topic.pk).exists():
            raise EditRefused(f"Topic {topic.external_id} was deleted already.")
        for model in (ReferenceSummary, PeerSummary):
            list(model.objects.select_for_update().filter(topic=topic).order_by("pk").values_list("pk", flat=True))
        for dependent in DEPENDENTS.values():
            if dependent.lock is not None:
                dependent.lock(topic, None, None)
        now = contents(topic)
        if now.token != shown:
            raise ChangedMeanwhile(now)
        with ExitStack() as around:
            for dependent in DEPENDENTS.values():
                if dependent.deleting is not None:
                    around.enter_context(dependent.deleting(topic))
            Topic.objects.filter(pk=topic.pk).delete()
    return now
