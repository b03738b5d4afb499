"""Import DUCView files (.pyr pyramids, .pan peer annotations) into the database.

Each file is imported whole or not at all (``import_all``: 50 files per transaction, each in its
own savepoint, their peer annotations written together when the batch ends): a file that is
rejected (malformed, hostile, inconsistent with what is already stored) writes nothing, and the
others still go in. The
report lists every repair the parser made, every part kept at its stored offsets because its label
was found nowhere (``kept``: the match or contributor counts, as in the file's own scores, and is
flagged for review), every part left out, every legacy rule violation kept for the official
scores, and every rejected file with the reason. What reading a pyramid found is reported once,
by the file that stored it.

Identity, so that re-importing never duplicates: topics by (dataset, id), summaries by
(topic, id) and text; pyramids and peer annotations by the one rule of an import,
``formats.same_again`` (the same content from the same origin: the annotator or creator when
something names one, else the file's name), so two annotators' identical pyramids stay two while
the same file again, with or without an annotator table, is the one stored. A .pan carries a copy
of its pyramid, which has no file of its own: it is attached to an identical pyramid of the topic
(the first stored) if there is one. A peer has at most one annotation per annotator of a
pyramid, the files that name none counting as one annotator: a file from the origin of a stored
annotation (or of that annotator) with other matches is rejected, as two annotators' files are
never merged into one.
"""

from __future__ import annotations

import dataclasses
import gc
import logging
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib.auth.models import User
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from annotation import formats
from annotation.access.rules import coordinates
from annotation.adjudication import reannotation
from annotation.adjudication.models import Adjudication, PyramidAdjudication
from annotation.corpus.models import Assignment, Dataset, PeerSummary, ReferenceSummary, Topic
from annotation.corpus.roles import IMPORTED_ANNOTATOR, IMPORTED_MARK, role_group
from annotation.formats.bounds import WorkBudget
from annotation.peers.models import PeerAnnotation, PeerMatch, PeerMatchPart
from annotation.peers.score_events import annotations_created, batched_scheduling, touch_pyramid
from annotation.pyramids.models import COMMENT_LENGTH, LABEL_LENGTH, SCU, Contributor, ContributorPart, Pyramid
from annotation.transfer.queries import insert_rows

if TYPE_CHECKING:
    from annotation.transfer.archive import Archived

EXTENSIONS = (".pyr", ".pan")
ARCHIVE_MANIFEST = "archive manifest"  # where an annotator's name came from, beside formats.FILE_NAME etc.
COMMIT_EVERY = 50  # files per transaction (``import_all``)
log = logging.getLogger(__name__)
_PAN_ROOT = re.compile(rb"<peerAnnotation[\s>]")
_PYR_ROOT = re.compile(rb"<pyramid[\s>]")


@dataclass
class ImportCache:
    """What one import has already read and stored: embedded pyramids parsed once (by their
    bytes); topics, their references, pyramids by (topic, content) and SCU ids by pyramid, as
    the database holds them after the files that were imported (a rejected file adds nothing)."""

    parsed: dict = field(default_factory=dict)
    stored: dict = field(default_factory=dict)
    # Parsed pyramids whose labels and comments passed their bounds, by id (each kept here, so its
    # id is not reused while the import runs): a topic's .pan files share one parsed pyramid.
    bounded: dict = field(default_factory=dict)

    def checkpoint(self) -> dict:
        return dict(self.stored)  # its values are replaced, never changed in place

    def restore(self, checkpoint: dict) -> None:
        self.stored = checkpoint


class _FileMemo:
    """The import's cache as one file sees it: reads fall through to what this file stored;
    what it stores reaches the import's cache only once the file is in (``commit``)."""

    def __init__(self, cache: ImportCache | None):
        self.shared = cache.stored if cache is not None else {}
        self.own: dict = {}

    def get(self, key):
        return self.own.get(key, self.shared.get(key))

    def put(self, key, value):
        self.own[key] = value
        return value

    def commit(self) -> None:
        self.shared.update(self.own)


class ImportRejected(Exception):
    """The file contradicts what is stored; the message says how."""


@dataclass
class ImportReport:
    files: int = 0
    topics: int = 0
    pyramids_created: int = 0
    pyramids_reused: int = 0
    scus: int = 0
    annotations_created: int = 0
    annotations_existing: int = 0
    # adjudicated versions of a dataset archive made so again (``restore_adjudications``)
    adjudications_restored: int = 0
    pyramid_adjudications_restored: int = 0  # adjudicated pyramids made so again (``restore_pyramid_adjudications``)
    repairs: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    unplaced: list[str] = field(default_factory=list)
    legacy: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    annotators_created: list[str] = field(default_factory=list)
    outcomes: list[dict] = field(default_factory=list)

    def as_dict(self) -> dict:
        return dict(self.__dict__)

    def checkpoint(self) -> dict:
        """What ``restore`` needs to forget what came after (counts, and lists only grow)."""
        return {key: len(value) if isinstance(value, list) else value for key, value in self.__dict__.items()}

    def restore(self, checkpoint: dict) -> None:
        for key, value in checkpoint.items():
            if isinstance(getattr(self, key), list):
                del getattr(self, key)[value:]
            else:
                setattr(self, key, value)

    def summary_lines(self) -> list[str]:
        return [
            f"files: {self.files} ({len(self.rejected)} rejected)",
            f"topics created: {self.topics}",
            f"pyramids: {self.pyramids_created} created, {self.pyramids_reused} already present",
            f"SCUs created: {self.scus}",
            f"peer annotations: {self.annotations_created} created, {self.annotations_existing} already present",
            f"adjudicated versions restored (scores rest on them): {self.adjudications_restored}",
            f"adjudicated pyramids restored (their topics' scores rest on them): {self.pyramid_adjudications_restored}",
            f"repairs: {len(self.repairs)}; offsets kept, label not found (review): {len(self.kept)}; "
            f"left out: {len(self.unplaced)}; legacy rule violations kept: {len(self.legacy)}",
            f"annotator identities created (they cannot log in): {len(self.annotators_created)}",
            "names from: " + (self.sources_line() or "no file imported"),
        ]

    def sources_line(self) -> str:
        """How many topics/peers/annotators came from each source, e.g. 'topic: 20 file name, 2 content'."""
        parts = []
        for key in ("topic", "peer", "annotator"):
            counts: dict[str, int] = {}
            for outcome in self.outcomes:
                if outcome.get(f"{key}_from"):
                    counts[outcome[f"{key}_from"]] = counts.get(outcome[f"{key}_from"], 0) + 1
            if counts:
                parts.append(f"{key}: " + ", ".join(f"{n} {source}" for source, n in counts.items()))
        return "; ".join(parts)


def find_files(paths: Iterable[str | Path]) -> list[Path]:
    """Files to import: the given files, and .pyr/.pan files under given directories; pyramids first."""
    found = []
    for path in map(Path, paths):
        if path.is_dir():
            found += [p for p in path.rglob("*") if p.suffix.lower() in EXTENSIONS and p.is_file()]
        elif path.exists():
            found.append(path)
        else:
            raise FileNotFoundError(f"{path}: no such file or directory")
    return sorted(set(found), key=lambda p: (p.suffix.lower() != ".pyr", str(p)))


def import_budget() -> WorkBudget:
    """Seconds one import may spend on patterns its files supply (``IMPORT_PATTERN_SECONDS``)."""
    return WorkBudget(settings.IMPORT_PATTERN_SECONDS)


def import_paths(
    paths,
    dataset_name: str,
    progress: Callable[[Iterable], Iterable] = iter,
    options: formats.NameOptions | None = None,
) -> ImportReport:
    files = find_files(paths)
    report = ImportReport()
    dataset, _ = Dataset.objects.get_or_create(name=dataset_name)
    import_all(((path.name, path) for path in progress(files)), dataset, report, options)
    return report


def import_all(
    files: Iterable[tuple[str, bytes | Path]],
    dataset: Dataset,
    report: ImportReport,
    options: formats.NameOptions | None = None,
    batch_size: int = COMMIT_EVERY,
    archived: Mapping[str, Archived] | None = None,
) -> None:
    """Import (name, bytes or path) pairs, pyramids first, ``batch_size`` files per transaction;
    scores are scheduled once at the end. Each file is still imported whole or not at all.
    ``archived``: what a dataset archive's manifest says of its files, by name (status,
    annotator or creator, times: ``import_file``).

    Committing every 50 files rather than every file halves an import's time (a commit waits for
    the disk), while the write lock is still released regularly for other users. Within a batch,
    the rows of the peer annotations (peers, annotations, matches, match parts) are kept until
    the batch ends and then written together, a few multi-row INSERTs for all 50 files rather
    than four or more statements each; a file rejected meanwhile adds none. Should the database
    still refuse those rows (a constraint no check here knows, a concurrent import of the same
    peers), the batch is rolled back and imported again file by file, each file then writing its
    own rows in its own savepoint, so that only the culprit is refused, with the reason."""
    budget, cache = import_budget(), ImportCache()
    with batched_scheduling(), older_objects_frozen():
        for batch in _batches(files, batch_size):
            try:
                _import_batch(batch, dataset, report, budget, options, cache, PendingRows(), archived or {})
            except DatabaseError as error:
                log.warning(
                    "the database refused the rows of a batch of %d files (%s); importing them one by one",
                    len(batch),
                    error,
                )
                _import_batch(batch, dataset, report, budget, options, cache, None, archived or {})
        if archived:
            restore_adjudications(dataset, report, archived)
            restore_pyramid_adjudications(dataset, report, archived)


def restore_adjudications(dataset: Dataset, report: ImportReport, archived: Mapping[str, Archived]) -> None:
    """Make the adjudicated versions a dataset archive describes (manifest version 3) adjudicated
    versions again: each imported .pan is found by its archive path (its ``source``), and its
    ``Adjudication`` stored with the imported sources, the decisions naming them by their new ids,
    the adjudicator and the times. A source the archive says changed since keeps showing as
    changed (no revision recorded for it). One already adjudicated (an archive imported twice) is
    left as it is; one whose files were not all imported is said in ``report.repairs``."""
    wanted = {name: record.adjudication for name, record in archived.items() if record.adjudication is not None}
    if not wanted:
        return
    names = set(wanted) | {source for a in wanted.values() for source in a.sources}
    found: dict[str, list[PeerAnnotation]] = {}
    for annotation in PeerAnnotation.objects.filter(
        pyramid__topic__dataset=dataset, source__in=[n[-500:] for n in names]
    ).order_by("pk"):
        found.setdefault(annotation.source, []).append(annotation)
    restored: list[PeerAnnotation] = []
    with transaction.atomic():
        for name, adjudication in sorted(wanted.items()):
            files = [name, *adjudication.sources]
            matched = {f: found.get(f[-500:], []) for f in files}
            if any(len(m) != 1 for m in matched.values()):
                report.repairs.append(
                    f"{name}: its adjudication was not restored (the files of the versions it settles, "
                    f"{', '.join(f for f in files if len(matched[f]) != 1)}, were not imported once each): "
                    "it is an annotation without annotator"
                )
                continue
            version, sources = matched[name][0], {f: matched[f][0] for f in adjudication.sources}
            if Adjudication.objects.filter(annotation=version).exists():
                continue
            if len({(a.pyramid_id, a.peer_id) for a in (version, *sources.values())}) != 1:
                report.repairs.append(
                    f"{name}: its adjudication was not restored (the versions it settles are of another peer "
                    "or pyramid): it is an annotation without annotator"
                )
                continue
            if version.annotator_id is not None or any(a.annotator_id is None for a in sources.values()):
                # never make an annotator's own annotation an adjudicated version (nor settle one without annotator)
                report.repairs.append(
                    f"{name}: its adjudication was not restored (the imported files are not an annotation "
                    "without annotator and annotators' versions)"
                )
                continue
            adjudicator = _archived_adjudicator(name, adjudication.adjudicator, "adjudication", dataset, report)
            record = Adjudication.objects.create(
                annotation=version,
                adjudicator=adjudicator,
                decisions={
                    key: str(sources[choice].pk) if choice in sources else choice
                    for key, choice in adjudication.decisions
                },
                source_revisions={
                    str(a.pk): None if f in adjudication.changed else a.revision for f, a in sources.items()
                },
            )
            record.sources.set(list(sources.values()))
            Adjudication.objects.filter(pk=record.pk).update(
                created_at=adjudication.created_at, updated_at=adjudication.updated_at
            )
            restored.append(version)
        report.adjudications_restored += len(restored)
        # Which versions count for scores changed: their topics' results are stale.
        annotations_created([a.pk for a in restored], {a.pyramid.topic_id for a in restored})


def _archived_adjudicator(name: str, username: str | None, kind: str, dataset: Dataset, report: ImportReport):
    """The user an archive names as adjudicator, or None (said in the repairs). Only a coordinator
    of this dataset adjudicates, so an archive (a file anyone can write) never makes an annotator,
    an imported annotator identity, a coordinator of another dataset or any other user the author
    of an adjudication."""
    if not username:
        return None
    adjudicator = User.objects.filter(username=username, is_active=True).first()
    if adjudicator is None:
        report.repairs.append(
            f"{name}: its adjudicator {username!r} is no user here: the {kind} is restored without adjudicator"
        )
    elif not coordinates(adjudicator, dataset):
        report.repairs.append(
            f"{name}: its adjudicator {username!r} is no coordinator of this dataset "
            "(only they adjudicate): "
            f"the {kind} is restored without adjudicator"
        )
        adjudicator = None
    return adjudicator


def restore_pyramid_adjudications(dataset: Dataset, report: ImportReport, archived: Mapping[str, Archived]) -> None:
    """Make the adjudicated pyramids a dataset archive describes (manifest version 4) adjudicated
    pyramids again: each .pyr is found by the stored pyramid its import wrote or found (the file's
    ``outcome``), and its ``PyramidAdjudication`` stored with the imported source pyramids, the
    decisions, uids, adjudicator and times. A source the archive says changed since keeps showing
    as changed (no revision recorded for it). Never attached to a pyramid with a creator, nor to a
    topic already adjudicated otherwise; what cannot be restored is said in ``report.repairs``."""
    wanted = {
        name: record.pyramid_adjudication
        for name, record in archived.items()
        if record.pyramid_adjudication is not None
    }
    if not wanted:
        return
    placed: dict[str, set[int]] = {}
    for outcome in report.outcomes:
        if outcome.get("kind") == "pyr" and outcome.get("status") != "rejected" and outcome.get("pyramid"):
            placed.setdefault(outcome["file"], set()).add(outcome["pyramid"])
    restored: list[Pyramid] = []
    with transaction.atomic():
        for name, adjudication in sorted(wanted.items()):
            files = [name, *adjudication.sources]
            if any(len(placed.get(f, ())) != 1 for f in files):
                report.repairs.append(
                    f"{name}: its pyramid adjudication was not restored (the pyramids it settles, "
                    f"{', '.join(f for f in files if len(placed.get(f, ())) != 1)}, were not imported once each): "
                    "it is a pyramid without creator"
                )
                continue
            ids = [next(iter(placed[f])) for f in files]
            pyramids = Pyramid.objects.in_bulk(ids)
            pyramid, sources = (
                pyramids[ids[0]],
                {f: pyramids[pk] for f, pk in zip(adjudication.sources, ids[1:], strict=True)},
            )
            existing = PyramidAdjudication.objects.filter(topic_id=pyramid.topic_id).first()
            if existing is not None and existing.pyramid_id == pyramid.pk:
                continue  # an archive imported twice
            if len(set(ids)) != len(ids) or len({p.topic_id for p in pyramids.values()}) != 1:
                report.repairs.append(
                    f"{name}: its pyramid adjudication was not restored (the pyramids it settles are the same "
                    "pyramid or of another topic): it is a pyramid without creator"
                )
                continue
            if pyramid.creator_id is not None:
                # never make someone's own pyramid the adjudicated one
                report.repairs.append(
                    f"{name}: its pyramid adjudication was not restored (the imported pyramid has a creator)"
                )
                continue
            if existing is not None or PyramidAdjudication.objects.filter(pyramid__in=list(sources.values())).exists():
                report.repairs.append(
                    f"{name}: its pyramid adjudication was not restored (the topic already has its adjudicated "
                    "pyramid, or a pyramid it settles is one): it is a pyramid without creator"
                )
                continue
            adjudicator = _archived_adjudicator(name, adjudication.adjudicator, "pyramid adjudication", dataset, report)
            record = PyramidAdjudication.objects.create(
                topic_id=pyramid.topic_id,
                pyramid=pyramid,
                adjudicator=adjudicator,
                decisions=dict(adjudication.decisions),
                uids=dict(adjudication.uids),
                source_order=[p.pk for p in sources.values()],  # the archive lists A first
                source_revisions={
                    str(p.pk): None if f in adjudication.changed else p.revision for f, p in sources.items()
                },
            )
            record.sources.set(list(sources.values()))
            PyramidAdjudication.objects.filter(pk=record.pk).update(
                created_at=adjudication.created_at, updated_at=adjudication.updated_at
            )
            restored.append(pyramid)
        report.pyramid_adjudications_restored += len(restored)
        # Which annotations count for scores changed: their topics' results are stale, and their finished peers to redo.
        topics = {p.topic_id for p in restored}
        annotations_created(
            list(PeerAnnotation.objects.filter(pyramid__topic_id__in=topics).values_list("pk", flat=True)), topics
        )
        reannotation.sync_status(Assignment.objects.filter(topic_id__in=topics))


def _batches(items: Iterable, size: int) -> Iterator[list]:
    batch: list = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def _import_batch(
    batch: list[tuple[str, bytes | Path]],
    dataset: Dataset,
    report: ImportReport,
    budget: WorkBudget,
    options: formats.NameOptions | None,
    cache: ImportCache,
    pending: PendingRows | None,
    archived: Mapping[str, Archived],
) -> None:
    """One transaction; if it fails, the report, the cache and the budget are as they were before it."""
    saved = report.checkpoint(), cache.checkpoint(), budget.used
    try:
        with transaction.atomic():
            for name, data in batch:
                record = archived.get(name)
                import_file(
                    name,
                    data if isinstance(data, bytes) else data.read_bytes(),
                    dataset,
                    report,
                    budget,
                    options,
                    cache,
                    pending,
                    record,
                    archived.get(record.pyramid) if record and record.pyramid else None,
                )
            if pending is not None:
                pending.flush()
    except BaseException:
        report.restore(saved[0])
        cache.restore(saved[1])
        budget.used = saved[2]
        raise


# The freezes this process holds: one per import running (a web process may run two at once), and one
# for good once ``freeze_for_process`` ran. Counted rather than asked of the collector, as
# ``gc.get_freeze_count`` walks every frozen object (10 ms for a bare Django process, far more in a
# long-lived one that froze once).
_freezing = threading.Lock()
_freezes = 0


def freeze_for_process() -> None:
    """Keep every object that exists now out of the collector for the rest of the process, which does
    nothing but import and score (``import_ducview``, ``import_pyramid_set``): a freeze never released,
    so ``older_objects_frozen`` then has nothing to do."""
    global _freezes
    with _freezing:
        gc.freeze()
        _freezes += 1


@contextmanager
def older_objects_frozen() -> Iterator[None]:
    """Keep the objects that exist before an import (Django, the app's modules: a few hundred
    thousand) out of the garbage collector's passes while it runs (``gc.freeze``).

    An import allocates enough to trigger hundreds of collections, and each full one scanned them
    all again: a third of DUC 2006's import time went to the collector, and a collection that
    starts while a label is searched for is charged to the file's pattern budget
    (``IMPORT_PATTERN_SECONDS_PER_FILE``): one pause of 0.48 s under load refused a real file as
    hostile. The first freeze held freezes, the last released unfreezes (an unfreeze releases every
    frozen object, so imports running at once share one freeze)."""
    global _freezes
    with _freezing:
        if not _freezes:
            gc.freeze()
        _freezes += 1
    try:
        yield
    finally:
        with _freezing:
            _freezes -= 1
            if not _freezes:
                gc.unfreeze()


def file_kind(name: str, data: bytes) -> str:
    """'pan' or 'pyr': the root element when it can be seen in the bytes, else the extension."""
    is_pan = _PAN_ROOT.search(data) is not None
    if is_pan or _PYR_ROOT.search(data) is not None:
        return "pan" if is_pan else "pyr"
    return "pan" if name.lower().endswith(".pan") else "pyr"


def import_file(
    name: str,
    data: bytes,
    dataset: Dataset,
    report: ImportReport,
    budget: WorkBudget | None = None,
    options: formats.NameOptions | None = None,
    cache: ImportCache | None = None,
    pending: PendingRows | None = None,
    archived: Archived | None = None,
    against: Archived | None = None,
) -> None:
    """Import one file whole or not at all; what happened goes to ``report``, nothing is raised.

    A file of a dataset archive (``archived``: what its manifest says) is stored with the status,
    annotator (creator of a pyramid) and times the manifest gives; any other file is a finished
    annotation or pyramid (NIST's are). A .pan of an archive goes onto the pyramid it was made
    against (``against``: what the manifest says of that pyramid's file), not onto another
    annotator's identical pyramid.

    ``budget`` is the import's time for file-supplied patterns (each file gets at most
    ``IMPORT_PATTERN_SECONDS_PER_FILE`` of it); ``options`` name topic, peer and annotator where
    the file name does not (see :mod:`annotation.formats.identity`). A .pan's rows go to
    ``pending`` when given (written when the caller's batch ends, see ``import_all``), else they
    are written here."""
    report.files += 1
    limits = {
        "max_bytes": settings.IMPORT_MAX_BYTES,
        "budget": (budget or import_budget()).for_file(settings.IMPORT_PATTERN_SECONDS_PER_FILE),
    }
    kind = file_kind(name, data)
    outcome = {"file": name, "kind": kind, "status": "rejected", "reason": ""}
    report.outcomes.append(outcome)
    before = report.checkpoint()
    rows = PendingRows()
    try:
        if kind == "pyr":
            pyramid, parse_report = formats.parse_pyramid(data, **limits)
        else:
            pan, parse_report = formats.parse_peer_annotation(data, pyramids=cache.parsed if cache else None, **limits)
            pyramid = pan.pyramid
        who = formats.identify(name, kind, pyramid, options or formats.NameOptions())
        if archived is not None and kind == "pan":
            who = dataclasses.replace(
                who, annotator=formats.Named(archived.user, ARCHIVE_MANIFEST) if archived.user else None
            )
        outcome.update(_described(who))
        _check_lengths(who, pyramid, cache)
        memo = _FileMemo(cache)
        with transaction.atomic():
            topic = _topic(dataset, who.topic.value, report, memo)
            db_pyramid, wrote_pyramid = _pyramid(
                topic,
                pyramid,
                parse_report.legacy,
                name,
                report,
                memo,
                archived if kind == "pyr" else None,
                kind == "pan",
                against,
            )
            wrote_annotation = kind == "pan" and _annotation(
                topic, db_pyramid, pan, who, name, report, memo, rows, archived
            )
            wrote = wrote_annotation if kind == "pan" else wrote_pyramid
            outcome["status"] = "imported" if wrote else "already present"
            if kind == "pyr":
                outcome["pyramid"] = db_pyramid.pk  # which stored pyramid this file is (restore_pyramid_adjudications)
            if pending is None:
                rows.flush()
    except (formats.DucViewError, ImportRejected) as error:
        return _reject(report, outcome, str(error), before)
    except DatabaseError as error:  # a constraint the checks above missed: still this file only
        log.warning("import of %s refused by the database: %s", name, error)
        return _reject(report, outcome, f"the database refused it ({type(error).__name__}: {str(error)[:200]})", before)
    except Exception as error:  # never a 500 and never the other files: the report says it
        log.exception("unexpected error importing %s", name)
        return _reject(
            report,
            outcome,
            f"unexpected error while importing ({type(error).__name__}); nothing of it was written",
            before,
        )
    memo.commit()  # the file is in: later files may use what it stored
    if pending is not None:
        pending.absorb(rows)
    # What reading found is said by the file that stored it: a pyramid once (a topic's .pan files
    # all carry it), an annotation when it is written (a re-import writes and says nothing again).
    wrote_it = {"pyramid": wrote_pyramid, "peer": wrote_annotation, "file": True}
    said = [r for r in (*parse_report.repairs, *parse_report.rejects) if wrote_it[r.scope]]
    report.repairs += [f"{name}: {r.message}" for r in said if isinstance(r, formats.Repair) and r.kind != "kept"]
    report.repairs += [f"{name}: {note}" for note in who.notes]
    report.kept += [f"{name}: {r.message}" for r in said if isinstance(r, formats.Repair) and r.kind == "kept"]
    report.unplaced += [f"{name}: {r.message}" for r in said if isinstance(r, formats.Reject)]


def _reject(report: ImportReport, outcome: dict, reason: str, before: dict) -> None:
    report.restore(before)  # what the file added (counts, annotators created) was rolled back with it
    outcome["status"], outcome["reason"] = "rejected", reason
    report.rejected.append(f"{outcome['file']}: {reason}")


def _described(who: formats.FileIdentity) -> dict:
    out = {"topic": who.topic.value, "topic_from": who.topic.source}
    for key, named in (("peer", who.peer), ("annotator", who.annotator)):
        out[key], out[f"{key}_from"] = (named.value, named.source) if named else (None, None)
    return out


def _check_lengths(who: formats.FileIdentity, pyramid: formats.Pyramid, cache: ImportCache | None = None) -> None:
    """Ids longer than their columns, labels and comments longer than the settings allow are refused
    here, with the reason (never a database error). The texts of a parsed pyramid that passed
    once in this import (``cache.bounded``: a topic's .pan files share it) are not measured again."""
    limit = Topic._meta.get_field("external_id").max_length
    checks = [("topic", who.topic), ("peer", who.peer)] + [
        ("reference", formats.Named(r.id, "content")) for r in pyramid.references
    ]
    for what, named in checks:
        if named is not None and len(named.value) > limit:
            hint = (
                f"; name it with --{what}"
                if named.source in (formats.FILE_STEM, formats.FILE_NAME) and what != "reference"
                else ""
            )
            raise ImportRejected(
                f"the {what} id {named.value[:40]!r}... (from the {named.source}) is longer than {limit} "
                f"characters{hint}"
            )
        if named is not None and not named.value.strip():
            raise ImportRejected(f"the {what} id (from the {named.source}) is empty")
    if who.annotator is not None and len(who.annotator.value) > User._meta.get_field("username").max_length:
        raise ImportRejected(f"the annotator name {who.annotator.value[:40]!r}... is longer than a user name may be")
    if cache is not None and cache.bounded.get(id(pyramid)) is pyramid:
        return
    _check_texts(pyramid)
    if cache is not None:
        cache.bounded[id(pyramid)] = pyramid


def _check_texts(pyramid: formats.Pyramid) -> None:
    """Every label and comment within its bound (``LengthBound``: the setting is read once here,
    not once per text: a DUC pyramid has a few thousand of them)."""
    label_limit, comment_limit = (getattr(settings, bound.setting) for bound in (LABEL_LENGTH, COMMENT_LENGTH))
    for scu in pyramid.scus:
        if (
            len(scu.label) <= label_limit
            and len(scu.comment) <= comment_limit
            and all(len(c.comment) <= comment_limit for c in scu.contributors)
        ):
            continue
        texts = [(f"SCU {scu.uid}", LABEL_LENGTH, scu.label), (f"SCU {scu.uid}", COMMENT_LENGTH, scu.comment)]
        texts += [
            (f"SCU {scu.uid}, contributor {i + 1}", COMMENT_LENGTH, c.comment) for i, c in enumerate(scu.contributors)
        ]
        for where, bound, text in texts:
            problem = bound.problem(text)
            if problem is not None:
                raise ImportRejected(f"{where}: {problem[0].lower()}{problem[1:]}")


def _topic(dataset: Dataset, external_id: str, report: ImportReport, memo: _FileMemo) -> Topic:
    key = ("topic", dataset.pk, external_id)
    if memo.get(key) is not None:
        return memo.get(key)
    topic, created = Topic.objects.get_or_create(dataset=dataset, external_id=external_id)
    report.topics += created
    return memo.put(key, topic)


UNDECODABLE = {"\ufffd", "?"}


def same_text_note(stored: str, incoming: str, what: str) -> str | None:
    """Accept the incoming copy of a stored text if it is the same text: None, or the note for
    the report when the copies differ only by undecodable characters.

    DUC files copy texts into every .pan; some copies lost undecodable characters differently
    (U+FFFD in one file, '?' in another). Such copies are the same text: the stored one is kept
    and the difference reported. Anything else is a real conflict and rejects the file.
    """
    if stored == incoming:
        return None
    if len(stored) == len(incoming) and all(
        a == b or {a, b} <= UNDECODABLE for a, b in zip(stored, incoming, strict=True)
    ):
        return (
            f"{what} differs from the stored text only by undecodable characters (U+FFFD/'?'); the stored text is kept"
        )
    raise ImportRejected(f"{what} is already stored with a different text")


def _references(
    topic: Topic, references: list[formats.Reference], memo: _FileMemo
) -> tuple[dict[str, ReferenceSummary], list[str]]:
    """The topic's references by id, those of ``references`` it lacks created; and the notes of
    ``same_text_note`` on those it had."""
    key = ("references", topic.pk)
    stored = dict(memo.get(key) or {r.external_id: r for r in topic.referencesummarys.all()})
    notes = []
    for ref in references:
        if ref.id in stored:
            notes.append(
                same_text_note(stored[ref.id].text, ref.text, f"reference {ref.id} of topic {topic.external_id}")
            )
        else:
            stored[ref.id] = ReferenceSummary.objects.create(topic=topic, external_id=ref.id, text=ref.text)
    return memo.put(key, stored), [note for note in notes if note]


def _canonical_file_pyramid(pyramid: formats.Pyramid) -> tuple:
    return (
        tuple(sorted(r.id for r in pyramid.references)),
        tuple(
            sorted(
                (
                    s.uid,
                    s.label,
                    tuple(
                        sorted(tuple(sorted((p.reference, p.start, p.end) for p in c.parts)) for c in s.contributors)
                    ),
                )
                for s in pyramid.scus
            )
        ),
    )


def _canonical_form(pyramid: Pyramid, memo: _FileMemo) -> tuple:
    """``_canonical_db_pyramid`` of a stored pyramid at its revision, read once per import: the
    .pan files of a topic compare their pyramid with the one its .pyr stored (four queries and a
    sort of its few thousand parts each time); one this import stored is known without reading."""
    key = ("canonical", pyramid.pk, pyramid.revision)
    found = memo.get(key)
    return found if found is not None else memo.put(key, _canonical_db_pyramid(pyramid))


def _canonical_db_pyramid(pyramid: Pyramid) -> tuple:
    parts: dict[int, list] = {}
    for contributor_id, ref, start, end in ContributorPart.objects.filter(
        contributor__scu__pyramid=pyramid
    ).values_list("contributor_id", "reference__external_id", "start", "end"):
        parts.setdefault(contributor_id, []).append((ref, start, end))
    contributors: dict[int, list] = {}
    for scu_id, contributor_id in Contributor.objects.filter(scu__pyramid=pyramid).values_list("scu_id", "id"):
        contributors.setdefault(scu_id, []).append(tuple(sorted(parts.get(contributor_id, []))))
    return (
        tuple(sorted(pyramid.references.values_list("external_id", flat=True))),
        tuple(
            sorted(
                (uid, label, tuple(sorted(contributors.get(pk, []))))
                for pk, uid, label in pyramid.scus.values_list("id", "uid", "label")
            )
        ),
    )


def _pyramid(
    topic: Topic,
    pyramid: formats.Pyramid,
    legacy_issues,
    source: str,
    report: ImportReport,
    memo: _FileMemo,
    archived: Archived | None = None,
    is_pan: bool = False,
    against: Archived | None = None,
) -> tuple[Pyramid, bool]:
    """The stored pyramid this one is again (``formats.same_again``), or a new one (found once per
    import: ``memo``), and whether this file created it. ``archived``: the manifest's record of a
    .pyr; ``against``: of the pyramid a .pan was made against (its origin is that pyramid's).

    The .pan files of a topic made against one pyramid share one parsed pyramid
    (``ImportCache.parsed``): the first one finds (or creates) its stored pyramid; the others go
    straight to it, noting what checking its references noted once more, for each file. (The memo
    keeps the parsed object, so its id is not reused while the import runs.)"""
    made = archived or against
    arriving = pyramid_origin(made.user, made.source) if made else pyramid_origin(None, source, is_pan)
    seen = memo.get(("parsed", topic.pk, id(pyramid), arriving))
    created = False
    if seen is None:
        created_before = report.pyramids_created
        stored = _stored_pyramid(topic, pyramid, legacy_issues, source, arriving, report, memo, archived, is_pan)
        seen = memo.put(("parsed", topic.pk, id(pyramid), arriving), (pyramid, *stored))
        created = report.pyramids_created > created_before
    elif not is_pan:
        report.pyramids_reused += 1
    _, db_pyramid, notes = seen
    report.repairs += [f"{source}: {note}" for note in notes]
    return db_pyramid, created


def pyramid_origin(creator: str | None, source: str, is_pan: bool = False) -> formats.Origin:
    """The origin (``formats.same_again``) of a pyramid file, or of a stored pyramid by its creator and
    ``source``: a pyramid read from a .pan (``is_pan``), or stored from one, has no file of its own."""
    return formats.origin(creator, source, own_file=not (is_pan or source.lower().endswith(".pan")))


def _stored_pyramid_origin(pyramid: Pyramid) -> formats.Origin:
    return pyramid_origin(pyramid.creator and pyramid.creator.username, pyramid.source)


def _stored_pyramid(
    topic: Topic,
    pyramid: formats.Pyramid,
    legacy_issues,
    source: str,
    arriving: formats.Origin,
    report: ImportReport,
    memo: _FileMemo,
    archived: Archived | None = None,
    is_pan: bool = False,
) -> tuple[Pyramid, list[str]]:
    """``_pyramid``'s search (by ``arriving``, the origin) and creation."""
    references, notes = _references(topic, pyramid.references, memo)
    kept = archived.source if archived else source  # an archive's pyramid keeps its own source
    wanted = _canonical_file_pyramid(pyramid)
    key = ("pyramid", topic.pk, wanted, arriving)
    found = memo.get(key)
    made = memo.get(("made", topic.pk)) or frozenset()  # the pyramids this import stored
    if found is None:
        # the same path first: each file of a set imported again finds its own pyramid
        stored = sorted(
            ((c, _stored_pyramid_origin(c)) for c in topic.pyramids.select_related("creator")),
            key=lambda pair: arriving.name is not None and pair[1].name != arriving.name,
        )
        found = next(
            (
                candidate
                for candidate, was in stored
                if formats.same_again(
                    arriving, wanted, was, _canonical_form(candidate, memo), one_import=candidate.pk in made
                )
            ),
            None,
        )
    if found is not None:
        report.pyramids_reused += not is_pan
        return memo.put(key, found), notes
    creator = (
        _annotator(formats.Named(archived.user, ARCHIVE_MANIFEST), report, memo) if archived and archived.user else None
    )
    db_pyramid = Pyramid.objects.create(
        topic=topic, creator=creator, status=archived.status if archived else Pyramid.Status.DONE, source=kept[-500:]
    )
    if archived and archived.created_at:  # after the INSERT, which stamps its own moment
        Pyramid.objects.filter(pk=db_pyramid.pk).update(created_at=archived.created_at, updated_at=archived.updated_at)
    # Rows without signals (touch_pyramid below marks what is stale, once)
    Pyramid.references.through.objects.bulk_create(
        [Pyramid.references.through(pyramid=db_pyramid, referencesummary=references[r.id]) for r in pyramid.references]
    )
    legacy = legacy_flags(legacy_issues)
    report.legacy += [f"{source}: {issue.message}" for issue in legacy_issues]
    order = {r.id: i for i, r in enumerate(pyramid.references)}
    proposed = archived.proposed if archived and archived.proposed else None  # accepted proposals (version 5)
    scu_ids = insert_rows(
        SCU,
        ("pyramid", "uid", "label", "comment", "proposed"),
        [(db_pyramid.pk, s.uid, s.label, s.comment, bool(proposed) and s.uid in proposed.scus) for s in pyramid.scus],
        returning=True,
    )
    contributors, parts = [], []
    for scu_id, scu in zip(scu_ids, pyramid.scus, strict=True):
        for index, c in enumerate(scu.contributors):
            home = min(c.parts, key=lambda p: (order[p.reference], p.start)).reference  # as the parser decides
            issue = legacy.get((scu.uid, index), "")[:500]
            marked = bool(proposed) and not issue and (scu.uid, references[home].external_id) in proposed.contributors
            contributors.append((scu_id, references[home].pk, c.comment, issue, c.review[:500], marked))
            parts.append([(references[p.reference].pk, p.start, p.end) for p in c.parts])
    contributor_ids = insert_rows(
        Contributor,
        ("scu", "reference", "comment", "legacy_issue", "review_note", "proposed"),
        contributors,
        returning=True,
    )
    insert_rows(
        ContributorPart,
        ("contributor", "reference", "start", "end"),
        [(pk, *span) for pk, spans in zip(contributor_ids, parts, strict=True) for span in spans],
    )
    report.pyramids_created += 1
    report.scus += len(scu_ids)
    touch_pyramid(db_pyramid.pk, topic.pk)
    db_pyramid.revision += 1  # as touch_pyramid left the row (created here: nobody else moved it)
    memo.put(("canonical", db_pyramid.pk, db_pyramid.revision), wanted)  # the stored rows are these
    memo.put(("made", topic.pk), made | {db_pyramid.pk})
    return memo.put(key, db_pyramid), notes


def legacy_flags(issues: Iterable[formats.LegacyIssue]) -> dict[tuple[int, int], str]:
    """(SCU uid, contributor index) -> why that contributor is flagged.

    A cross-reference contributor is flagged; of several contributors from one reference, all but
    the first are (so at most one ordinary contributor per reference remains, as the database wants).
    """
    flags = {}
    for issue in issues:
        if issue.kind == "cross_reference_contributor":
            flags[(issue.scu_uid, issue.contributors[0])] = issue.message
        elif issue.kind == "same_reference_contributors":
            for index in issue.contributors[1:]:
                flags.setdefault((issue.scu_uid, index), issue.message)
    return flags


def _annotator(named: formats.Named | None, report: ImportReport, memo: _FileMemo) -> User | None:
    """The user the annotation is by (or the pyramid was built by): an existing user of that name, or a new *imported
    annotator identity*: inactive, with an unusable password, in the ``imported annotator``
    group — it cannot log in. One import creates at most ``IMPORT_MAX_NEW_ANNOTATORS``."""
    if named is None:
        return None
    user = memo.get(("user", named.value)) or User.objects.filter(username=named.value).first()
    if user is not None:
        return memo.put(("user", named.value), user)
    limit = settings.IMPORT_MAX_NEW_ANNOTATORS
    if len(report.annotators_created) >= limit:
        raise ImportRejected(
            f"its annotator {named.value!r} (from the {named.source}) would be a new annotator identity, and this "
            f"import already created {limit} (IMPORT_MAX_NEW_ANNOTATORS)"
        )
    user = User(username=named.value, is_active=False, last_name=IMPORTED_MARK)
    user.set_unusable_password()
    user.save()
    user.groups.add(role_group(IMPORTED_ANNOTATOR))
    report.annotators_created.append(named.value)
    return memo.put(("user", named.value), user)


def _peer(topic: Topic, peer_id: str, text: str, memo: _FileMemo, rows: PendingRows) -> PeerSummary:
    """The topic's peer with this id compared as a number (``01`` is ``1``); created as written
    (in ``rows``), its system being the comparable id (peer ``01`` of D0647 is system ``1`` of every topic)."""
    key = formats.peer_key(peer_id)
    peers = dict(
        memo.get(("peers", topic.pk)) or {formats.peer_key(p.external_id): p for p in topic.peersummarys.all()}
    )
    if key not in peers:
        peers[key] = rows.new_peer(
            PeerSummary(topic=topic, external_id=peer_id, text=text, system_id="" if key == peer_id else key)
        )
    return memo.put(("peers", topic.pk), peers)[key]


def _annotation(
    topic: Topic,
    pyramid: Pyramid,
    pan: formats.PeerAnnotationFile,
    who: formats.FileIdentity,
    source: str,
    report: ImportReport,
    memo: _FileMemo,
    rows: PendingRows,
    archived: Archived | None = None,
) -> bool:
    """Add the peer annotation to ``rows``; False when it is already there (stored, or earlier in this import)."""
    peer = _peer(topic, who.peer.value, pan.text, memo, rows)
    note = same_text_note(peer.text, pan.text, f"peer {peer.external_id} of topic {topic.external_id}")
    if note:
        report.repairs.append(f"{source}: {note}")
    annotator = _annotator(who.annotator, report, memo)
    arriving = formats.origin(annotator and annotator.username, source)
    content = _content(pan)
    key, peer_key = ("annotated", pyramid.pk), formats.peer_key(peer.external_id)
    annotated = memo.get(key)
    if annotated is None:
        annotated = _stored_annotations(pyramid)
    entries = annotated.get(peer_key, ())
    # The same file again (formats.same_again) adds nothing; one annotation per annotator of the
    # peer, the files that name none counting as one annotator.
    from_origin = [e for e in entries if formats.same_origin(arriving, e.origin, one_import=e.pk is None)]
    by_annotator = [e for e in entries if e.annotator_id == (annotator and annotator.pk) and e not in from_origin]
    for entry in from_origin + by_annotator:
        if _entry_content(entry) == content:
            report.annotations_existing += 1
            return False
    if from_origin or by_annotator:
        entry = (from_origin or by_annotator)[0]
        whose = f"annotator {entry.origin.annotator}" if entry.origin.annotator else "an unknown annotator"
        raise ImportRejected(
            f"peer {peer.external_id} of topic {topic.external_id} already has an annotation by {whose} "
            f"({entry.where}) with other matches: two annotators' files of one peer are never merged into one. "
            "If this file is another annotator's, name them (ANNOTATOR.TOPIC.M.LEN.ASSESSOR.PEER.pan, or an annotator "
            "table); if it is the same annotator's, that annotation changed since it was imported"
        )
    uids = memo.get(("uids", pyramid.pk)) or memo.put(("uids", pyramid.pk), dict(pyramid.scus.values_list("uid", "id")))
    unknown = sorted({m.scu_uid for m in pan.matches} - set(uids))
    if unknown:
        raise ImportRejected(f"matches SCU uid(s) {unknown} that are not in its pyramid")
    written = _Stored(arriving, annotator and annotator.pk, None, content, f"from {source}")
    memo.put(key, annotated | {peer_key: (*entries, written)})
    if (
        archived is not None
        and archived.matches is not None
        and (archived.matches, archived.non_matching) != (len(pan.matches), len(pan.non_matching))
    ):
        report.repairs.append(
            f"{source}: the archive's manifest says {archived.matches} matches and {archived.non_matching} "
            "non-matching "
            f"units, the file holds {len(pan.matches)} and {len(pan.non_matching)}: its scores differ from "
            "the archive's"
        )
    status = archived.status if archived is not None else PeerAnnotation.Status.DONE
    # Created at revision 1, as a change of its matches would leave it (``touch_annotation``) without the UPDATE.
    rows.new_annotation(
        PeerAnnotation(
            peer=peer, pyramid=pyramid, annotator=annotator, status=status, source=source[-500:], revision=1
        ),
        topic.pk,
        [(uids[m.scu_uid], m) for m in pan.matches] + [(None, m) for m in pan.non_matching],
        (archived.created_at, archived.updated_at) if archived is not None and archived.created_at else None,
    )
    report.annotations_created += 1
    return True


def _content(pan: formats.PeerAnnotationFile) -> tuple:
    """What an annotation says, comparable with ``_stored_content``:
    (SCU uid, 0 for non-matching; spans) of each match."""
    return tuple(
        sorted((m.scu_uid, tuple(sorted((p.start, p.end) for p in m.parts))) for m in (*pan.matches, *pan.non_matching))
    )


@dataclass(frozen=True)
class _Stored:
    """A peer annotation of the pyramid, as the identity rule compares it: its origin, its
    annotator, and its content (read when needed: ``pk`` of a stored one; ``content`` of one this
    import wrote), ``where`` it came from for the messages."""

    origin: formats.Origin
    annotator_id: int | None
    pk: int | None
    content: tuple | None
    where: str


def _stored_annotations(pyramid: Pyramid) -> dict[str, tuple[_Stored, ...]]:
    """The pyramid's annotations by their peer's comparable id (a peer of this import may not be written yet)."""
    found: dict[str, tuple[_Stored, ...]] = {}
    rows = pyramid.annotations.order_by("pk").values_list(
        "pk", "peer__external_id", "annotator_id", "annotator__username", "source"
    )
    for pk, peer_id, annotator_id, username, source in rows:
        where = f"from {source}" if source else "stored"
        entry = _Stored(formats.origin(username, source), annotator_id, pk, None, where)
        found[formats.peer_key(peer_id)] = (*found.get(formats.peer_key(peer_id), ()), entry)
    return found


def _entry_content(entry: _Stored) -> tuple:
    return entry.content if entry.content is not None else annotation_content(entry.pk)


def annotation_content(annotation_id: int) -> tuple:
    """``_content`` of a stored annotation: (SCU uid, 0 for non-matching; spans) of each match."""
    spans: dict[int, list] = {}
    parts = PeerMatchPart.objects.filter(match__annotation_id=annotation_id).values_list("match_id", "start", "end")
    for match_id, start, end in parts:
        spans.setdefault(match_id, []).append((start, end))
    matches = PeerMatch.objects.filter(annotation_id=annotation_id).values_list("id", "scu__uid")
    return tuple(sorted((uid or 0, tuple(sorted(spans.get(pk, [])))) for pk, uid in matches))


class PendingRows:
    """Peer annotations read but not written yet, with the peers they create: written by
    ``flush`` in a few multi-row INSERTs whatever their number (``bulk_create`` sets the ids of
    new peers, which their annotations then refer to)."""

    def __init__(self):
        self.peers: list[PeerSummary] = []
        self.annotations: list[tuple[PeerAnnotation, int, list[tuple[int | None, formats.PeerMatch]]]] = []
        self.times: list[
            tuple[PeerAnnotation, tuple]
        ] = []  # (annotation, (created_at, updated_at)) kept from an archive

    def new_peer(self, peer: PeerSummary) -> PeerSummary:
        self.peers.append(peer)
        return peer

    def new_annotation(
        self,
        annotation: PeerAnnotation,
        topic_id: int,
        matches: list[tuple[int | None, formats.PeerMatch]],
        times: tuple | None = None,
    ) -> None:
        """``matches``: (SCU id, match) pairs, the SCU id None for a non-matching unit; ``times``:
        its (created_at, updated_at) when they are kept (else the moment it is written)."""
        self.annotations.append((annotation, topic_id, matches))
        if times is not None:
            self.times.append((annotation, times))

    def absorb(self, other: PendingRows) -> None:
        self.peers += other.peers
        self.annotations += other.annotations
        self.times += other.times

    def flush(self) -> None:
        if self.peers:
            PeerSummary.objects.bulk_create(self.peers)
        if self.annotations:
            PeerAnnotation.objects.bulk_create([annotation for annotation, _, _ in self.annotations])
            now = PeerMatch._meta.get_field("created_at").get_db_prep_save(timezone.now(), connection)
            entries = [
                (annotation.pk, scu_id, match)
                for annotation, _, matches in self.annotations
                for scu_id, match in matches
            ]
            match_ids = insert_rows(
                PeerMatch,
                ("annotation", "scu", "review_note", "created_at"),
                [(pk, scu_id, match.review[:500], now) for pk, scu_id, match in entries],
                returning=True,
            )
            insert_rows(
                PeerMatchPart,
                ("match", "start", "end"),
                [
                    (pk, part.start, part.end)
                    for pk, (_, _, match) in zip(match_ids, entries, strict=True)
                    for part in match.parts
                ],
            )
            annotations_created(
                [annotation.pk for annotation, _, _ in self.annotations],
                {topic_id for _, topic_id, _ in self.annotations},
            )
        if self.times:  # after the INSERT, which stamps its own moment on every row
            for annotation, (created_at, updated_at) in self.times:
                annotation.created_at, annotation.updated_at = created_at, updated_at
            PeerAnnotation.objects.bulk_update(
                [annotation for annotation, _ in self.times], ["created_at", "updated_at"]
            )
        self.peers, self.annotations, self.times = [], [], []
