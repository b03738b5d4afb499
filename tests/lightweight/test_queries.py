"""The crowd's SQL (``annotation.lightweight.queries``) against an ORM formulation of each statement,
on a populated world: two runs in two datasets, tasks of two batches, workers who answered, live
and expired holds from several addresses and sessions (ties in time included), keys. Each SQL
function and its ORM twin give the same rows, or leave the same rows behind."""

import json
from datetime import datetime, timedelta
from decimal import Decimal

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from annotation.corpus.models import PeerSummary
from annotation.lightweight import queries
from annotation.lightweight.models import (
    CrowdLink,
    LightweightPyramid,
    LiteAssignment,
    LiteReservation,
    LiteStatement,
    LiteTask,
    LiteWorkerKey,
)

from tests.foundation.factories import topic

NOW = timezone.now().replace(microsecond=0)
WORKERS = ("w1", "w2", "w3", "w4", "new")


def _at(seconds: int):
    return NOW + timedelta(seconds=seconds)


@pytest.fixture
def world(db):
    """Run R1 (dataset D1): 6 tasks over 3 peers and batches 1 and 2; run R2 (D2): 2 tasks. Answers,
    holds (live and expired, from addresses a1..a3, sessions s1, s2 and none) and keys in both."""
    runs = []
    for dataset, peers in (("D1", 3), ("D2", 1)):
        t, _ = topic("T", dataset)
        run = LightweightPyramid.objects.create(
            dataset=t.dataset, name=f"run {dataset}", judges_per_task=2, pay_judging=Decimal("0.45")
        )
        statements = [
            LiteStatement.objects.create(
                pyramid=run, topic=t, external_id=str(k), text=f"Statement {k}", batch=1 + k % 2
            )
            for k in range(4)
        ]
        for k in range(peers):
            peer = PeerSummary.objects.create(topic=t, external_id=f"P{k}", text=f"Peer {k} of {dataset}.")
            for batch in (1, 2):
                ids = [s.pk for s in statements if s.batch == batch]
                LiteTask.objects.create(
                    pyramid=run, topic=t, peer=peer, batch=batch, key=f"{k}.{batch}", statement_ids=ids
                )
        runs.append(run)
    r1, r2 = runs
    t = list(LiteTask.objects.filter(pyramid=r1).order_by("pk"))
    u = list(LiteTask.objects.filter(pyramid=r2).order_by("pk"))
    # odd cases: a task whose statement is gone, a task without statements
    LiteTask.objects.filter(pk=t[5].pk).update(statement_ids=[*t[5].statement_ids, 999_999])
    LiteTask.objects.filter(pk=u[1].pk).update(statement_ids=[])
    for task, worker in ((t[0], "w1"), (t[0], "w2"), (t[1], "w1"), (t[2], "w3"), (u[0], "w1")):
        LiteAssignment.objects.create(task=task, worker_id=worker, external_id=f"app:{worker}", answers="pn")
    holds = [  # task, worker, client, session, expires in (s), created (s ago)
        (t[1], "w2", "a1", "s1", 300, 2),
        (t[2], "w2", "a1", "s1", 300, 2),  # a tie in creation, the newest
        (t[3], "w3", "a2", "s2", 200, 5),
        (t[4], "w4", "a2", "", 100, 20),
        (t[5], "w1", "a3", "s1", -50, 400),  # expired
        (t[4], "w1", "a3", "s2", 0, 30),  # expiring this very moment
        (t[3], "w4", "a2", "", -1, 60),
        (u[0], "w2", "a1", "s1", 300, 1),
    ]
    for task, worker, client, session, expires, created in holds:
        hold = LiteReservation.objects.create(
            task=task, worker_id=worker, client=client, session=session, expires_at=_at(expires)
        )
        LiteReservation.objects.filter(pk=hold.pk).update(created_at=_at(-created))
    for run in runs:
        for worker in WORKERS[:4]:
            LiteWorkerKey.objects.create(pyramid=run, worker_id=worker, key_hash=f"{worker}-{run.pk}")
    links = [
        CrowdLink.objects.create(pyramid=r1, kind="judge"),
        CrowdLink.objects.create(pyramid=r1, kind="judge", batch=2),
        CrowdLink.objects.create(pyramid=r2, kind="judge", active=False),
    ]
    return runs, t + u, links


def _adapt(value):
    return connection.ops.adapt_datetimefield_value(value)


def _params(link, worker, client="a1", session="s1", judges=2, now=NOW, limit=50):
    """The parameters ``work.next_task`` gives the judging statements."""
    import zlib

    return {
        "run": link.pyramid_id,
        "batch": link.batch or 0,
        "worker": worker,
        "now": _adapt(now),
        "until": _adapt(now + timedelta(seconds=600)),
        "first_until": _adapt(now + timedelta(seconds=60)),
        "client": client,
        "session": session,
        "judges": judges,
        "spread": zlib.crc32(worker.encode()),
        "limit": limit,
    }


def _when(value):
    """A datetime as the cursor reads it (ISO text or naive from SQLite), aware."""
    if value is None:
        return None
    value = datetime.fromisoformat(value) if isinstance(value, str) else value
    return value if value.tzinfo else value.replace(tzinfo=NOW.tzinfo)


def _cases(world):
    _, _, links = world
    return [
        (link, worker, client, session, judges)
        for link in links
        for worker in WORKERS
        for client, session in (("a1", "s1"), ("a9", ""))
        for judges in (1, 2, 3)
    ]


# --- ORM twins -----------------------------------------------------------------------------------


def _link_tasks_orm(p):
    tasks = LiteTask.objects.filter(pyramid_id=p["run"])
    return tasks.filter(batch=p["batch"]) if p["batch"] else tasks


def _live_holds_orm(p):
    return LiteReservation.objects.filter(task__in=_link_tasks_orm(p), expires_at__gt=NOW)


def _proposals_orm(p):
    judges, rows = p["judges"], []
    holds = LiteReservation.objects.filter(task__pyramid_id=p["run"], expires_at__gt=NOW)
    for task in _link_tasks_orm(p).order_by():
        answers = list(task.assignments.values_list("worker_id", flat=True))
        held = [h.worker_id for h in holds if h.task_id == task.pk]
        rows.append((task.pk, int(p["worker"] in held), len(answers), len(answers) + len(held), p["worker"] in answers))
    open_slots = sum(max(0, judges - answers) for _, _, answers, _, _ in rows)
    chosen = [r for r in rows if not r[4] and (r[1] == 1 or r[2] < judges)]
    chosen.sort(
        key=lambda r: (-r[1], 0 if r[3] < judges else 1, -r[3], (r[0] * 2654435761 + p["spread"]) % 1000003, r[0])
    )
    return [(pk, mine, taken, open_slots) for pk, mine, _, taken, _ in chosen][: p["limit"]]


def _client_holds_orm(p):
    session = (
        LiteReservation.objects.filter(session=p["session"], expires_at__gt=NOW)
        if p["session"]
        else LiteReservation.objects.none()
    )
    mine = (
        _live_holds_orm(p).filter(worker_id=p["worker"]).order_by("task_id").values_list("task_id", flat=True).first()
    )
    return (
        LiteAssignment.objects.filter(worker_id=p["worker"], task__pyramid_id=p["run"]).exists(),
        session.count(),
        min(session.values_list("expires_at", flat=True), default=None),
        mine,
    )


def _addresses_orm(p):
    clients = list(_live_holds_orm(p).values_list("client", flat=True))
    return clients.count(p["client"]), len({c for c in clients if c != p["client"]})


def _take_over_orm(p):
    holds = list(_live_holds_orm(p))
    per_address = {c: sum(h.client == c for h in holds) for c in {h.client for h in holds}}
    candidates = [
        h
        for h in holds
        if h.client != p["client"]
        and not LiteAssignment.objects.filter(task_id=h.task_id, worker_id=p["worker"]).exists()
        and LiteAssignment.objects.filter(task_id=h.task_id).count() < p["judges"]
        and per_address[h.client] > p["share"]
    ]
    candidates.sort(key=lambda h: (-per_address[h.client], -h.created_at.timestamp(), -h.id))
    return (candidates[0].id, candidates[0].task_id) if candidates else None


def _reserve_orm(p) -> bool:
    task = p["task"]
    if (
        not LiteTask.objects.filter(pk=task).exists()
        or LiteAssignment.objects.filter(task_id=task, worker_id=p["worker"]).exists()
    ):
        return False
    if (
        LiteAssignment.objects.filter(task_id=task).count()
        + LiteReservation.objects.filter(task_id=task, expires_at__gt=NOW).count()
        >= p["judges"]
    ):
        return False
    fields = {"client": p["client"], "session": p["session"], "expires_at": _when(p["until"])}
    own = LiteReservation.objects.filter(task_id=task, worker_id=p["worker"])
    if not own.exists():
        LiteReservation.objects.create(task_id=task, worker_id=p["worker"], **fields)
        return True
    return own.filter(expires_at__lte=NOW).update(**fields) == 1


def _shown_orm(pk, worker):
    task = LiteTask.objects.select_related("peer").filter(pk=pk).first()
    if task is None:
        return []
    done = LiteAssignment.objects.filter(task__pyramid_id=task.pyramid_id, worker_id=worker).count()
    texts = dict(LiteStatement.objects.filter(pk__in=task.statement_ids).values_list("id", "text"))
    head = (
        task.pk,
        task.pyramid_id,
        task.topic_id,
        task.batch,
        task.key,
        task.statement_ids,
        task.peer_id,
        task.peer.text,
    )
    return sorted(
        [(*head, s, texts.get(s), done) if s in texts else (*head, None, None, done) for s in task.statement_ids]
        or [(*head, None, None, done)],
        key=repr,
    )


# --- the tests -----------------------------------------------------------------------------------


def test_a_worker_s_key_is_the_one_the_orm_reads(world):
    runs, _, _ = world
    for run in runs:
        for worker in WORKERS:
            orm = LiteWorkerKey.objects.filter(pyramid=run, worker_id=worker).values_list("key_hash", flat=True).first()
            assert queries.stored_key(run.pk, worker) == orm


def test_a_key_is_added_only_for_a_worker_without_one(world):
    runs, _, _ = world
    for run in runs:
        for worker in WORKERS:
            had = LiteWorkerKey.objects.filter(pyramid=run, worker_id=worker).exists()
            with transaction.atomic():
                assert queries.add_key(run.pk, worker, "new-hash") is not had
                rows = sorted(LiteWorkerKey.objects.values_list("pyramid_id", "worker_id", "key_hash"))
                transaction.set_rollback(True)
            with transaction.atomic():
                if not had:
                    LiteWorkerKey.objects.create(pyramid=run, worker_id=worker, key_hash="new-hash")
                assert rows == sorted(LiteWorkerKey.objects.values_list("pyramid_id", "worker_id", "key_hash"))
                transaction.set_rollback(True)


def test_a_crowd_link_and_its_run_are_those_the_orm_reads(world):
    _, _, links = world
    for token in [link.token for link in links] + ["no-such-token"]:
        sql, orm = queries.crowd_link(token), CrowdLink.objects.select_related("pyramid").filter(token=token).first()
        assert (sql is None) is (orm is None)
        if orm is not None:
            for got, expected in ((sql, orm), (sql.pyramid, orm.pyramid)):
                names = [f.attname for f in type(expected)._meta.concrete_fields]
                assert [getattr(got, n) for n in names] == [getattr(expected, n) for n in names]
                assert not got._state.adding


def test_the_proposals_are_those_the_orm_makes(world):
    for link, worker, client, session, judges in _cases(world):
        p = _params(link, worker, client, session, judges)
        assert [tuple(int(v) for v in row) for row in queries.proposals(p)] == _proposals_orm(p), (
            link.batch,
            worker,
            judges,
        )
    link = world[2][0]
    assert queries.proposals(_params(link, "w2", limit=1)) == queries.proposals(_params(link, "w2"))[:1]


def test_a_client_s_holds_are_those_the_orm_counts(world):
    for link, worker, client, session, judges in _cases(world):
        p = _params(link, worker, client, session, judges)
        answered, count, soonest, held = queries.client_holds(p)
        assert (bool(answered), count, _when(soonest), held) == _client_holds_orm(p), (link.batch, worker, session)


def test_the_addresses_holding_slots_are_those_the_orm_counts(world):
    for link, worker, client, session, judges in _cases(world):
        p = _params(link, worker, client, session, judges)
        assert queries.addresses(p) == _addresses_orm(p)


def test_the_hold_to_take_over_is_the_one_the_orm_finds(world):
    for link, worker, client, session, judges in _cases(world):
        for share in (0, 1, 2):
            p = {**_params(link, worker, client, session, judges), "share": share}
            row = queries.hold_to_take_over(p)
            assert (tuple(row) if row else None) == _take_over_orm(p), (link.batch, worker, client, judges, share)


def _rows_after(change):
    with transaction.atomic():
        result = change()
        rows = sorted(
            (h.task_id, h.worker_id, h.client, h.session, h.expires_at) for h in LiteReservation.objects.all()
        )
        transaction.set_rollback(True)
    return result, rows


def test_a_hold_is_made_where_the_orm_makes_it(world):
    _, tasks, links = world
    for worker in ("w1", "w2", "w4", "new"):  # answered, holding live, holding expired, new
        for judges in (1, 3):
            for task in [t.pk for t in tasks] + [max(t.pk for t in tasks) + 1]:
                p = {**_params(links[0], worker, "a9", "", judges), "task": task}
                assert _rows_after(lambda p=p: queries.reserve(p)) == _rows_after(lambda p=p: _reserve_orm(p)), (
                    task,
                    worker,
                    judges,
                )


def test_a_hold_ends_as_the_orm_ends_it(world):
    p = _params(world[2][0], "w1")
    for hold in [*LiteReservation.objects.values_list("pk", flat=True), 999_999]:

        def orm(hold=hold):
            return LiteReservation.objects.filter(pk=hold, expires_at__gt=NOW).update(expires_at=NOW) == 1

        assert _rows_after(lambda hold=hold: queries.end_hold({**p, "hold": hold})) == _rows_after(orm)


def test_the_task_shown_is_the_one_the_orm_reads(world):
    _, tasks, _ = world
    for pk in [t.pk for t in tasks] + [999_999]:
        for worker in WORKERS:
            rows = [
                (*row[:5], json.loads(row[5]) if isinstance(row[5], str) else row[5], *row[6:])
                for row in queries.shown_task(pk, worker)
            ]
            assert sorted(rows, key=repr) == _shown_orm(pk, worker), (pk, worker)


def test_the_submitted_task_is_the_one_the_orm_reads(world):
    runs, tasks, _ = world
    for run in runs:
        for pk in [t.pk for t in tasks] + [999_999]:
            row = queries.submitted_task(pk, run.pk)
            orm = LiteTask.objects.filter(pk=pk, pyramid=run).values_list("id", "batch", "statement_ids").first()
            assert (row and (*row[:2], json.loads(row[2]) if isinstance(row[2], str) else row[2])) == (
                orm and tuple(orm)
            )


def test_a_worker_s_hold_of_a_task_is_the_one_the_orm_reads(world):
    runs, tasks, _ = world
    for run in runs:
        for task in tasks:
            for worker in WORKERS:
                row = queries.hold_of(task.pk, run.pk, worker)
                key = LiteWorkerKey.objects.filter(pyramid=run, worker_id=worker).first()
                hold = LiteReservation.objects.filter(task=task, worker_id=worker).first()
                orm = key and (
                    key.key_hash,
                    *((hold.id, hold.client, hold.session, hold.expires_at) if hold else (None,) * 4),
                )
                assert (row and (*row[:4], _when(row[4]))) == orm, (task.pk, worker)


def _answer_rows(change):
    """What ``change`` returns and leaves behind, rolled back: the holds, the answers (every field
    but the id) and the runs' revisions."""
    with transaction.atomic():
        result = change()
        holds = sorted(
            (h.task_id, h.worker_id, h.client, h.session, h.expires_at) for h in LiteReservation.objects.all()
        )
        answers = sorted(tuple(v for k, v in row.items() if k != "id") for row in LiteAssignment.objects.values())
        revisions = sorted(LightweightPyramid.objects.values_list("id", "revision"))
        transaction.set_rollback(True)
    return result, holds, answers, revisions


def test_an_answer_is_stored_as_the_orm_stores_it(world):
    """The answer's row, the holds removed with it (its own and the task's expired past ``late``)
    and the run's revision: as the ORM's create, delete and update leave them."""
    runs, tasks, _ = world
    for task in tasks:
        run = runs[0] if task.pyramid_id == runs[0].pk else runs[1]
        for hold in [*LiteReservation.objects.filter(task=task).values_list("pk", flat=True), 999_999]:
            for late in (_at(-100), _at(0), _at(1000)):
                record = {"platform": "mturk", "platform_assignment": "A1", "platform_task": "H1"} if hold % 2 else {}
                answer = LiteAssignment(
                    task=task,
                    worker_id="w9",
                    external_id="app:w9",
                    answers="pn",
                    completion_code="C0DE",
                    client="a1",
                    session="s1",
                    submitted_at=_at(5),
                    **record,
                )

                def ours(answer=answer, task=task, hold=hold, late=late, run=run):
                    values = {f: getattr(answer, f) for f in queries.ASSIGNMENT_FIELDS}
                    pk = queries.store_answer(
                        {
                            **values,
                            "task": task.pk,
                            "submitted_at": _adapt(answer.submitted_at),
                            "hold": hold,
                            "late": _adapt(late),
                            "run": run.pk,
                        }
                    )
                    return LiteAssignment.objects.filter(pk=pk).exists()

                def orm(answer=answer, task=task, hold=hold, late=late, run=run):
                    stored = LiteAssignment.objects.create(
                        **{f.attname: getattr(answer, f.attname) for f in LiteAssignment._meta.concrete_fields[1:]}
                    )
                    LiteAssignment.objects.filter(pk=stored.pk).update(submitted_at=answer.submitted_at)
                    LiteReservation.objects.filter(Q(pk=hold) | Q(expires_at__lte=late), task=task).delete()
                    LightweightPyramid.objects.filter(pk=run.pk).update(revision=F("revision") + 1)
                    return True

                assert _answer_rows(ours) == _answer_rows(orm), (task.pk, hold, late)


def test_an_answer_stored_twice_is_refused(world):
    """The worker's second answer to a task (another tab's, at the same moment) is the database's
    refusal, which ``submit_judgments`` answers as not held."""
    _, tasks, _ = world
    task = tasks[0]
    values = {
        "task": task.pk,
        "worker_id": "w9",
        "external_id": "app:w9",
        "origin": "app",
        "answers": "pn",
        "completion_code": "C0DE",
        "client": "a1",
        "session": "s1",
        "platform": "",
        "platform_assignment": "",
        "platform_task": "",
        "submitted_at": _adapt(NOW),
        "hold": 0,
        "late": _adapt(_at(-100)),
        "run": task.pyramid_id,
    }
    with transaction.atomic():
        queries.store_answer(values)
        with pytest.raises(IntegrityError), transaction.atomic():
            queries.store_answer({**values, "completion_code": "OTHER"})
        assert LiteAssignment.objects.filter(task=task, external_id="app:w9").count() == 1
        transaction.set_rollback(True)


@pytest.mark.postgres
def test_a_task_is_locked_where_the_orm_finds_it(world):
    _, tasks, _ = world
    for pk in [tasks[0].pk, 999_999]:
        with transaction.atomic():
            orm = LiteTask.objects.select_for_update(no_key=True).filter(pk=pk).exists()
            assert queries.lock_task(pk, skip_locked=True) is queries.lock_task(pk, skip_locked=False) is orm
        queries.lock_client("a1")  # an advisory lock, taken (only PostgreSQL has them)
