"""Add topics with their reference and peer summaries from text: pasted or uploaded (one text per
kind, split by a header pattern) or a zip of text files named by a pattern.

Two steps, so the coordinator sees what will be written before anything is: ``plan_*`` reads the
input and compares it with what is stored (new, already present, or in conflict), ``apply``
writes a plan that has no problems, all of it or nothing (one transaction; stored texts are fixed,
so a summary that exists with another text is a problem, never overwritten). Applying the same
input twice adds nothing the second time.

Inputs are bounded: a text file at most ``IMPORT_MAX_BYTES``; a zip as the DUCView uploads are
(``upload_bounds.Limits``: entries, each file and the total decompressed size, counted while
reading; unsafe member paths, encrypted members and nested archives refused).
"""

from __future__ import annotations

import posixpath
import zipfile
import zlib
from dataclasses import dataclass, field

from django.db import IntegrityError, transaction

from annotation.api import upload_bounds
from annotation.api.upload_bounds import Limits, UploadRejected
from annotation.corpus.models import SUMMARY_MAX_CHARS, Dataset, PeerSummary, ReferenceSummary, Topic
from annotation.corpus.wording import count_noun
from annotation.formats import summary_texts
from annotation.formats.summary_texts import MAX_ID, NamePatterns, PatternError

KINDS = {"reference": ReferenceSummary, "peer": PeerSummary}
NEW, PRESENT, CONFLICT = "new", "present", "conflict"


@dataclass
class SummaryPlan:
    kind: str
    id: str
    text: str
    source: str  # the header line or file it came from
    state: str = NEW

    @property
    def words(self) -> int:
        return len(self.text.split())


@dataclass
class TopicPlan:
    external_id: str
    title: str = ""
    exists: bool = False
    summaries: list[SummaryPlan] = field(default_factory=list)

    def of_kind(self, kind: str) -> list[SummaryPlan]:
        return [s for s in self.summaries if s.kind == kind]

    @property
    def references(self) -> list[SummaryPlan]:
        return self.of_kind("reference")

    @property
    def peers(self) -> list[SummaryPlan]:
        return self.of_kind("peer")


@dataclass
class Plan:
    topics: list[TopicPlan] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)

    @property
    def changes(self) -> bool:
        return any(not t.exists for t in self.topics) or self.count(state=NEW) > 0

    @property
    def ok(self) -> bool:
        """Something to write and nothing wrong."""
        return not self.problems and self.changes

    def count(self, kind: str | None = None, state: str | None = None) -> int:
        return sum(
            1
            for t in self.topics
            for s in t.summaries
            if (kind is None or s.kind == kind) and (state is None or s.state == state)
        )

    @property
    def n_references(self) -> int:
        return self.count("reference")

    @property
    def n_peers(self) -> int:
        return self.count("peer")

    @property
    def new_topics(self) -> int:
        return sum(1 for t in self.topics if not t.exists)


@dataclass(frozen=True)
class Applied:
    topics: int
    references: int
    peers: int
    present: int


# --- reading the input -------------------------------------------------------------------------


def decode(data: bytes, name: str) -> str:
    """UTF-8 text (a byte-order mark allowed), or PatternError naming the file."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise PatternError(f"{name} is not UTF-8 text (byte {error.start})") from None


def read_text_upload(upload, limits: Limits | None = None) -> str:
    """The text of an uploaded file, at most ``IMPORT_MAX_BYTES``."""
    limits = limits or Limits.from_settings()
    data = upload.read(limits.file_bytes + 1)
    if len(data) > limits.file_bytes:
        raise PatternError(
            f"{upload.name} is larger than the {limits.file_bytes // (1024 * 1024)} MiB a text file may have"
        )
    return decode(data, upload.name)


def _zip_texts(
    upload, name: str, patterns: NamePatterns, limits: Limits, plan: Plan
) -> list[tuple[summary_texts.NamedFile, str]]:
    found = []
    used = 0
    try:
        with zipfile.ZipFile(upload) as archive:
            members = archive.infolist()
            if len(members) > limits.archive_members:
                raise UploadRejected(f"{name}: more than {limits.archive_members} entries")
            for info in members:
                path = upload_bounds.safe_member_name(info.filename)
                base = posixpath.basename(path)
                if info.is_dir() or path.startswith("__MACOSX/") or base.startswith("._") or base.startswith("."):
                    continue
                if posixpath.splitext(base)[1].lower() in upload_bounds.ARCHIVE_EXTENSIONS:
                    raise UploadRejected(f"{name}/{path}: archives inside archives are not opened")
                named = patterns.classify(path)
                if named is None:
                    plan.ignored.append(path)
                    continue
                if info.flag_bits & 0x1:
                    raise UploadRejected(f"{name}/{path}: encrypted archive members are not supported")
                if info.file_size > limits.file_bytes:
                    raise UploadRejected(
                        f"{name}/{path}: larger than the {limits.file_bytes // (1024 * 1024)} MiB a text file may have"
                    )
                with archive.open(info) as member:
                    data = member.read(limits.file_bytes + 1)
                used += len(data)
                if len(data) > limits.file_bytes:
                    raise UploadRejected(
                        f"{name}/{path}: larger than the {limits.file_bytes // (1024 * 1024)} MiB a text file may have"
                    )
                if used > limits.total_bytes:
                    raise UploadRejected(f"{name}: decompresses to more than {limits.total_bytes // (1024 * 1024)} MiB")
                try:
                    found.append((named, summary_texts.normalise(decode(data, path)).strip("\n")))
                except PatternError as error:
                    plan.problems.append(str(error))
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, ValueError, OSError) as error:
        raise UploadRejected(f"{name}: not a valid zip archive ({error})") from None
    return found


# --- planning ---------------------------------------------------------------------------------


def _check_ids(plan: Plan) -> None:
    for t in plan.topics:
        if not t.external_id:
            plan.problems.append("a topic id is needed")
        elif len(t.external_id) > MAX_ID:
            plan.problems.append(f"topic id {t.external_id[:20]!r}… is longer than {MAX_ID} characters")
        seen: dict[tuple[str, str], SummaryPlan] = {}
        for s in t.summaries:
            label = f"{t.external_id}: {s.kind} {s.id!r}"
            if not s.id:
                plan.problems.append(f"{t.external_id}: a {s.kind} has no id ({s.source})")
            elif len(s.id) > MAX_ID:
                plan.problems.append(f"{t.external_id}: a {s.kind} id is longer than {MAX_ID} characters ({s.source})")
            if not s.text.strip():
                plan.problems.append(f"{label} has no text")
            elif len(s.text) > SUMMARY_MAX_CHARS:
                plan.problems.append(
                    f"{label} has {len(s.text):,} characters; a summary may have at most {SUMMARY_MAX_CHARS:,}"
                )
            if (s.kind, s.id) in seen:
                plan.problems.append(f"{label} is given twice ({seen[(s.kind, s.id)].source} and {s.source})")
            seen[(s.kind, s.id)] = s


def _compare_with_stored(dataset: Dataset, plan: Plan) -> None:
    """Mark each topic and summary new, present (same text) or in conflict (another text)."""
    topics = {
        t.external_id: t
        for t in Topic.objects.filter(dataset=dataset, external_id__in=[p.external_id for p in plan.topics])
    }
    stored = {kind: {} for kind in KINDS}
    for kind, model in KINDS.items():
        for topic_id, external_id, text in model.objects.filter(topic__in=topics.values()).values_list(
            "topic__external_id", "external_id", "text"
        ):
            stored[kind][(topic_id, external_id)] = text
    for t in plan.topics:
        t.exists = t.external_id in topics
        if t.exists and t.title and topics[t.external_id].title and t.title != topics[t.external_id].title:
            plan.notes.append(
                f"topic {t.external_id} exists with the title {topics[t.external_id].title!r}; it is kept"
            )
        for s in t.summaries:
            text = stored[s.kind].get((t.external_id, s.id))
            if text is None:
                continue
            if text == s.text:
                s.state = PRESENT
            else:
                s.state = CONFLICT
                plan.problems.append(
                    f"{t.external_id}: {s.kind} {s.id} is already stored with a different text "
                    "(stored texts are fixed: give it another id, or delete the stored one first)"
                )


def _finish(dataset: Dataset, plan: Plan) -> Plan:
    _check_ids(plan)
    if not plan.problems:
        _compare_with_stored(dataset, plan)
    if not plan.problems and not plan.ok:
        plan.notes.append("everything here is already stored: nothing to add")
    return plan


def plan_topic(dataset: Dataset, topic_id: str, title: str, texts: dict[str, str], header_pattern: str) -> Plan:
    """One topic: ``texts`` maps ``reference``/``peer`` to a text of summaries under headers."""
    plan = Plan(topics=[TopicPlan(topic_id.strip(), title.strip())])
    for kind, text in texts.items():
        if not text.strip():
            continue
        try:
            split = summary_texts.split_by_headers(text, header_pattern)
        except PatternError as error:
            plan.problems.append(f"{kind} summaries: {error}")
            continue
        plan.notes += [f"{kind} summaries: {note}" for note in split.notes]
        plan.topics[0].summaries += [SummaryPlan(kind, p.id, p.text, p.header) for p in split.pieces]
    if not plan.topics[0].summaries and not plan.problems:
        plan.problems.append("no summaries: paste or upload the reference summaries, the peers, or both")
    return _finish(dataset, plan)


def plan_zip(dataset: Dataset, upload, reference_names: str, peer_names: str, limits: Limits | None = None) -> Plan:
    """Topics from a zip of text files, one summary per file, named by the patterns."""
    limits = limits or Limits.from_settings()
    plan = Plan()
    name = posixpath.basename((upload.name or "").replace("\\", "/")) or "the archive"
    try:
        patterns = NamePatterns(reference_names, peer_names)
        files = _zip_texts(upload, name, patterns, limits, plan)
    except (PatternError, UploadRejected) as error:
        plan.problems.append(str(error))
        return plan
    topics: dict[str, TopicPlan] = {}
    for named, text in sorted(
        files, key=lambda item: (item[0].topic, item[0].kind != "reference", _natural(item[0].id))
    ):
        topic = topics.setdefault(named.topic, TopicPlan(named.topic))
        topic.summaries.append(SummaryPlan(named.kind, named.id, text, named.path))
    plan.topics = list(topics.values())
    if not plan.topics and not plan.problems:
        plan.problems.append(
            f"no file in {name} matches the name patterns ({count_noun(len(plan.ignored), 'file')} ignored)"
        )
    return _finish(dataset, plan)


def _natural(text: str) -> tuple:
    return (0, int(text), "") if text.isdigit() else (1, 0, text)


# --- writing ----------------------------------------------------------------------------------


class PlanRejected(Exception):
    """The plan has problems (or changed since it was shown); nothing was written."""


def apply(dataset: Dataset, plan: Plan) -> Applied:
    """Write the plan's new topics and summaries, all or nothing."""
    if plan.problems:
        raise PlanRejected("; ".join(plan.problems))
    topics = references = peers = present = 0
    try:
        with transaction.atomic():
            _compare_with_stored(dataset, plan)  # again, inside the transaction: what is stored now
            if plan.problems:
                raise PlanRejected("; ".join(plan.problems))
            for t in plan.topics:
                topic, created = Topic.objects.get_or_create(
                    dataset=dataset, external_id=t.external_id, defaults={"title": t.title}
                )
                topics += created
                for s in t.summaries:
                    if s.state == PRESENT:
                        present += 1
                        continue
                    KINDS[s.kind].objects.create(topic=topic, external_id=s.id, text=s.text)
                    if s.kind == "reference":
                        references += 1
                    else:
                        peers += 1
    except IntegrityError:
        plan.problems.append("someone added the same topics or summaries meanwhile: preview again")
        raise PlanRejected(plan.problems[-1]) from None
    return Applied(topics, references, peers, present)
