"""Running the Lightweight Pyramid protocol in the app: statement writing, filtering, sampling,
judging tasks, crowd submissions, costs.

Phase 1: each reference is shown to ``writers_per_reference`` workers, each writes
``statements_per_writer`` statements (all required). The released filters mark statements kept or
dropped with the reason; a seeded sample puts ``statements_per_reference`` of each reference into
batch 1 and as many more into batch 2, reporting references that run short and offering the
top-up from the topic's other references.

Phase 2: one task per peer summary and batch (16 statements with 4 references), judged by
``judges_per_task`` workers. A crowd link (token) opens the work of one phase / batch; a worker
id is captured (typed, or from MTurk's or Prolific's URL parameters: ``lightweight_platforms``,
recorded with the submission), every statement needs an answer, and a completion code is shown at
the end (``lightweight_codes`` checks them against the platform's).
Each worker answers a task at most once (a database constraint): a double submission stores
nothing twice and returns the first submission's completion code. A worker shown a task holds one
of its answer slots (``LiteReservation``, MTurk's accepted assignment) until it answers or
``LIGHTWEIGHT_RESERVATION_SECONDS`` pass (from the first showing: a reload does not renew it), and
answers only against that hold, so a crowd arriving together never answers a task more often than
asked; the only overfill is a late answer (its hold expired and the slot went to another worker),
bounded per task by ``LIGHTWEIGHT_LATE_ANSWERS``.

The worker is the client: a worker id gets a key with its first piece of work (``worker_key``,
kept by its browser) and gets work and answers only with it, so someone who knows the id cannot
answer in its name; a client naming an id that has a key without presenting it is answered as a
new worker would be, with a decoy key that holds and changes nothing, so asking tells no one who
took part. Workers behind one address (a lab's NAT) are workers of their own. Worker ids
are whatever a client types, so a script can still pose as a crowd: the address only shares a
link's slots with other addresses. Free slots go to whoever asks; when none is free, a worker
from an address holding less than its fair share (the link's open slots over the addresses
holding them) takes over the newest hold of the address furthest over its share, so no number of
invented ids or addresses keeps a newcomer out; a browser session holds ``CROWD_HOLDS_PER_SESSION``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import math
import secrets
import zlib
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import NamedTuple

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Count, Min, Q
from django.utils import timezone
from django.utils.crypto import salted_hmac

from annotation.corpus.models import PeerSummary, ReferenceSummary, Topic
from annotation.lightweight import queries
from annotation.lightweight.importing import task_key
from annotation.lightweight.models import (
    ANSWER_ABSENT,
    ANSWER_PRESENT,
    CrowdLink,
    LightweightPyramid,
    LiteAssignment,
    LiteReservation,
    LiteStatement,
    LiteTask,
    LiteWriting,
)
from annotation.lightweight.runs import touch, touched
from annotation.pyramids.models import SCU
from scoring.lite_statements import Statement, chunk, filter_statements, sample_batches, top_up

MAX_WORKER_ID = 100
# The worker id whose rows a decoy client is shown (``CrowdClient.record_of``), so none: blank, which
# no typed id is (``clean_worker_id``) nor an imported one (stripped); not "" (ids deleted or never imported).
NO_WORKER = " "
PSEUDONYM_PREFIX = "anon-"  # the run's pseudonyms of worker ids (``lightweight_privacy``)
MAX_STATEMENT_CHARS = 500
# next_task: tasks tried under their row lock per choice.
RESERVE_CANDIDATES = 4
ALL_RESERVED = "All remaining tasks are being judged right now; try again in a few minutes."
# One message for every refused answer (not held, held no more, answered already, not this
# worker's key): which of them it was would tell who took part.
NOT_HELD = (
    "This task is not held for you (its time ran out and it went to other workers, it was answered "
    "already, or your worker id was started in another browser: continue there); please open the link "
    "again for another."
)
NOT_WRITABLE = (
    "This reference is not open to you (it has all the statements it needs, you wrote about it "
    "already, or your worker id was started in another browser: continue there); please open the link "
    "again for another."
)


class WorkError(ValueError):
    """A request the protocol cannot take (the message is shown to the worker or coordinator)."""


def completion_code() -> str:
    return secrets.token_hex(4).upper()


def clean_worker_id(value) -> str:
    worker = value.strip() if isinstance(value, str) else ""
    if not worker:
        raise WorkError("Please enter your worker id.")
    if len(worker) > MAX_WORKER_ID or not worker.isprintable() or any(ch.isspace() for ch in worker):
        raise WorkError(f"A worker id is one word of at most {MAX_WORKER_ID} printable characters.")
    if worker.lower().startswith(PSEUDONYM_PREFIX):  # would pass for a pseudonymised worker
        raise WorkError(f"A worker id may not begin with {PSEUDONYM_PREFIX!r}.")
    return worker


def topics_of(run: LightweightPyramid):
    return Topic.objects.filter(dataset=run.dataset).order_by("external_id")


# --- Phase 1: statements -------------------------------------------------------------------------


@dataclass(frozen=True)
class CrowdClient:
    """Where a crowd request comes from: its address (``client_network``) and a hash of its browser
    session ("" without one, e.g. a script on the API), and the worker's key as the request
    presented it (``worker_key``); ``decoy``: that key is a decoy (the client named a worker id
    with a key of its own), so the client is shown what a worker new to the run would be, and no
    work, hold or count of the worker's."""

    address: str
    session: str = ""
    key: str = ""
    decoy: bool = False

    def record_of(self, worker: str) -> str:
        """The worker id whose work this client may see: ``worker``'s, none (``NO_WORKER``) for a decoy."""
        return NO_WORKER if self.decoy else worker


class HoldLimit(WorkError):
    """This browser session holds as many judging slots as it may (``CROWD_HOLDS_PER_SESSION``)."""

    def __init__(self, retry_after: int):
        super().__init__(
            "Too many tasks are being judged in this browser right now; finish one, or come back in a few minutes."
        )
        self.retry_after = retry_after


def _key_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def _key_matches(stored: str | None, key: str) -> bool:
    return bool(stored and key) and hmac.compare_digest(stored, _key_hash(key))


class WorkerKey(NamedTuple):
    key: str
    decoy: bool


DECOY_NONCE = 16


def _decoy_mac(run_id: int, worker: str, nonce: bytes) -> bytes:
    return salted_hmac("crowd-decoy-key", f"{run_id}:{worker}:{nonce.hex()}", algorithm="sha256").digest()[:8]


def _decoy_key(run_id: int, worker: str) -> str:
    """A key for a client naming ``worker`` without its key: random, shaped as a real key
    (``secrets.token_urlsafe(24)``), and recognised again (``_is_decoy``) without being stored."""
    nonce = secrets.token_bytes(DECOY_NONCE)
    return base64.urlsafe_b64encode(nonce + _decoy_mac(run_id, worker, nonce)).decode()


def _is_decoy(run_id: int, worker: str, key: str) -> bool:
    try:
        raw = base64.urlsafe_b64decode(key.encode())
    except ValueError:
        return False
    return len(raw) == DECOY_NONCE + 8 and hmac.compare_digest(
        raw[DECOY_NONCE:], _decoy_mac(run_id, worker, raw[:DECOY_NONCE])
    )


def worker_key(run_id: int, worker: str, key: str) -> WorkerKey:
    """The key under which ``worker`` asks for work in the run: ``key`` when it is the worker's,
    a new one when the worker id is new to the run (handed to the client once, stored hashed).

    When the id has another key, a decoy (``WorkerKey.decoy``): the client is answered as a new
    worker would be (a key of the same shape, kept as the client presents it again, and work
    shown with no hold taken), and whatever it submits gets the one refusal. A refusal instead
    ("in use in another browser") told anyone who typed or guessed an id whether it took part.
    One statement, except for a key presented for an id without one (its keys were dropped with
    its ids: ``lightweight_privacy``)."""
    if key:
        stored = queries.stored_key(run_id, worker)
        if _key_matches(stored, key):
            return WorkerKey(key, False)
        if stored is not None:
            return WorkerKey(key if _is_decoy(run_id, worker, key) else _decoy_key(run_id, worker), True)
    new = secrets.token_urlsafe(24)
    if not queries.add_key(run_id, worker, _key_hash(new)):  # the id has a key already (another browser's)
        return WorkerKey(_decoy_key(run_id, worker), True)
    return WorkerKey(new, False)


def _spread(worker: str, pk: int) -> int:
    """A worker's own fixed order of ids (Knuth's multiplicative hash, keyed by the worker), which
    spreads a crowd arriving together over equally needed tasks or references."""
    return (pk * 2654435761 + zlib.crc32(worker.encode())) % 1000003


def next_reference(run: LightweightPyramid, worker: str, client: CrowdClient | None = None) -> ReferenceSummary | None:
    """A reference that still needs writers and that this worker has not written about (a decoy
    client: any, ``CrowdClient.record_of``): among those with the fewest writings, in the worker's own order."""
    written = client.record_of(worker) if client else worker
    references = list(
        ReferenceSummary.objects.filter(topic__dataset=run.dataset)
        .exclude(pk__in=LiteWriting.objects.filter(worker_id=written, pyramid=run).values("reference_id"))
        .annotate(writers=Count("lite_writings", filter=Q(lite_writings__pyramid=run)))
        .filter(writers__lt=run.writers_per_reference)
        .values_list("id", "writers")
    )
    if not references:
        return None
    fewest = min(writers for _, writers in references)
    pk = min((pk for pk, writers in references if writers == fewest), key=lambda pk: _spread(worker, pk))
    return ReferenceSummary.objects.get(pk=pk)


def submit_writing(
    run: LightweightPyramid,
    reference: ReferenceSummary,
    worker: str,
    texts: list[str],
    client: CrowdClient,
    record: dict | None = None,
) -> LiteWriting:
    """Store one worker's statements about one reference (all of them required); ``record``: the
    platform's ids of the submission (``lightweight_platforms.Visit.record``). Only with the
    worker's key (``client.key``). A reference takes ``writers_per_reference`` writings at most:
    counted under the reference's row lock, so writers sending at once cannot overfill it."""
    worker = clean_worker_id(worker)
    texts = [(t or "").strip() for t in texts]
    if len(texts) != run.statements_per_writer or not all(texts):
        raise WorkError(f"Please write all {run.statements_per_writer} statements.")
    if any(len(t) > MAX_STATEMENT_CHARS for t in texts):
        raise WorkError(f"A statement has at most {MAX_STATEMENT_CHARS} characters.")
    if reference.topic.dataset_id != run.dataset_id:
        raise WorkError("This reference is not part of this evaluation.")
    if not _key_matches(queries.stored_key(run.pk, worker), client.key):
        raise WorkError(NOT_WRITABLE)
    with transaction.atomic():
        ReferenceSummary.objects.select_for_update(no_key=True).filter(pk=reference.pk).exists()
        writings = LiteWriting.objects.filter(pyramid=run, reference=reference)
        earlier = writings.filter(worker_id=worker).first()
        if earlier is not None:  # a retry: nothing twice, the same code
            if not _retried(earlier, record):
                raise WorkError(NOT_WRITABLE)
            return earlier
        if writings.count() >= run.writers_per_reference:
            raise WorkError(NOT_WRITABLE)
        writing = LiteWriting.objects.create(
            pyramid=run,
            reference=reference,
            worker_id=worker,
            completion_code=completion_code(),
            client=client.address,
            session=client.session,
            **(record or {}),
        )
        LiteStatement.objects.bulk_create(
            [
                LiteStatement(
                    pyramid=run,
                    topic_id=reference.topic_id,
                    external_id=f"w{writing.pk}.{k}",
                    text=text,
                    reference=reference,
                    source=reference.external_id,
                    author=worker,
                    writing=writing,
                )
                for k, text in enumerate(texts, start=1)
            ]
        )
        touch(run)
    return writing


def _retried(earlier: LiteAssignment | LiteWriting, record: dict | None) -> bool:
    """Whether a submission (with the worker's key) repeats ``earlier`` (a retry, answered with its
    completion code): in the same platform assignment. An MTurk worker's second assignment can
    show the task its first one holds (another tab); its submission is not the first one's, whose
    code would have the second assignment paid for the same work."""
    return earlier.platform_assignment == (record or {}).get("platform_assignment", "")


def statements_from_expert(run: LightweightPyramid, pyramids) -> int:
    """Statements from expert pyramids' SCU labels (one per SCU), so both methods meet on the same topics."""
    new = []
    have = set(LiteStatement.objects.filter(pyramid=run).values_list("topic_id", "external_id"))
    for scu in SCU.objects.filter(pyramid__in=pyramids, pyramid__topic__dataset=run.dataset).select_related("pyramid"):
        key = (scu.pyramid.topic_id, f"scu{scu.pyramid_id}.{scu.uid}")
        if key not in have:
            new.append(
                LiteStatement(
                    pyramid=run,
                    topic_id=key[0],
                    external_id=key[1],
                    text=scu.label,
                    scu=scu,
                    source=f"pyramid {scu.pyramid_id}",
                )
            )
    with transaction.atomic():
        LiteStatement.objects.bulk_create(new)
        touch(run)
    return len(new)


def _reference_key(statement: LiteStatement):
    return statement.reference_id or statement.source or f"topic{statement.topic_id}"


def apply_filters(run: LightweightPyramid) -> dict[str, int]:
    """Mark every statement kept or dropped with the released filters; returns counts by reason."""
    statements = list(LiteStatement.objects.filter(pyramid=run).order_by("topic_id", "id"))
    decisions = filter_statements([Statement(s.pk, (s.topic_id, _reference_key(s)), s.text) for s in statements])
    by_id = {s.pk: s for s in statements}
    counts: dict[str, int] = defaultdict(int)
    for d in decisions:
        s = by_id[d.id]
        s.kept, s.filter_reason = d.kept, d.reason or ""
        counts[d.reason or "kept"] += 1
    with transaction.atomic():
        LiteStatement.objects.bulk_update(statements, ["kept", "filter_reason"], batch_size=2000)
        touch(run)
    return dict(counts)


@dataclass
class SampleReport:
    topic: str
    batches: list[int]  # statements per batch
    target: int
    short: list[dict]  # {reference, batch, missing}; reference None = the topic ran out


def sample(run: LightweightPyramid, top_up_short: bool = False) -> list[SampleReport]:
    """Seeded sample of every topic's kept statements into batches 1 and 2 (replacing a previous sample)."""
    reports = []
    references = dict(ReferenceSummary.objects.filter(topic__dataset=run.dataset).values_list("id", "external_id"))
    with transaction.atomic():
        LiteStatement.objects.filter(pyramid=run).update(batch=None)
        for topic in topics_of(run):
            kept: dict = defaultdict(list)
            for s in LiteStatement.objects.filter(pyramid=run, topic=topic, kept=True).order_by("id"):
                kept[_reference_key(s)].append(s.pk)
            if not kept:
                continue
            seed = run.seed * 1_000_003 + topic.pk
            result = sample_batches(kept, seed, per_reference=run.statements_per_reference)
            if top_up_short and result.short:
                result = top_up(result, kept, seed)
            for number, batch in enumerate(result.batches, start=1):
                LiteStatement.objects.filter(pk__in=[s for _, s in batch]).update(batch=number)
            reports.append(
                SampleReport(
                    topic.external_id,
                    [len(b) for b in result.batches],
                    result.target,
                    [
                        {
                            "reference": references.get(x.reference, x.reference) if x.reference is not None else None,
                            "batch": x.batch,
                            "missing": x.missing,
                        }
                        for x in result.short
                    ],
                )
            )
        touch(run)
    return reports


def create_tasks(run: LightweightPyramid) -> int:
    """One task per peer summary and batch (split into tasks of 16 statements); existing tasks stay."""
    have = set(LiteTask.objects.filter(pyramid=run).values_list("peer_id", "key"))
    new = []
    peers = defaultdict(list)
    for peer in PeerSummary.objects.filter(topic__dataset=run.dataset).order_by("id"):
        peers[peer.topic_id].append(peer)
    batches = defaultdict(list)
    for pk, topic, external, batch in (
        LiteStatement.objects.filter(pyramid=run, batch__isnull=False)
        .order_by("id")
        .values_list("id", "topic_id", "external_id", "batch")
    ):
        batches[(topic, batch)].append((pk, external))
    for (topic, batch), statements in sorted(batches.items()):
        for part in chunk(statements):
            key = task_key([e for _, e in part])
            for peer in peers[topic]:
                if (peer.pk, key) not in have:
                    new.append(
                        LiteTask(
                            pyramid=run,
                            topic_id=topic,
                            peer=peer,
                            batch=batch,
                            key=key,
                            statement_ids=[pk for pk, _ in part],
                        )
                    )
    with transaction.atomic():
        LiteTask.objects.bulk_create(new, batch_size=2000)
        touch(run)
    return len(new)


# --- Phase 2: judging ----------------------------------------------------------------------------


def link_of(token: str) -> CrowdLink | None:
    """The crowd link of ``token`` with its run (``link.pyramid``), open or closed; None when there
    is none (``queries.crowd_link``: every crowd request reads them first)."""
    return queries.crowd_link(token)


def _link_tasks(link: CrowdLink):
    tasks = LiteTask.objects.filter(pyramid_id=link.pyramid_id)
    return tasks.filter(batch=link.batch) if link.batch else tasks


def fair_share(open_slots: int, other_addresses: int) -> int:
    """The slots one address may hold when none is free: the link's open slots shared equally with
    the other addresses holding some (at least one)."""
    return max(1, open_slots // (other_addresses + 1))


def next_task(link: CrowdLink, worker: str, client: CrowdClient) -> LiteTask | None:
    """The task this worker is to judge now, with one of its answer slots held for the worker until
    ``LIGHTWEIGHT_RESERVATION_SECONDS`` from now (``CROWD_FIRST_HOLD_SECONDS`` while the worker has
    answered nothing in the run: an unanswered hold is short); None when there is none for it right now (all
    answered or held by others: ``seconds_until_free`` tells which). Raises ``HoldLimit`` when the
    browser session holds as many slots as it may. The caller has checked the worker's key; a
    decoy client (``CrowdClient.decoy``) gets what a worker new to the run would (the same choice,
    hold limit or none), and its hold is rolled back.

    A task the worker holds and has not answered comes first, its hold as it is (a reload does
    not renew it). Otherwise a task as ``queries._PROPOSALS`` orders them. The choice is one query on task
    ids alone (counting over whole rows with the summary text sorted them on disk); it is only a
    proposal, which ``_hold`` checks again under the task's lock: when the last slot went to
    someone else meanwhile, the next proposal is tried. Each such round means another request took
    a slot, so the rounds are bounded by the link's open slots; a fixed number of rounds told a
    worker that all was taken while slots were free, when a burst of 32 chased the same tasks.
    """
    now = timezone.now()
    adapt = connection.ops.adapt_datetimefield_value
    judges = link.pyramid.judges_per_task
    params = {
        "run": link.pyramid_id,
        "batch": link.batch or 0,
        "worker": client.record_of(worker),
        "now": adapt(now),
        "until": adapt(now + timedelta(seconds=settings.LIGHTWEIGHT_RESERVATION_SECONDS)),
        "first_until": adapt(
            now + timedelta(seconds=min(settings.CROWD_FIRST_HOLD_SECONDS, settings.LIGHTWEIGHT_RESERVATION_SECONDS))
        ),
        "client": client.address,
        "session": client.session,
        "judges": judges,
        "spread": zlib.crc32(worker.encode()),
        "limit": RESERVE_CANDIDATES,
        "rollback": client.decoy,
    }
    rounds = 0
    while True:  # bounded below by the open slots
        if rounds:  # holds others ended since this request began (at their now) are seen as ended
            params["now"] = adapt(timezone.now())
        proposals = queries.proposals(params)
        if not proposals:
            return None
        if proposals[0][1]:
            return _shown(proposals[0][0], worker)
        free = [pk for pk, _, taken, _ in proposals if taken < judges]
        open_slots = int(proposals[0][3])
        pk, contended = _hold(free, len(free) < len(proposals), params, open_slots, now)
        if pk is not None:
            return _shown(pk, params["worker"])
        # Every task that had a free slot was tried; chosen afresh only when others filled them while
        # this request waited (a burst): their slots went elsewhere, a later task may still have one.
        rounds += 1
        if (len(free) < RESERVE_CANDIDATES and not contended) or rounds > open_slots:
            return None


class ShownStatement(NamedTuple):
    """A statement as the judging page and the API show it: its id and text (building a model
    instance for each of a page's 16 statements took about 6% of the page's CPU)."""

    pk: int
    text: str


def _shown(pk: int, worker: str) -> LiteTask | None:
    """Task ``pk`` as the judging page shows it (``queries._SHOWN``): its peer, its statements in order
    (``task_statements`` reads no more) and ``worker_done``, the run's tasks ``worker`` has answered."""
    rows = queries.shown_task(pk, worker)
    if not rows:
        return None
    pk, run, topic, batch, key, ids, peer, summary, _, _, done = rows[0]
    task = LiteTask(id=pk, pyramid_id=run, topic_id=topic, batch=batch, key=key, peer_id=peer, statement_ids=_json(ids))
    task.peer = PeerSummary(id=peer, topic_id=topic, text=summary)
    by_id = {row[8]: ShownStatement(row[8], row[9]) for row in rows if row[8] is not None}
    task.shown_statements = [by_id[pk] for pk in task.statement_ids if pk in by_id]
    task.worker_done = done
    return task


def _hold(candidates: list[int], held_full: bool, params: dict, open_slots: int, now) -> tuple[int | None, bool]:
    """A new hold of the first candidate task with a slot left for this worker (``queries._RESERVE`` under
    the task's lock), or, when none had one and some tasks' open slots are all held (``held_full``),
    one taken over from an address over its fair share (``_take_over``): None when neither. A task
    whose lock another request holds right now is passed over (SKIP LOCKED) for the next
    candidate: with tasks completed one after the other, a crowd asks for the same few at once.
    Only when no other candidate had a slot are the busy ones waited for, each in a transaction of
    its own, which holds no other task's lock while it waits (two requests each holding the task
    the other waits for would deadlock); if they were filled meanwhile, a take-over is tried then.
    Also says whether any candidate was busy (``next_task`` then chooses again)."""
    busy: list[int] = []
    pk = _hold_one_of(candidates, held_full, params, open_slots, now, busy)
    for waited in busy:
        if pk is not None:
            break
        pk = _hold_one_of([waited], False, params, open_slots, now, None)
    if pk is None and busy:  # the tasks waited for were filled meanwhile: their slots are all held now
        pk = _hold_one_of([], True, params, open_slots, now, None)
    return pk, bool(busy)


class _NotTaken(Exception):
    """Rolls a take-over's savepoint back: the hold stays when its slot cannot be taken."""


def _hold_one_of(
    candidates: list[int], held_full: bool, params: dict, open_slots: int, now, busy: list | None
) -> int | None:
    """One transaction of ``_hold``: under the address's lock the session's live holds are counted
    first (``HoldLimit`` at ``CROWD_HOLDS_PER_SESSION``), then the candidates are tried: those
    locked by others are put in ``busy`` (None: waited for); then, if none was busy, a take-over.
    Rolled back with ``params["rollback"]`` (a decoy's: its locks last as long as a hold's would)."""
    with transaction.atomic():
        try:
            return _hold_in(candidates, held_full, params, open_slots, now, busy)
        finally:
            if params["rollback"]:
                transaction.set_rollback(True)


def _hold_in(
    candidates: list[int], held_full: bool, params: dict, open_slots: int, now, busy: list | None
) -> int | None:
    """``_hold_one_of`` inside its transaction."""
    queries.lock_client(params["client"])
    answered, session, soonest, held = queries.client_holds(params)
    if held is not None:  # the worker's other tab got it
        return held
    if not answered:  # a worker id yet to do any work here: a short hold (an invented one's frees soon)
        params = {**params, "until": params["first_until"]}
    if session >= settings.CROWD_HOLDS_PER_SESSION:
        raise HoldLimit(max(1, math.ceil((_datetime(soonest, now) - now).total_seconds())))
    for pk in candidates:
        # locked by another request (or the task is gone)
        if not queries.lock_task(pk, skip_locked=busy is not None):
            if busy is not None:
                busy.append(pk)
            continue
        if queries.reserve({**params, "task": pk}):
            return pk
    if held_full and not busy:
        return _take_over(params, open_slots)
    return None


def _take_over(params: dict, open_slots: int) -> int | None:
    """When no slot is free: if this address holds less than its ``fair_share`` of the link's open
    slots, the newest hold of the address furthest over its share ends now (its worker may still
    answer late) and its slot becomes this worker's hold. However many addresses or invented ids
    hold a link's slots, a worker from a new address is never kept out for long. A hold answered
    (or ended) while this request waited for its task's lock is not taken: the next one is tried,
    so a flood that answers as fast as it holds cannot win every race for the last slots. Each hold
    tried in vain went to another request, so the tries are bounded by the open slots (three tries
    turned the fifth of eight newcomers arriving together away, all chasing the newest hold)."""
    for _ in range(open_slots + 1):
        # Read afresh each try: a hold another request ended (at its own now) still looked live
        # to this request's earlier now, and was chosen again and again.
        params = {**params, "now": connection.ops.adapt_datetimefield_value(timezone.now())}
        mine, others = queries.addresses(params)
        share = fair_share(open_slots, int(others) + (0 if mine else 1))
        if int(mine) >= share:
            return None
        row = queries.hold_to_take_over({**params, "share": share})
        if row is None:
            return None
        hold, pk = row
        try:
            with transaction.atomic():
                queries.lock_task(pk, skip_locked=False)
                if queries.end_hold({**params, "hold": hold}) and queries.reserve({**params, "task": pk}):
                    return pk
                raise _NotTaken
        except _NotTaken:
            continue
    return None


def _open_tasks(link: CrowdLink, worker: str):
    """The link's tasks this worker could still judge: not answered by it, nor by all the judges asked for."""
    return (
        _link_tasks(link)
        .exclude(pk__in=LiteAssignment.objects.filter(worker_id=worker).values("task_id"))
        .values("id")
        .annotate(n=Count("assignments"))
        .filter(n__lt=link.pyramid.judges_per_task)
        .values("id")
    )


def seconds_until_free(link: CrowdLink, worker: str, client: CrowdClient | None = None) -> int | None:
    """After ``next_task`` found nothing: the seconds until the first hold by another worker on a
    task this worker could still judge expires (its slot may come back then), or None when nothing
    is left for this worker (every task answered by it, or fully answered; for a decoy client, as
    for a worker new to the run)."""
    worker = client.record_of(worker) if client else worker
    now = timezone.now()
    soonest = (
        LiteReservation.objects.filter(task__in=_open_tasks(link, worker), expires_at__gt=now)
        .exclude(worker_id=worker)
        .aggregate(soonest=Min("expires_at"))["soonest"]
    )
    return None if soonest is None else max(1, math.ceil((soonest - now).total_seconds()))


def task_statements(task: LiteTask) -> list[LiteStatement | ShownStatement]:
    """The task's statements in the order shown (one query, only what the page shows; none when
    the task was read for showing, ``_shown``)."""
    if hasattr(task, "shown_statements"):
        return task.shown_statements
    by_id = {s.pk: s for s in LiteStatement.objects.filter(pk__in=task.statement_ids).only("id", "text")}
    return [by_id[pk] for pk in task.statement_ids]


def answerable_after(now: datetime) -> datetime:
    """The hold expiry after which a hold can still take an answer (a late one: expired within as
    long again as a hold lasts); holds expired by then are past answering."""
    return now - timedelta(seconds=settings.LIGHTWEIGHT_RESERVATION_SECONDS)


def _json(value):
    """A JSON column's value as read by a cursor: decoded by psycopg, text from SQLite."""
    return json.loads(value) if isinstance(value, str) else value


def _datetime(value, now: datetime) -> datetime:
    """A datetime column's value as read by a cursor: aware from psycopg; from SQLite naive (a
    column read as such) or ISO text (an aggregate's), in UTC as ``now``."""
    value = datetime.fromisoformat(value) if isinstance(value, str) else value
    return value if value.tzinfo else value.replace(tzinfo=now.tzinfo)


class UnknownTask(WorkError):
    """No task of this id in the link's run (a 404 for the pages and the API)."""


def submit_judgments(
    link: CrowdLink, task: LiteTask | int, worker: str, answers: dict, client: CrowdClient, record: dict | None = None
) -> LiteAssignment:
    """Store one worker's answers to one task: ``answers`` maps every statement id to present / absent;
    ``record``: the platform's ids of the submission (``lightweight_platforms.Visit.record``).

    Only with the worker's key (``client.key``) and against the worker's hold of the task: the
    hold becomes the answer in the same commit, so the task's answers and live holds together stay
    the same. A late answer (its hold expired, within as long again) is stored while the task's
    answers and live holds are fewer than ``judges_per_task + LIGHTWEIGHT_LATE_ANSWERS`` (the work
    was done; the task may get that many answers more than asked). All under the task's row lock,
    as the holds are handed out. A retry of a stored answer stores nothing twice and gets its
    completion code. Every refusal of the worker is ``NOT_HELD``, whichever it was.

    ``task`` may be given by id (``UnknownTask`` if the run has none such): the task is read as it
    is locked, in one statement, whichever is given (a page's submission need not read it first).
    """
    worker = clean_worker_id(worker)
    adapt = connection.ops.adapt_datetimefield_value
    try:
        with transaction.atomic():
            row = queries.submitted_task(task if isinstance(task, int) else task.pk, link.pyramid_id)
            if row is None:
                raise UnknownTask("No such task in this evaluation.")
            # The time once the task's lock is granted: a hold taken over while this request waited
            # for it ended at the taker's now, later than a now read before, and looked live.
            now = timezone.now()
            late = answerable_after(now)
            task = LiteTask(id=row[0], pyramid_id=link.pyramid_id, batch=row[1], statement_ids=_json(row[2]))
            if link.batch and task.batch != link.batch:
                raise WorkError("This task is not part of this link.")
            codes = []
            for pk in task.statement_ids:
                value = answers.get(str(pk), answers.get(pk))
                if value not in ("present", "absent", ANSWER_PRESENT, ANSWER_ABSENT):
                    raise WorkError("Please answer every statement: present or not present.")
                codes.append(ANSWER_PRESENT if value in ("present", ANSWER_PRESENT) else ANSWER_ABSENT)
            # once the task's lock is granted: what its last holder committed
            row = queries.hold_of(task.pk, link.pyramid_id, worker)
            if row is None or not _key_matches(row[0], client.key):
                raise WorkError(NOT_HELD)
            row = row[1:] if row[1] is not None else None
            if row is None:  # answered already (the answer took the hold's place)? a retry: nothing twice
                earlier = LiteAssignment.objects.filter(task=task, external_id=f"app:{worker}").first()
                if earlier is not None and _retried(earlier, record):
                    return earlier
                raise WorkError(NOT_HELD)
            hold = LiteReservation(
                id=row[0],
                task_id=task.pk,
                worker_id=worker,
                client=row[1],
                session=row[2],
                expires_at=_datetime(row[3], now),
            )
            if hold.expires_at <= late:
                raise WorkError(NOT_HELD)
            if hold.expires_at <= now:
                taken = task.assignments.count() + task.reservations.filter(expires_at__gt=now).count()
                if taken >= link.pyramid.judges_per_task + settings.LIGHTWEIGHT_LATE_ANSWERS:
                    raise WorkError(NOT_HELD)
            assignment = LiteAssignment(
                task=task,
                worker_id=worker,
                external_id=f"app:{worker}",
                origin=LiteAssignment.Origin.APP,
                answers="".join(codes),
                completion_code=completion_code(),
                client=hold.client,
                session=hold.session,
                submitted_at=now,
                **(record or {}),
            )
            # One statement, the last before the commit (the run's row is locked briefly): the answer,
            # its hold and the task's holds expired past their late answer gone (this is where they
            # are cleared), the run's revision bumped.
            values = {f: getattr(assignment, f) for f in queries.ASSIGNMENT_FIELDS}
            assignment.pk = queries.store_answer(
                {
                    **values,
                    "task": task.pk,
                    "submitted_at": adapt(now),
                    "hold": hold.pk,
                    "late": adapt(late),
                    "run": link.pyramid_id,
                }
            )
            assignment._state.adding = False
            touched(link.pyramid)
    except IntegrityError:  # the worker's other tab answered it at the same moment
        raise WorkError(NOT_HELD) from None
    return assignment


# --- Progress and costs --------------------------------------------------------------------------


def progress(run: LightweightPyramid) -> dict:
    """The run's counts; ``reserved``: answer slots held for crowd workers now (judging under way)."""
    tasks = LiteTask.objects.filter(pyramid=run).annotate(n=Count("assignments"))
    total = tasks.count()
    statements = LiteStatement.objects.filter(pyramid=run)
    references = ReferenceSummary.objects.filter(topic__dataset=run.dataset).count()
    return {
        "references": references,
        "writings": LiteWriting.objects.filter(pyramid=run).count(),
        # Only a crowd-written run pays for writing: imported and expert statements cost nothing to write.
        "writings_wanted": references * run.writers_per_reference
        if run.origin == LightweightPyramid.Origin.CROWD
        else 0,
        "statements": statements.count(),
        "kept": statements.filter(kept=True).count(),
        "sampled": statements.filter(batch__isnull=False).count(),
        "tasks": total,
        "tasks_done": tasks.filter(n__gte=run.judges_per_task).count(),
        "assignments": LiteAssignment.objects.filter(task__pyramid=run).count(),
        "assignments_wanted": total * run.judges_per_task,
        "reserved": LiteReservation.objects.filter(task__pyramid=run, expires_at__gt=timezone.now()).count(),
    }


def costs(run: LightweightPyramid, figures: dict | None = None) -> dict:
    """Cost so far (paid assignments) and the estimate for the whole run, in USD."""
    p = figures or progress(run)
    paid_judging = (
        LiteAssignment.objects.filter(task__pyramid=run).exclude(origin=LiteAssignment.Origin.AGGREGATED).count()
    )
    so_far = p["writings"] * run.pay_writing + paid_judging * run.pay_judging
    estimate = p["writings_wanted"] * run.pay_writing + p["assignments_wanted"] * run.pay_judging
    return {
        "so_far": str(so_far.quantize(Decimal("0.01"))),
        "estimate": str(Decimal(estimate).quantize(Decimal("0.01"))),
        "pay_writing": str(run.pay_writing),
        "pay_judging": str(run.pay_judging),
    }
