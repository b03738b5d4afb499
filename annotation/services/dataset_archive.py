"""A dataset as one zip: its pyramids (.pyr), peer annotations (.pan), scores and agreement.

Layout (NIST-like names, so ``import_ducview`` and ``POST /api/datasets/{id}/import/`` read the
archive back into an equal dataset)::

    pyramids/D0601.pyr                          one pyramid of topic D0601
    pans/114.D0601.M.250.X.10.pan               annotator 114's annotation of peer 10
    pyramids/pyramid-17/D0602.pyr               a topic with several pyramids: one folder each,
    pans/pyramid-17/114.D0602.M.250.X.10.pan    and its annotations beside it
    scores.csv, agreement.csv                   the rows of export_scores / export_agreement
    manifest.json                               what is where (database ids), annotator numbers,
                                                what could not be written and why

- An annotation imported from a NIST file keeps its original name (its ``source``). Others are named
  ``ANNOTATOR.TOPIC.M.LEN.X.PEER.pan`` with LEN the peer's length in words. NIST names carry numeric
  annotators only: a username made of digits is kept, any other gets a number from 1001 on (listed
  in ``manifest.json`` under ``annotators``); an annotation without annotator gets no prefix.
- A pyramid that DUCView cannot represent (e.g. an SCU without contributors), or whose topic or
  peer id cannot be a NIST name, is left out and listed under ``skipped``.

The zip is built in a spooled temporary file (in memory up to ``SPOOL_BYTES``, then on disk) and
streamed from there: DUC 2006 (20 pyramids, 462 annotations) is about 4.5 MB compressed.
"""
import json
import re
import tempfile
import zipfile
from collections import defaultdict
from io import StringIO

from scoring.model import Convention

from .. import formats
from ..formats import DucViewError
from ..models import Dataset, PeerAnnotation, Pyramid
from . import downloads, ducview_export, results

SPOOL_BYTES = 32 * 1024 * 1024
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
        if original.kind == "pan" and original.topic == topic and original.peer_key == formats.peer_key(peer) and original.annotator == number:
            return annotation.source.replace("\\", "/").rsplit("/", 1)[-1]
    except DucViewError:
        pass
    prefix = f"{number}." if number else ""
    return _checked(f"{prefix}{topic}.M.{len(annotation.peer.text.split())}.X.{peer}.pan", topic, peer)


def write_archive(stream, dataset: Dataset, pyramids, annotations, convention: Convention = Convention.NIST) -> dict:
    """Write the zip of ``pyramids`` and ``annotations`` (querysets of the dataset) to ``stream``; return the manifest."""
    pyramids = list(pyramids.select_related("topic").order_by("topic__external_id", "id"))
    annotations = list(annotations.select_related("peer__topic", "annotator", "pyramid").order_by(
        "peer__topic__external_id", "peer__external_id", "annotator__username", "id"))
    numbers = annotator_numbers(a.annotator.username for a in annotations if a.annotator_id)
    per_topic = defaultdict(set)
    for pyramid in pyramids:
        per_topic[pyramid.topic_id].add(pyramid.pk)
    for annotation in annotations:
        per_topic[annotation.pyramid.topic_id].add(annotation.pyramid_id)

    def folder(kind: str, pyramid_id: int, topic_id: int) -> str:
        return f"{kind}/pyramid-{pyramid_id}/" if len(per_topic[topic_id]) > 1 else f"{kind}/"

    manifest = {
        "dataset": dataset.name, "convention": Convention(convention).value,
        **downloads.provenance(convention=convention), "files": [], "skipped": [],
        "annotators": {number: name for name, number in numbers.items() if number != name},
    }
    written = set()

    def add(archive, path: str, data: bytes, entry: dict) -> None:
        if path in written:
            manifest["skipped"].append({**entry, "reason": f"{path} is already in the archive"})
            return
        written.add(path)
        archive.writestr(path, data)
        manifest["files"].append({"name": path, **entry})

    with zipfile.ZipFile(stream, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for pyramid in pyramids:
            entry = {"kind": "pyramid", "id": pyramid.pk, "topic": pyramid.topic.external_id}
            try:
                path = folder("pyramids", pyramid.pk, pyramid.topic_id) + pyramid_name(pyramid)
                add(archive, path, ducview_export.export_pyramid(pyramid), entry)
            except DucViewError as error:
                manifest["skipped"].append({**entry, "reason": str(error)})
        for annotation in annotations:
            username = annotation.annotator.username if annotation.annotator_id else None
            entry = {"kind": "annotation", "id": annotation.pk, "topic": annotation.peer.topic.external_id,
                     "peer": annotation.peer.external_id, "annotator": username, "pyramid": annotation.pyramid_id}
            try:
                path = folder("pans", annotation.pyramid_id, annotation.pyramid.topic_id) + annotation_name(annotation, numbers.get(username))
                add(archive, path, ducview_export.export_annotation(annotation), entry)
            except DucViewError as error:
                manifest["skipped"].append({**entry, "reason": str(error)})
        topics = dataset.topics.all()
        for name, rows_of, keys in [("scores.csv", results.score_rows, results.SCORE_KEYS),
                                    ("agreement.csv", results.agreement_rows, results.AGREEMENT_KEYS)]:
            out = StringIO()
            results.write_rows(out, rows_of(topics, convention), keys, "csv")
            archive.writestr(name, out.getvalue())
        archive.writestr("manifest.json", json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    return manifest


def build_archive(dataset: Dataset, pyramids, annotations, convention: Convention = Convention.NIST):
    """The archive in a spooled temporary file positioned at its start, and its manifest."""
    spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)
    manifest = write_archive(spool, dataset, pyramids, annotations, convention)
    spool.seek(0)
    return spool, manifest
