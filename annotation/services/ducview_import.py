"""Import DUCView files (.pyr pyramids, .pan peer annotations) into the database.

Each file is imported in its own transaction: a file that is rejected (malformed, hostile,
inconsistent with what is already stored) writes nothing, and the others still go in. The
report lists every repair the parser made, every part it could not place, every legacy rule
violation kept for the official scores, and every rejected file with the reason.

Identity, so that re-importing never duplicates: topics by (dataset, id), summaries by
(topic, id) and text, pyramids by content (a .pan carries a copy of its pyramid and is attached
to an identical pyramid of the topic if there is one), annotations by (peer, pyramid, annotator).
"""
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction

from .. import formats
from ..models import (
    SCU, Contributor, ContributorPart, Dataset, PeerAnnotation, PeerMatch, PeerMatchPart, PeerSummary, Pyramid,
    ReferenceSummary, Topic,
)
from ..roles import ANNOTATOR, role_group
from ..score_events import batched_scheduling, touch_annotation, touch_pyramid

EXTENSIONS = (".pyr", ".pan")


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
    repairs: list[str] = field(default_factory=list)
    unplaced: list[str] = field(default_factory=list)
    legacy: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return dict(self.__dict__)

    def summary_lines(self) -> list[str]:
        return [
            f"files: {self.files} ({len(self.rejected)} rejected)",
            f"topics created: {self.topics}",
            f"pyramids: {self.pyramids_created} created, {self.pyramids_reused} already present",
            f"SCUs created: {self.scus}",
            f"peer annotations: {self.annotations_created} created, {self.annotations_existing} already present",
            f"repairs: {len(self.repairs)}; parts not placed: {len(self.unplaced)}; legacy rule violations kept: {len(self.legacy)}",
        ]


def find_files(paths: Iterable[str | Path]) -> list[Path]:
    """Files to import: the given files, and .pyr/.pan files under given directories; pyramids first."""
    found = []
    for path in map(Path, paths):
        if path.is_dir():
            found += [p for p in path.rglob("*") if p.suffix in EXTENSIONS and p.is_file()]
        elif path.exists():
            found.append(path)
        else:
            raise FileNotFoundError(f"{path}: no such file or directory")
    return sorted(set(found), key=lambda p: (p.suffix != ".pyr", str(p)))


def import_paths(paths, dataset_name: str, progress: Callable[[Iterable], Iterable] = iter) -> ImportReport:
    files = find_files(paths)
    report = ImportReport()
    dataset, _ = Dataset.objects.get_or_create(name=dataset_name)
    with batched_scheduling():
        for path in progress(files):
            import_file(path.name, path.read_bytes(), dataset, report)
    return report


def import_file(name: str, data: bytes, dataset: Dataset, report: ImportReport) -> None:
    """Import one file whole or not at all; problems go to ``report``."""
    report.files += 1
    try:
        nist = formats.parse_nist_filename(name)
        if name.endswith(".pyr"):
            pyramid, parse_report = formats.parse_pyramid(data, max_bytes=settings.IMPORT_MAX_BYTES)
            with transaction.atomic():
                topic = _topic(dataset, nist.topic, report)
                _pyramid(topic, pyramid, parse_report.legacy, name, report)
        else:
            pan, parse_report = formats.parse_peer_annotation(data, max_bytes=settings.IMPORT_MAX_BYTES)
            with transaction.atomic():
                topic = _topic(dataset, nist.topic, report)
                db_pyramid = _pyramid(topic, pan.pyramid, parse_report.legacy, name, report)
                _annotation(topic, db_pyramid, pan, nist, name, report)
    except (formats.DucViewError, ImportRejected) as error:
        report.rejected.append(f"{name}: {error}")
        return
    report.repairs += [f"{name}: {r.message}" for r in parse_report.repairs]
    report.unplaced += [f"{name}: {r.message}" for r in parse_report.rejects]


def _topic(dataset: Dataset, external_id: str, report: ImportReport) -> Topic:
    topic, created = Topic.objects.get_or_create(dataset=dataset, external_id=external_id)
    report.topics += created
    return topic


UNDECODABLE = {"\ufffd", "?"}


def check_same_text(stored: str, incoming: str, what: str, source: str, report: ImportReport) -> None:
    """Accept the incoming copy of a stored text if it is the same text.

    DUC files copy texts into every .pan; some copies lost undecodable characters differently
    (U+FFFD in one file, '?' in another). Such copies are the same text: the stored one is kept
    and the difference reported. Anything else is a real conflict and rejects the file.
    """
    if stored == incoming:
        return
    if len(stored) == len(incoming) and all(a == b or {a, b} <= UNDECODABLE for a, b in zip(stored, incoming)):
        report.repairs.append(f"{source}: {what} differs from the stored text only by undecodable characters (U+FFFD/'?'); the stored text is kept")
        return
    raise ImportRejected(f"{what} is already stored with a different text")


def _references(topic: Topic, references: list[formats.Reference], source: str, report: ImportReport) -> dict[str, ReferenceSummary]:
    stored = {r.external_id: r for r in topic.referencesummarys.all()}
    for ref in references:
        if ref.id in stored:
            check_same_text(stored[ref.id].text, ref.text, f"reference {ref.id} of topic {topic.external_id}", source, report)
        else:
            stored[ref.id] = ReferenceSummary.objects.create(topic=topic, external_id=ref.id, text=ref.text)
    return stored


def _canonical_file_pyramid(pyramid: formats.Pyramid) -> tuple:
    return (
        tuple(sorted(r.id for r in pyramid.references)),
        tuple(sorted(
            (s.uid, s.label, tuple(sorted(tuple(sorted((p.reference, p.start, p.end) for p in c.parts)) for c in s.contributors)))
            for s in pyramid.scus
        )),
    )


def _canonical_db_pyramid(pyramid: Pyramid) -> tuple:
    parts: dict[int, list] = {}
    for contributor_id, ref, start, end in ContributorPart.objects.filter(contributor__scu__pyramid=pyramid).values_list(
        "contributor_id", "reference__external_id", "start", "end"
    ):
        parts.setdefault(contributor_id, []).append((ref, start, end))
    contributors: dict[int, list] = {}
    for scu_id, contributor_id in Contributor.objects.filter(scu__pyramid=pyramid).values_list("scu_id", "id"):
        contributors.setdefault(scu_id, []).append(tuple(sorted(parts.get(contributor_id, []))))
    return (
        tuple(sorted(pyramid.references.values_list("external_id", flat=True))),
        tuple(sorted((uid, label, tuple(sorted(contributors.get(pk, [])))) for pk, uid, label in pyramid.scus.values_list("id", "uid", "label"))),
    )


def _pyramid(topic: Topic, pyramid: formats.Pyramid, legacy_issues, source: str, report: ImportReport) -> Pyramid:
    """The stored pyramid identical to this one, or a new one."""
    references = _references(topic, pyramid.references, source, report)
    wanted = _canonical_file_pyramid(pyramid)
    for candidate in topic.pyramids.all():
        if _canonical_db_pyramid(candidate) == wanted:
            report.pyramids_reused += source.endswith(".pyr")
            return candidate
    db_pyramid = Pyramid.objects.create(topic=topic, status=Pyramid.Status.DONE, source=source)
    db_pyramid.references.set(references[r.id] for r in pyramid.references)
    legacy = legacy_flags(legacy_issues)
    report.legacy += [f"{source}: {issue.message}" for issue in legacy_issues]
    order = {r.id: i for i, r in enumerate(pyramid.references)}
    scus = SCU.objects.bulk_create([SCU(pyramid=db_pyramid, uid=s.uid, label=s.label, comment=s.comment) for s in pyramid.scus])
    contributors, parts = [], []
    for db_scu, scu in zip(scus, pyramid.scus):
        for index, c in enumerate(scu.contributors):
            home = min(c.parts, key=lambda p: (order[p.reference], p.start)).reference  # as the parser decides
            contributor = Contributor(
                scu=db_scu, reference=references[home], comment=c.comment,
                legacy_issue=legacy.get((scu.uid, index), "")[:500],
            )
            contributors.append(contributor)
            parts.append([(references[p.reference], p.start, p.end) for p in c.parts])
    Contributor.objects.bulk_create(contributors)
    ContributorPart.objects.bulk_create(
        ContributorPart(contributor=c, reference=ref, start=start, end=end) for c, spans in zip(contributors, parts) for ref, start, end in spans
    )
    report.pyramids_created += 1
    report.scus += len(scus)
    touch_pyramid(db_pyramid.pk, topic.pk)
    return db_pyramid


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


def _annotator(username: str | None) -> User | None:
    if not username:
        return None
    user, created = User.objects.get_or_create(username=username)
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
        user.groups.add(role_group(ANNOTATOR))
    return user


def _annotation(topic: Topic, pyramid: Pyramid, pan: formats.PeerAnnotationFile, nist, source: str, report: ImportReport) -> None:
    peer_id = nist.peer_key
    peer, _ = PeerSummary.objects.get_or_create(topic=topic, external_id=peer_id, defaults={"text": pan.text})
    check_same_text(peer.text, pan.text, f"peer {peer_id} of topic {topic.external_id}", source, report)
    annotator = _annotator(nist.annotator)
    annotation, created = PeerAnnotation.objects.get_or_create(
        peer=peer, pyramid=pyramid, annotator=annotator, defaults={"status": PeerAnnotation.Status.DONE, "source": source}
    )
    if not created:
        report.annotations_existing += 1
        return
    uids = dict(pyramid.scus.values_list("uid", "id"))
    unknown = sorted({m.scu_uid for m in pan.matches} - set(uids))
    if unknown:
        raise ImportRejected(f"matches SCU uid(s) {unknown} that are not in its pyramid")
    entries = [(uids[m.scu_uid], m) for m in pan.matches] + [(None, m) for m in pan.non_matching]
    matches = PeerMatch.objects.bulk_create(PeerMatch(annotation=annotation, scu_id=scu_id) for scu_id, _ in entries)
    PeerMatchPart.objects.bulk_create(
        PeerMatchPart(match=match, start=p.start, end=p.end) for match, (_, m) in zip(matches, entries) for p in m.parts
    )
    report.annotations_created += 1
    touch_annotation(annotation.pk, topic.pk)
