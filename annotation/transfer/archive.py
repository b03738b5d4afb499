"""A dataset as one zip: its pyramids (.pyr), peer annotations (.pan), scores and agreement.

Layout (NIST-like names, so ``import_ducview`` and ``POST /api/datasets/{id}/import/`` read the
archive back into an equal dataset)::

    pyramids/D0601.pyr                          one pyramid of topic D0601
    pans/114.D0601.M.250.X.10.pan               annotator 114's annotation of peer 10
    pyramids/pyramid-17/D0602.pyr               a topic with several pyramids: one folder each,
    pans/pyramid-17/114.D0602.M.250.X.10.pan    and its annotations beside it
    scores.csv, agreement.csv                   the rows of export_scores / export_agreement
    manifest.json                               what is where (database ids), annotator numbers,
                                                what could not be written and why, and what a
                                                .pan cannot say of its annotation (below)

- An annotation imported from a NIST file keeps its original name (its ``source``). Others are named
  ``ANNOTATOR.TOPIC.M.LEN.X.PEER.pan`` with LEN the peer's length in words. NIST names carry numeric
  annotators only: a username made of digits is kept, any other gets a number from 1001 on (listed
  in ``manifest.json`` under ``annotators``); an annotation without annotator gets no prefix.
- A pyramid that DUCView cannot represent (e.g. an SCU without contributors), or whose topic or
  peer id cannot be a NIST name, is left out and listed under ``skipped``.

What counts (``results.counted``) rests on more than the matches a .pan holds, so each
annotation's entry in ``manifest.json`` (``"version": 2``) also carries its ``status``, its
``annotator`` (username), ``created_at`` and ``updated_at`` (ISO 8601; ``updated_at`` is when it was
last saved, for a finished one when it was finished), and its ``matches`` (SCU matches, repetitions
included) and ``non_matching`` counts, ``empty`` when both are 0, and its ``pyramid`` (the ``id``
of the pyramid entry it was made against: the import puts it on that pyramid, not on another
annotator's identical one); each pyramid's entry its ``status``, ``creator`` (whose name the
references' score rows carry) and times. Uploading the zip
(``upload_import``) restores them: an annotation that was only opened comes back unfinished and
empty, so it counts nowhere, as in the source. The edit history (an audit log of the source
instance) stays behind.

Version 3 adds each pyramid's ``source`` (where it came from, which names a pyramid without
creator on the pages and in construction agreement; the import keeps it rather than the archive
path) and what makes an annotation an adjudicated version (``adjudication/``): the
entry of an adjudicated version (annotator null, a .pan like any other) carries ``adjudication``:
its ``adjudicator`` (username or null), ``sources`` (the archive paths of the annotators' versions
it settles), ``changed`` (those of them changed since it was adjudicated), ``decisions`` (item key
-> a source's path, ``both`` or ``neither``) and its times. The import links it back to the
imported sources, so scores rest on the same versions as in the source (the ``version`` column).
An adjudication whose sources are not all in the archive is left out (listed under ``skipped``)
and its version comes back as an annotation without annotator. Several pyramids of a topic (one
per annotator, compared by construction agreement) each get their folder (above).

Version 4 adds the topic's adjudicated pyramid (``adjudication/pyramids.py``): its entry (creator
null) carries ``adjudication``: ``adjudicator``, ``sources`` (the archive paths of the two pyramids it
settles, A first, as the decisions' keys say: ``PyramidAdjudication.source_order``, else the order of
their ids; the import records that order again), ``changed`` (those changed
since), ``decisions`` and ``uids`` as stored, and its times. The import makes it the topic's
adjudicated pyramid again (``restore_pyramid_adjudications``), so scores rest on it and construction
agreement leaves it out, as in the source; one whose sources are not both in the archive is left out
(``skipped``) and comes back as a pyramid without creator. A version 3 archive has none: its
adjudicated pyramid comes back as a pyramid without creator.

Version 5 adds what of a pyramid came from the assisted builder's accepted proposals (issue 30
§2), which a .pyr cannot say (DUCView's format has no place for it, and the .pyr files stay exactly
what DUCView writes): a pyramid entry holding any carries ``proposed``: ``scus`` (the uids of the
SCUs accepted as proposed) and ``contributors`` (``[uid, reference]`` of each contributor accepted
as proposed: an SCU has one ordinary contributor per reference). The import marks them again.
Archives of earlier versions have none: nothing is marked.

An archive written before version 2 carries none of these: its annotations are imported as done
when its ``scores.csv`` lists their score (exactly the annotations that counted in the source),
else as in progress; without a ``scores.csv``, as done (as NIST files are); its pyramids as done,
without creator; the times are the import's.

The zip is built in a spooled temporary file (in memory up to ``SPOOL_BYTES``, then on disk) and
streamed from there: DUC 2006 (20 pyramids, 462 annotations) is about 4.5 MB compressed.
"""

import csv
import dataclasses
import json
import re
import tempfile
import zipfile
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from io import StringIO

from annotation import formats
from annotation.adjudication.models import Adjudication, PyramidAdjudication
from annotation.api import downloads
from annotation.corpus.models import Dataset
from annotation.formats import DucViewError
from annotation.peers import results
from annotation.peers.models import PeerAnnotation
from annotation.peers.scoring_inputs import load_annotations
from annotation.pyramids.models import Contributor, Pyramid
from annotation.transfer import ducview_export
from scoring.model import Convention

SPOOL_BYTES = 32 * 1024 * 1024
MANIFEST = "manifest.json"
SCORES = "scores.csv"
MANIFEST_VERSION = 5
READABLE_VERSIONS = (1, 2, 3, 4, MANIFEST_VERSION)
FIRST_FREE_ANNOTATOR = 1001
_DIGITS = re.compile(r"[0-9]+")


def annotator_numbers(usernames) -> dict[str, str]:
    """username -> the number written in NIST file names (digit usernames are their own number)."""
    usernames = sorted(set(usernames))
    taken = {name for name in usernames if _DIGITS.fullmatch(name)}
    numbers, next_free = {}, FIRST_FREE_ANNOTATOR
    for name in usernames:
        if name in taken:
            numbers[name] = name
            continue
        while str(next_free) in taken:
            next_free += 1
        numbers[name] = str(next_free)
        taken.add(numbers[name])
    return numbers


def _checked(name: str, topic: str, peer: str | None = None) -> str:
    """``name`` if it reads back as this topic (and peer), else DucViewError."""
    parsed = formats.parse_nist_filename(name)
    if parsed.topic != topic or (peer is not None and parsed.peer != peer):
        raise DucViewError(f"{name!r} would be read back as topic {parsed.topic!r}, peer {parsed.peer!r}")
    return name


def pyramid_name(pyramid: Pyramid) -> str:
    return _checked(f"{pyramid.topic.external_id}.pyr", pyramid.topic.external_id)


def annotation_name(annotation: PeerAnnotation, number: str | None) -> str:
    """The original NIST name when it still says who, what and which peer; else a new NIST-like one."""
    topic, peer = annotation.peer.topic.external_id, annotation.peer.external_id
    try:
        original = formats.parse_nist_filename(annotation.source)
        if (
            original.kind == "pan"
            and original.topic == topic
            and original.peer_key == formats.peer_key(peer)
            and original.annotator == number
        ):
            return annotation.source.replace("\\", "/").rsplit("/", 1)[-1]
    except DucViewError:
        pass
    prefix = f"{number}." if number else ""
    return _checked(f"{prefix}{topic}.M.{len(annotation.peer.text.split())}.X.{peer}.pan", topic, peer)


def write_archive(stream, dataset: Dataset, pyramids, annotations, convention: Convention = Convention.NIST) -> dict:
    """Write the zip of ``pyramids`` and ``annotations`` (querysets of the dataset) to ``stream``;
    return the manifest."""
    pyramids = list(pyramids.select_related("topic", "creator").order_by("topic__external_id", "id"))
    annotations = list(
        annotations.select_related("peer__topic", "annotator", "pyramid").order_by(
            "peer__topic__external_id", "peer__external_id", "annotator__username", "id"
        )
    )
    numbers = annotator_numbers(a.annotator.username for a in annotations if a.annotator_id)
    per_topic = defaultdict(set)
    for pyramid in pyramids:
        per_topic[pyramid.topic_id].add(pyramid.pk)
    for annotation in annotations:
        per_topic[annotation.pyramid.topic_id].add(annotation.pyramid_id)

    def folder(kind: str, pyramid_id: int, topic_id: int) -> str:
        return f"{kind}/pyramid-{pyramid_id}/" if len(per_topic[topic_id]) > 1 else f"{kind}/"

    counts = load_annotations(a.pk for a in annotations)
    manifest = {
        "version": MANIFEST_VERSION,
        "dataset": dataset.name,
        "convention": Convention(convention).value,
        **downloads.provenance(convention=convention),
        "files": [],
        "skipped": [],
        "annotators": {number: name for name, number in numbers.items() if number != name},
    }
    written = set()
    formatted: dict[int, formats.Pyramid] = {}  # pyramid id -> the pyramid as its .pyr and every .pan hold it

    def pyramid_format(pyramid) -> formats.Pyramid:
        if pyramid.pk not in formatted:
            formatted[pyramid.pk] = ducview_export.pyramid_to_format(pyramid)
        return formatted[pyramid.pk]

    paths: dict[int, tuple[str, dict]] = {}  # annotation id -> its path and manifest entry
    pyramid_paths: dict[int, tuple[str, dict]] = {}  # pyramid id -> its path and manifest entry

    def add(archive, path: str, data: bytes, entry: dict) -> None:
        if path in written:
            manifest["skipped"].append({**entry, "reason": f"{path} is already in the archive"})
            return
        written.add(path)
        archive.writestr(path, data)
        manifest["files"].append({"name": path, **entry})
        (paths if entry["kind"] == "annotation" else pyramid_paths)[entry["id"]] = path, manifest["files"][-1]

    with zipfile.ZipFile(stream, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for pyramid in pyramids:
            entry = {
                "kind": "pyramid",
                "id": pyramid.pk,
                "topic": pyramid.topic.external_id,
                "creator": pyramid.creator.username if pyramid.creator_id else None,
                "source": pyramid.source,
                **_state(pyramid),
                **_provenance(pyramid),
            }
            try:
                path = folder("pyramids", pyramid.pk, pyramid.topic_id) + pyramid_name(pyramid)
                add(archive, path, formats.write_pyramid(pyramid_format(pyramid)), entry)
            except DucViewError as error:
                manifest["skipped"].append({**entry, "reason": str(error)})
        for annotation in annotations:
            username = annotation.annotator.username if annotation.annotator_id else None
            entry = {
                "kind": "annotation",
                "id": annotation.pk,
                "topic": annotation.peer.topic.external_id,
                "peer": annotation.peer.external_id,
                "annotator": username,
                "pyramid": annotation.pyramid_id,
                **_counting_facts(annotation, counts[annotation.pk]),
            }
            try:
                path = folder("pans", annotation.pyramid_id, annotation.pyramid.topic_id) + annotation_name(
                    annotation, numbers.get(username)
                )
                add(
                    archive,
                    path,
                    ducview_export.export_annotation(annotation, pyramid_format(annotation.pyramid)),
                    entry,
                )
            except DucViewError as error:
                manifest["skipped"].append({**entry, "reason": str(error)})
        _add_adjudications(manifest, paths)
        _add_pyramid_adjudications(manifest, pyramid_paths)
        topics = dataset.topics.all()
        for name, rows_of, keys in [
            (SCORES, results.score_rows, results.SCORE_KEYS),
            ("agreement.csv", results.agreement_rows, results.AGREEMENT_KEYS),
        ]:
            out = StringIO()
            results.write_rows(out, rows_of(topics, convention), keys, "csv")
            archive.writestr(name, out.getvalue())
        archive.writestr(MANIFEST, json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    return manifest


def _adjudication_entry(record, sources: list, paths: dict[int, tuple[str, dict]]) -> dict:
    """What both kinds of adjudication write alike: who, the sources by their archive paths, those
    changed since (their revision no longer the one decided on), and the times."""
    return {
        "adjudicator": record.adjudicator.username if record.adjudicator_id else None,
        "sources": [paths[s.pk][0] for s in sources],
        "changed": [paths[s.pk][0] for s in sources if record.source_revisions.get(str(s.pk)) != s.revision],
        "created_at": record.created_at.isoformat(),
        "updated_at": record.updated_at.isoformat(),
    }


def _add_adjudications(manifest: dict, paths: dict[int, tuple[str, dict]]) -> None:
    """The ``adjudication`` of each adjudicated version written, its sources named by their paths."""
    records = (
        Adjudication.objects.filter(annotation_id__in=list(paths))
        .select_related("adjudicator")
        .prefetch_related("sources")
        .order_by("annotation_id")
    )
    for record in records:
        path, entry = paths[record.annotation_id]
        sources = sorted(record.sources.all(), key=lambda s: s.pk)
        missing = [s.pk for s in sources if s.pk not in paths]
        if missing:
            manifest["skipped"].append(
                {
                    "kind": "adjudication",
                    "name": path,
                    "reason": (
                        f"the annotators' versions it settles (annotations {missing}) are not in the archive: "
                        "it comes back as an annotation without annotator"
                    ),
                }
            )
            continue
        named = {str(s.pk): paths[s.pk][0] for s in sources}
        entry["adjudication"] = _adjudication_entry(record, sources, paths) | {
            "decisions": {key: named.get(choice, choice) for key, choice in sorted(record.decisions.items())}
        }


def _add_pyramid_adjudications(manifest: dict, paths: dict[int, tuple[str, dict]]) -> None:
    """The ``adjudication`` of each adjudicated pyramid written (version 4), its source pyramids
    named by their paths, A first (which is which of A and B the decisions' keys say: the record's
    ``source_order``; by id for a record saved before it was kept)."""
    records = (
        PyramidAdjudication.objects.filter(pyramid_id__in=list(paths))
        .select_related("adjudicator")
        .prefetch_related("sources")
        .order_by("pyramid_id")
    )
    for record in records:
        path, entry = paths[record.pyramid_id]
        side = {pk: i for i, pk in enumerate(record.source_order)}
        sources = sorted(record.sources.all(), key=lambda s: (side.get(s.pk, len(side)), s.pk))
        missing = [s.pk for s in sources if s.pk not in paths]
        if missing:
            manifest["skipped"].append(
                {
                    "kind": "pyramid adjudication",
                    "name": path,
                    "reason": (
                        f"the pyramids it settles (pyramids {missing}) are not in the archive: "
                        "it comes back as a pyramid without creator, not the topic's adjudicated pyramid"
                    ),
                }
            )
            continue
        entry["adjudication"] = _adjudication_entry(record, sources, paths) | {
            "decisions": dict(sorted(record.decisions.items())),
            "uids": dict(sorted(record.uids.items())),
        }


def _provenance(pyramid: Pyramid) -> dict:
    """``{"proposed": {scus, contributors}}`` of a pyramid holding accepted proposals (else nothing)."""
    scus = list(pyramid.scus.filter(proposed=True).order_by("uid").values_list("uid", flat=True))
    contributors = [
        [uid, reference]
        for uid, reference in Contributor.objects.filter(scu__pyramid=pyramid, proposed=True, legacy_issue="")
        .order_by("scu__uid", "reference__external_id")
        .values_list("scu__uid", "reference__external_id")
    ]
    return {"proposed": {"scus": scus, "contributors": contributors}} if scus or contributors else {}


def _counting_facts(annotation: PeerAnnotation, scored) -> dict:
    """What decides whether and how the annotation counts, beyond the matches its .pan holds."""
    matches = sum(scored.matches.values())
    return {
        **_state(annotation),
        "matches": matches,
        "non_matching": scored.non_matching,
        "empty": matches + scored.non_matching == 0,
    }


def _state(document) -> dict:
    """Status and times of an annotation or a pyramid."""
    return {
        "status": document.status,
        "created_at": document.created_at.isoformat(),
        "updated_at": document.updated_at.isoformat(),
    }


def build_archive(dataset: Dataset, pyramids, annotations, convention: Convention = Convention.NIST):
    """The archive in a spooled temporary file positioned at its start, and its manifest."""
    spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)
    manifest = write_archive(spool, dataset, pyramids, annotations, convention)
    spool.seek(0)
    return spool, manifest


# --- Reading an archive back ----------------------------------------------------------------


class ManifestError(ValueError):
    """The archive's manifest.json cannot be read; the message says where and why."""


@dataclass(frozen=True)
class ArchivedAdjudication:
    """What makes an archived annotation an adjudicated version (manifest version 3): sources and
    decisions name the annotators' versions by their archive paths."""

    adjudicator: str | None
    sources: tuple[str, ...]
    changed: frozenset[str]
    decisions: tuple[tuple[str, str], ...]
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class ArchivedPyramidAdjudication:
    """What makes an archived pyramid its topic's adjudicated pyramid (manifest version 4): sources
    name the annotators' pyramids by their archive paths (A first); decisions and uids as stored."""

    adjudicator: str | None
    sources: tuple[str, ...]
    changed: frozenset[str]
    decisions: tuple[tuple[str, str], ...]
    uids: tuple[tuple[str, int], ...]
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True)
class ArchivedProvenance:
    """What of an archived pyramid came from the assisted builder's accepted proposals (version 5):
    SCUs by uid, contributors by (uid, reference name)."""

    scus: frozenset[int]
    contributors: frozenset[tuple[int, str]]


@dataclass(frozen=True)
class Archived:
    """What an archive's manifest says of one .pan or .pyr: how the import stores its annotation
    or pyramid. ``user``: the annotator of an annotation, the creator of a pyramid. The times and
    counts are None in archives written before version 2 (counts: for a pyramid too)."""

    status: str
    user: str | None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    matches: int | None = None
    non_matching: int | None = None
    adjudication: ArchivedAdjudication | None = None
    # a pyramid's own source (version 3), which names it where it has no creator; else its archive path
    source: str | None = None
    # what makes it the topic's adjudicated pyramid (version 4)
    pyramid_adjudication: ArchivedPyramidAdjudication | None = None
    topic: str | None = None
    # the archive path of the pyramid an annotation was made against, when the archive holds it
    pyramid: str | None = None
    # what of a pyramid came from accepted proposals (version 5)
    proposed: ArchivedProvenance | None = None


def read_manifest(manifest: bytes, scores: bytes | None = None) -> dict[str, Archived]:
    """archive path of each .pan and .pyr -> what the manifest says of it (``scores``: the
    archive's scores.csv, read only for an archive written before version 2). ManifestError if it
    is not a manifest this app can read (nothing is imported then)."""
    try:
        document = json.loads(manifest.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise ManifestError(f"{MANIFEST} is not valid JSON ({str(error)[:200]})") from None
    if not isinstance(document, dict) or not isinstance(document.get("files"), list):
        raise ManifestError(f"{MANIFEST} has no list of files: not the manifest of a dataset archive")
    version = document.get("version", 1)
    if version not in READABLE_VERSIONS:
        raise ManifestError(
            f"{MANIFEST} is of version {str(version)[:20]!r}; this app reads versions 1 to {MANIFEST_VERSION}"
        )
    counted = _counted_in(scores) if version == 1 and scores is not None else None
    records = {}
    pyramid_paths: dict[int, str] = {}  # a pyramid's id in the source -> its archive path
    made_against: dict[str, int] = {}  # an annotation's archive path -> its pyramid's id in the source
    for index, entry in enumerate(document["files"]):
        where = f"{MANIFEST}, files[{index}]"
        kind = entry.get("kind") if isinstance(entry, dict) else None
        if kind not in ("annotation", "pyramid"):
            continue
        name, user = entry.get("name"), entry.get("annotator" if kind == "annotation" else "creator")
        if not isinstance(name, str) or not (user is None or isinstance(user, str) and user.strip()):
            raise ManifestError(f"{where}: a file's entry needs its name and a user name (or null)")
        if version == 1 and kind == "pyramid":
            continue  # imported as NIST pyramids are: done, without creator
        if version == 1:
            listed = counted is None or (entry.get("topic"), entry.get("peer"), user or "") in counted
            records[name] = Archived(PeerAnnotation.Status.DONE if listed else PeerAnnotation.Status.IN_PROGRESS, user)
            continue
        statuses = (PeerAnnotation if kind == "annotation" else Pyramid).Status.values
        if entry.get("status") not in statuses:
            raise ManifestError(
                f"{where}: status {str(entry.get('status'))[:40]!r} is not one of {', '.join(statuses)}"
            )
        counts = (
            [_count(entry, "matches", where), _count(entry, "non_matching", where)]
            if kind == "annotation"
            else [None, None]
        )
        adjudication = None
        if kind == "annotation" and entry.get("adjudication") is not None:
            if user is not None:
                raise ManifestError(f"{where}: an adjudicated version is nobody's own work: its annotator must be null")
            adjudication = _adjudication(entry["adjudication"], where)
        source = entry.get("source") if kind == "pyramid" and version >= 3 else None
        if not (source is None or isinstance(source, str) and len(source) <= 500):
            raise ManifestError(f"{where}: source must be a text of at most 500 characters or null")
        if kind == "pyramid":
            source = name if source is None else source
        if type(entry.get("id" if kind == "pyramid" else "pyramid")) is int:
            if kind == "pyramid":
                pyramid_paths[entry["id"]] = name
            else:
                made_against[name] = entry["pyramid"]
        pyramid_adjudication = None
        if kind == "pyramid" and entry.get("adjudication") is not None:
            if version < 4:
                raise ManifestError(
                    f"{where}: an adjudicated pyramid is described from version 4 on, not in version {version}"
                )
            if user is not None:
                raise ManifestError(f"{where}: an adjudicated pyramid is nobody's own work: its creator must be null")
            pyramid_adjudication = _pyramid_adjudication(entry["adjudication"], where)
        topic = entry.get("topic") if isinstance(entry.get("topic"), str) else None
        proposed = None
        if kind == "pyramid" and entry.get("proposed") is not None:
            if version < 5:
                raise ManifestError(
                    f"{where}: accepted proposals are described from version 5 on, not in version {version}"
                )
            proposed = _provenance_of(entry["proposed"], where)
        records[name] = Archived(
            entry["status"],
            user,
            _moment(entry, "created_at", where),
            _moment(entry, "updated_at", where),
            *counts,
            adjudication,
            source,
            pyramid_adjudication,
            topic,
            proposed=proposed,
        )
    for name, pyramid_id in made_against.items():  # each annotation stays on the pyramid it was made against
        if pyramid_paths.get(pyramid_id) in records:
            records[name] = dataclasses.replace(records[name], pyramid=pyramid_paths[pyramid_id])
    for name, record in records.items():
        for source in record.pyramid_adjudication.sources if record.pyramid_adjudication else ():
            other = records.get(source)
            if other is None or other.matches is not None or other.pyramid_adjudication is not None or source == name:
                raise ManifestError(
                    f"{MANIFEST}: the adjudicated pyramid {name} settles {source[:200]!r}, which is no other "
                    "pyramid in the archive"
                )
            if other.topic != record.topic:
                raise ManifestError(
                    f"{MANIFEST}: the adjudicated pyramid {name} settles {source[:200]!r}, a pyramid of another topic"
                )
        for source in record.adjudication.sources if record.adjudication else ():
            if records.get(source) is None or records[source].user is None:
                raise ManifestError(
                    f"{MANIFEST}: the adjudication of {name} settles {source[:200]!r}, which is no annotator's "
                    "annotation in the archive"
                )
    return records


def _adjudication(value, where: str) -> ArchivedAdjudication:
    where = f"{where}, adjudication"
    if not isinstance(value, dict):
        raise ManifestError(f"{where} must be an object")
    adjudicator, sources, changed, decisions = (
        value.get(k) for k in ("adjudicator", "sources", "changed", "decisions")
    )
    if not (adjudicator is None or isinstance(adjudicator, str) and adjudicator.strip()):
        raise ManifestError(f"{where}: adjudicator must be a user name or null")
    if not (
        isinstance(sources, list)
        and len(sources) >= 2
        and all(isinstance(s, str) for s in sources)
        and len(set(sources)) == len(sources)
    ):
        raise ManifestError(f"{where}: sources must list the paths of the two or more annotators' versions it settles")
    if not (isinstance(changed, list) and all(isinstance(c, str) and c in sources for c in changed)):
        raise ManifestError(f"{where}: changed must list some of its sources")
    choices = set(sources) | {"both", "neither"}
    if not (
        isinstance(decisions, dict)
        and all(isinstance(k, str) and isinstance(v, str) and v in choices for k, v in decisions.items())
    ):
        raise ManifestError(f"{where}: decisions must map each item to one of its sources, 'both' or 'neither'")
    return ArchivedAdjudication(
        adjudicator,
        tuple(sources),
        frozenset(changed),
        tuple(sorted(decisions.items())),
        _moment(value, "created_at", where),
        _moment(value, "updated_at", where),
    )


def _pyramid_adjudication(value, where: str) -> ArchivedPyramidAdjudication:
    where = f"{where}, adjudication"
    if not isinstance(value, dict):
        raise ManifestError(f"{where} must be an object")
    adjudicator, sources, changed, decisions, uids = (
        value.get(k) for k in ("adjudicator", "sources", "changed", "decisions", "uids")
    )
    if not (adjudicator is None or isinstance(adjudicator, str) and adjudicator.strip()):
        raise ManifestError(f"{where}: adjudicator must be a user name or null")
    if not (
        isinstance(sources, list)
        and len(sources) == 2
        and all(isinstance(s, str) for s in sources)
        and len(set(sources)) == 2
    ):
        raise ManifestError(f"{where}: sources must list the paths of the two pyramids it settles")
    if not (isinstance(changed, list) and all(isinstance(c, str) and c in sources for c in changed)):
        raise ManifestError(f"{where}: changed must list some of its sources")
    if not (
        isinstance(decisions, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in decisions.items())
    ):
        raise ManifestError(f"{where}: decisions must map each item to a choice (text)")
    if not (isinstance(uids, dict) and all(isinstance(k, str) and type(v) is int and v > 0 for k, v in uids.items())):
        raise ManifestError(
            f"{where}: uids must map each item to the uid (a whole number above 0) of the SCU it became"
        )
    return ArchivedPyramidAdjudication(
        adjudicator,
        tuple(sources),
        frozenset(changed),
        tuple(sorted(decisions.items())),
        tuple(sorted(uids.items())),
        _moment(value, "created_at", where),
        _moment(value, "updated_at", where),
    )


def _provenance_of(value, where: str) -> ArchivedProvenance:
    where = f"{where}, proposed"
    scus, contributors = (value.get(k) for k in ("scus", "contributors")) if isinstance(value, dict) else (None, None)
    if not (isinstance(scus, list) and all(type(u) is int and u > 0 for u in scus)):
        raise ManifestError(f"{where}: scus must list SCU uids (whole numbers above 0)")
    if not (
        isinstance(contributors, list)
        and all(
            isinstance(c, list) and len(c) == 2 and type(c[0]) is int and c[0] > 0 and isinstance(c[1], str)
            for c in contributors
        )
    ):
        raise ManifestError(f"{where}: contributors must list [SCU uid, reference name] pairs")
    return ArchivedProvenance(frozenset(scus), frozenset((uid, ref) for uid, ref in contributors))


def _moment(entry: dict, key: str, where: str) -> datetime:
    try:
        moment = datetime.fromisoformat(entry[key])
    except (KeyError, TypeError, ValueError):
        raise ManifestError(f"{where}: {key} must be an ISO 8601 date and time") from None
    if moment.tzinfo is None:
        raise ManifestError(f"{where}: {key} must say its time zone")
    return moment


def _count(entry: dict, key: str, where: str) -> int:
    value = entry.get(key)
    if type(value) is not int or value < 0:
        raise ManifestError(f"{where}: {key} must be a count (a whole number, 0 or more)")
    return value


def _counted_in(scores: bytes) -> set[tuple[str, str, str]]:
    """(topic, peer, annotator) of every peer row of a scores.csv: the annotations that counted."""
    try:
        rows = csv.DictReader(StringIO(scores.decode("utf-8")))
        return {
            (row.get("topic"), row.get("summary"), row.get("annotator") or "")
            for row in rows
            if row.get("kind") == "peer"
        }
    except (UnicodeDecodeError, csv.Error) as error:
        raise ManifestError(f"{SCORES} cannot be read ({error})") from None
