"""The crowd's hot paths in SQL written out (PostgreSQL and SQLite alike, but where a function says
otherwise): composing these statements with the ORM cost more CPU than the database spends on
them (each says how much), on every crowd request. ``work`` decides; these read and write. Each
has a twin in the ORM, in tests/lightweight/test_queries.py, that gives the same rows."""

from __future__ import annotations

import functools

from django.db import connection
from django.utils import timezone

from annotation.corpus.models import PeerSummary
from annotation.lightweight.models import (
    CrowdLink,
    LightweightPyramid,
    LiteAssignment,
    LiteReservation,
    LiteStatement,
    LiteTask,
    LiteWorkerKey,
)

_KEYS = LiteWorkerKey._meta.db_table
_KEY_OF = f"SELECT key_hash FROM {_KEYS} WHERE pyramid_id = %s AND worker_id = %s"
_NEW_KEY = (
    f"INSERT INTO {_KEYS} (pyramid_id, worker_id, key_hash, created_at) VALUES (%s, %s, %s, %s) "
    f"ON CONFLICT (pyramid_id, worker_id) DO NOTHING RETURNING id"
)


def stored_key(run_id: int, worker: str) -> str | None:
    """The hash of ``worker``'s key in the run (``_KEY_OF``), None when it has none: read on every
    crowd request before anything else, as the judging page's statements (``_PROPOSALS``)."""
    with connection.cursor() as cursor:
        cursor.execute(_KEY_OF, [run_id, worker])
        row = cursor.fetchone()
    return row and row[0]


def add_key(run_id: int, worker: str, key_hash: str) -> bool:
    """Store ``key_hash`` as ``worker``'s key in the run unless it has one; whether it was stored.
    SQL because the ORM's ``bulk_create(ignore_conflicts=True)`` does not tell whether the row was
    inserted, and ``get_or_create`` takes two statements and a savepoint."""
    with connection.cursor() as cursor:
        now = connection.ops.adapt_datetimefield_value(timezone.now())
        cursor.execute(_NEW_KEY, [run_id, worker, key_hash, now])
        return cursor.fetchone() is not None


@functools.cache
def _link_reading() -> tuple[str, list]:
    """The statement reading a crowd link and its run (``crowd_link``), and for each table read its
    model, field names and each column's converters (those of the ORM's own reading: SQLite's text
    datetimes and decimals)."""
    columns, parts = [], []
    for model, alias in ((CrowdLink, "l"), (LightweightPyramid, "r")):
        fields = model._meta.concrete_fields
        columns += [f"{alias}.{connection.ops.quote_name(f.column)}" for f in fields]
        expressions = [f.get_col(alias) for f in fields]
        parts.append(
            (
                model,
                [f.attname for f in fields],
                [(e, connection.ops.get_db_converters(e) + e.get_db_converters(connection)) for e in expressions],
            )
        )
    return (
        f"SELECT {', '.join(columns)} FROM {CrowdLink._meta.db_table} l "
        f"JOIN {LightweightPyramid._meta.db_table} r ON r.id = l.pyramid_id WHERE l.token = %s"
    ), parts


def crowd_link(token: str) -> CrowdLink | None:
    """The crowd link of ``token`` with its run (``link.pyramid``), open or closed; None when there
    is none. Every crowd request reads them first, in one statement written out: the ORM's
    ``select_related`` query took about 1 ms of CPU to compose, a sixth of a crowd request."""
    sql, parts = _link_reading()
    with connection.cursor() as cursor:
        cursor.execute(sql, [token])
        row = cursor.fetchone()
    if row is None:
        return None
    objects, values = [], iter(row)
    for model, names, columns in parts:
        converted = []
        # strict=False: ``values`` is shared by the parts and runs on past this part's columns.
        for (expression, converters), value in zip(columns, values, strict=False):
            for convert in converters:
                value = convert(value, expression, connection)
            converted.append(value)
        objects.append(model.from_db(connection.alias, names, converted))
    link, link.pyramid = objects
    return link


# The judging page's hot path in SQL written out (PostgreSQL and SQLite alike): building these
# statements with the ORM took about 5 ms of CPU each on the 2-core machine, more than the database
# spends on them (the whole page is about 20).
_TASK, _ANSWER, _HOLD = (model._meta.db_table for model in (LiteTask, LiteAssignment, LiteReservation))
# The link's tasks this worker may judge: not answered by the worker, with an answer slot open. The
# one the worker holds first; then those with a free slot (answers and live holds together fewer
# than the judges asked for), most taken first, so tasks are completed before new ones are started
# (three workers judge the same tasks, and have pairs for their agreement); ties in each worker's
# own order (``work._spread``), so a crowd arriving together still spreads over the tasks equally taken
# instead of queueing for one; last those whose open slots are all held (a newcomer may take one
# over: ``work._take_over``). ``open``: the open slots of all the link's tasks (unanswered, held or
# not), the fair shares' total. Answers are counted by a join and the run's live holds grouped once
# (hash joins): correlated counts per task, evaluated for the filter and again for the order, took
# three times as long.
_PROPOSALS = f"""
SELECT id, mine, taken, open FROM (
    SELECT t.id, COALESCE(holds.mine, 0) AS mine, COUNT(a.id) AS answers,
           COUNT(a.id) + COALESCE(holds.n, 0) AS taken,
           MAX(CASE WHEN a.worker_id = %(worker)s THEN 1 ELSE 0 END) AS answered,
           SUM(CASE WHEN COUNT(a.id) < %(judges)s THEN %(judges)s - COUNT(a.id) ELSE 0 END) OVER () AS open
    FROM {_TASK} t
    LEFT JOIN {_ANSWER} a ON a.task_id = t.id
    LEFT JOIN (
        SELECT h.task_id, COUNT(*) AS n, MAX(CASE WHEN h.worker_id = %(worker)s THEN 1 ELSE 0 END) AS mine
        FROM {_HOLD} h JOIN {_TASK} ht ON ht.id = h.task_id
        WHERE ht.pyramid_id = %(run)s AND h.expires_at > %(now)s
        GROUP BY h.task_id
    ) holds ON holds.task_id = t.id
    WHERE t.pyramid_id = %(run)s AND (%(batch)s = 0 OR t.batch = %(batch)s)
    GROUP BY t.id, holds.n, holds.mine
) proposal
WHERE answered = 0 AND (mine = 1 OR answers < %(judges)s)
ORDER BY mine DESC, CASE WHEN taken < %(judges)s THEN 0 ELSE 1 END, taken DESC,
         (id * 2654435761 + %(spread)s) %% 1000003, id
LIMIT %(limit)s"""
_LOCK = f"SELECT id FROM {_TASK} WHERE id = %s FOR NO KEY UPDATE"
_LOCK_UNLESS_BUSY = _LOCK + " SKIP LOCKED"
# Hold a slot of the task if it has one free; never when the worker has answered it (in another
# tab, since the proposal). The worker's own expired hold, if any, is the conflicting row: it
# becomes the new hold; a live one stays as it is (a reload does not renew a hold).
_RESERVE = f"""
INSERT INTO {_HOLD} (task_id, worker_id, client, session, expires_at, created_at)
SELECT %(task)s, %(worker)s, %(client)s, %(session)s, %(until)s, %(now)s
WHERE EXISTS (SELECT 1 FROM {_TASK} WHERE id = %(task)s)
  AND NOT EXISTS (SELECT 1 FROM {_ANSWER} WHERE task_id = %(task)s AND worker_id = %(worker)s)
  AND (SELECT COUNT(*) FROM {_ANSWER} WHERE task_id = %(task)s)
      + (SELECT COUNT(*) FROM {_HOLD} WHERE task_id = %(task)s AND expires_at > %(now)s) < %(judges)s
ON CONFLICT (worker_id, task_id) DO UPDATE SET
    created_at = excluded.created_at, client = excluded.client, session = excluded.session,
    expires_at = excluded.expires_at
WHERE {_HOLD}.expires_at <= %(now)s"""
# Whether the worker has answered in the run (its holds are long ones), the session's live holds and
# when the first expires, and the link's task this worker holds, if another of its tabs took one meanwhile.
_CLIENT_HOLDS = f"""
SELECT EXISTS (SELECT 1 FROM {_ANSWER} a JOIN {_TASK} t ON t.id = a.task_id
               WHERE a.worker_id = %(worker)s AND t.pyramid_id = %(run)s),
       (SELECT COUNT(*) FROM {_HOLD} WHERE session = NULLIF(%(session)s, '') AND expires_at > %(now)s),
       (SELECT MIN(expires_at) FROM {_HOLD} WHERE session = NULLIF(%(session)s, '') AND expires_at > %(now)s),
       (SELECT MIN(h.task_id) FROM {_HOLD} h JOIN {_TASK} t ON t.id = h.task_id
        WHERE h.worker_id = %(worker)s AND t.pyramid_id = %(run)s AND (%(batch)s = 0 OR t.batch = %(batch)s)
          AND h.expires_at > %(now)s)"""
_LINK_HOLDS = f"""
FROM {_HOLD} h JOIN {_TASK} t ON t.id = h.task_id
WHERE t.pyramid_id = %(run)s AND (%(batch)s = 0 OR t.batch = %(batch)s) AND h.expires_at > %(now)s"""
# The address's live holds of the link's tasks, and how many other addresses hold some.
_ADDRESSES = f"""
SELECT COALESCE(SUM(CASE WHEN h.client = %(client)s THEN 1 ELSE 0 END), 0),
       COUNT(DISTINCT CASE WHEN h.client <> %(client)s THEN h.client END)
{_LINK_HOLDS}"""
# The hold to take over: the newest of the address holding the most over its fair share, on a task
# the worker has not answered and whose answers leave a slot.
_TAKE_OVER = f"""
WITH per_address AS (SELECT h.client, COUNT(*) AS n {_LINK_HOLDS} GROUP BY h.client)
SELECT h.id, h.task_id
{_LINK_HOLDS} AND h.client <> %(client)s
  AND NOT EXISTS (SELECT 1 FROM {_ANSWER} a WHERE a.task_id = h.task_id AND a.worker_id = %(worker)s)
  AND (SELECT COUNT(*) FROM {_ANSWER} a WHERE a.task_id = h.task_id) < %(judges)s
  AND h.client IN (SELECT client FROM per_address WHERE n > %(share)s)
ORDER BY (SELECT n FROM per_address WHERE per_address.client = h.client) DESC, h.created_at DESC, h.id DESC
LIMIT 1"""
_END_HOLD = f"UPDATE {_HOLD} SET expires_at = %(now)s WHERE id = %(hold)s AND expires_at > %(now)s"
# Serializes one address's new holds (PostgreSQL advisory lock space), so its share is counted exactly.
_CLIENT_LOCK = "SELECT pg_advisory_xact_lock(24, hashtext(%s))"


def proposals(params: dict) -> list[tuple[int, int, int, int]]:
    """``_PROPOSALS``: (task id, held by the worker 1/0, answers and live holds, the link's open
    slots) of the tasks the worker may judge, in the order they are proposed."""
    with connection.cursor() as cursor:
        cursor.execute(_PROPOSALS, params)
        return cursor.fetchall()


def lock_client(client: str) -> None:
    """PostgreSQL: take the address's advisory lock until the transaction ends (``_CLIENT_LOCK``);
    SQLite's write lock is database-wide already. SQL because advisory locks have no ORM form."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(_CLIENT_LOCK, [client])


def client_holds(params: dict) -> tuple:
    """``_CLIENT_HOLDS``: (the worker answered in the run, the session's live holds, when the
    first of them expires, the link's task the worker holds or None), in one round trip."""
    with connection.cursor() as cursor:
        cursor.execute(_CLIENT_HOLDS, params)
        return cursor.fetchone()


def lock_task(pk: int, *, skip_locked: bool) -> bool:
    """PostgreSQL: lock task ``pk``'s row until the transaction ends (``_LOCK``: FOR NO KEY UPDATE,
    with ``skip_locked`` not waiting for another request's lock); False when it is locked by
    another request (``skip_locked``) or gone. SQLite (its write lock is database-wide): True. SQL
    as the statements it guards; ``select_for_update(no_key=True, skip_locked=...)`` is the ORM's
    form of it."""
    if connection.vendor != "postgresql":
        return True
    with connection.cursor() as cursor:
        cursor.execute(_LOCK_UNLESS_BUSY if skip_locked else _LOCK, [pk])
        return cursor.fetchone() is not None


def reserve(params: dict) -> bool:
    """``_RESERVE``: hold a slot of ``params["task"]`` for the worker if one is free; whether it was
    held. SQL because the ORM has no INSERT ... SELECT ... WHERE, nor a conditional upsert: the
    check and the insert are one statement, so no other statement comes between them."""
    with connection.cursor() as cursor:
        cursor.execute(_RESERVE, params)
        return cursor.rowcount == 1


def addresses(params: dict) -> tuple[int, int]:
    """``_ADDRESSES``: (the address's live holds of the link's tasks, how many other addresses hold some)."""
    with connection.cursor() as cursor:
        cursor.execute(_ADDRESSES, params)
        mine, others = cursor.fetchone()
    return int(mine), int(others)


def hold_to_take_over(params: dict) -> tuple[int, int] | None:
    """``_TAKE_OVER``: (hold id, task id) of the hold to take over, None when there is none."""
    with connection.cursor() as cursor:
        cursor.execute(_TAKE_OVER, params)
        return cursor.fetchone()


def end_hold(params: dict) -> bool:
    """``_END_HOLD``: the live hold ``params["hold"]`` expires now; whether it was live."""
    with connection.cursor() as cursor:
        cursor.execute(_END_HOLD, params)
        return cursor.rowcount == 1


# The task shown, in one statement: the task, its peer's text, its statements (one row each, joined
# through the task's JSON list of ids, index lookups: the only part that differs between PostgreSQL
# and SQLite) and how many tasks of the run the worker has answered (the page's "done" figure,
# counted once, not per row). Three ORM queries did this before, a quarter of the judging page's
# CPU and two more round trips.
_SHOWN = f"""
SELECT t.id, t.pyramid_id, t.topic_id, t.batch, t.key, t.statement_ids, t.peer_id, p.text, s.id, s.text, done.n
FROM {_TASK} t JOIN {PeerSummary._meta.db_table} p ON p.id = t.peer_id
CROSS JOIN (SELECT COUNT(*) AS n FROM {_ANSWER} a JOIN {_TASK} at ON at.id = a.task_id
            WHERE at.pyramid_id = (SELECT pyramid_id FROM {_TASK} WHERE id = %(task)s)
              AND a.worker_id = %(worker)s) done
{{ids}}
LEFT JOIN {LiteStatement._meta.db_table} s ON s.id = CAST(ids.value AS integer)
WHERE t.id = %(task)s"""
_SHOWN_IDS = {
    "postgresql": "LEFT JOIN LATERAL jsonb_array_elements_text(t.statement_ids) AS ids(value) ON TRUE",
    "sqlite": "LEFT JOIN json_each(t.statement_ids) AS ids",
}


def shown_task(pk: int, worker: str) -> list[tuple]:
    """``_SHOWN``: the rows of task ``pk`` as the judging page shows it (none: no such task)."""
    with connection.cursor() as cursor:
        cursor.execute(_SHOWN.format(ids=_SHOWN_IDS[connection.vendor]), {"task": pk, "worker": worker})
        return cursor.fetchall()


# A submission's statements in SQL written out (as the page's, ``_PROPOSALS``): composing them with
# the ORM was a third of a submission's CPU. The task is read as it is locked (FOR NO KEY UPDATE on
# PostgreSQL, as ``_LOCK``; SQLite takes its database-wide write lock at BEGIN); the worker's hold
# is read by the next statement, once the lock is granted; the hold, and the task's holds expired
# past their late answer, are deleted as the answer is stored.
_SUBMITTED_TASK = {
    vendor: f"SELECT id, batch, statement_ids FROM {_TASK} WHERE id = %s AND pyramid_id = %s" + lock
    for vendor, lock in (("postgresql", " FOR NO KEY UPDATE"), ("sqlite", ""))
}
# The worker's key in the run, and its hold of the task if any (no row: the worker has no key).
_HOLD_OF = f"""
SELECT k.key_hash, h.id, h.client, h.session, h.expires_at
FROM {_KEYS} k LEFT JOIN {_HOLD} h ON h.task_id = %(task)s AND h.worker_id = k.worker_id
WHERE k.pyramid_id = %(run)s AND k.worker_id = %(worker)s"""


# The answer stored, the holds it answers (and the task's holds expired past their late answer)
# deleted and the run's revision bumped (its scores stale): the last statement of a submission, under
# the task's lock. On PostgreSQL one statement (data-modifying CTEs); SQLite has none, and runs the
# three parts in turn: two statements and round trips fewer while the task's lock is held, and no
# ORM create or update to compose (7 statements a submission instead of 9 in tests/lightweight/test_crowd_cost.py).
ASSIGNMENT_FIELDS = (
    "task",
    "worker_id",
    "external_id",
    "origin",
    "answers",
    "completion_code",
    "client",
    "session",
    "platform",
    "platform_assignment",
    "platform_task",
    "submitted_at",
)
_STORE_ANSWER = (
    f"INSERT INTO {_ANSWER} ({', '.join(LiteAssignment._meta.get_field(f).column for f in ASSIGNMENT_FIELDS)}) "
    f"VALUES ({', '.join(f'%({f})s' for f in ASSIGNMENT_FIELDS)}) RETURNING id"
)
_CLEAR_HOLDS = f"DELETE FROM {_HOLD} WHERE task_id = %(task)s AND (id = %(hold)s OR expires_at <= %(late)s)"
_BUMP_RUN = f"UPDATE {LightweightPyramid._meta.db_table} SET revision = revision + 1 WHERE id = %(run)s"
_STORE_ANSWERED = (
    f"WITH answer AS ({_STORE_ANSWER}), cleared AS ({_CLEAR_HOLDS}), touched AS ({_BUMP_RUN}) SELECT id FROM answer"
)


def store_answer(values: dict) -> int:
    """``_STORE_ANSWERED``: the answer (``values``: the ``ASSIGNMENT_FIELDS``, ``task`` its id,
    ``submitted_at`` adapted) stored, ``values["hold"]`` and the task's holds expired by
    ``values["late"]`` deleted, run ``values["run"]``'s revision bumped; the answer's id. Raises
    ``IntegrityError`` when the worker's answer to the task is stored already (another tab's)."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(_STORE_ANSWERED, values)
            return cursor.fetchone()[0]
        cursor.execute(_STORE_ANSWER, values)
        pk = cursor.fetchone()[0]
        cursor.execute(_CLEAR_HOLDS, values)
        cursor.execute(_BUMP_RUN, values)
        return pk


def submitted_task(pk: int, run_id: int) -> tuple | None:
    """``_SUBMITTED_TASK``: (id, batch, statement ids) of the run's task ``pk``, locked (PostgreSQL);
    None when the run has no such task."""
    with connection.cursor() as cursor:
        cursor.execute(_SUBMITTED_TASK[connection.vendor], [pk, run_id])
        return cursor.fetchone()


def hold_of(task: int, run_id: int, worker: str) -> tuple | None:
    """``_HOLD_OF``: (key hash, hold id, client, session, expires at) of ``worker`` in the run, the
    hold's None when it holds no slot of ``task``; None when the worker has no key."""
    with connection.cursor() as cursor:
        cursor.execute(_HOLD_OF, {"task": task, "run": run_id, "worker": worker})
        return cursor.fetchone()
