"""The peers package's SQL, written out where the ORM has no statement for it or spends more than
the database does (each function says which). Each has a twin in the ORM, in
tests/peers/test_queries.py, that reads the same rows."""

from __future__ import annotations

import functools

from django.db import connection
from django.utils import timezone

from annotation.corpus.models import Topic
from annotation.peers.models import AnnotationScore, PeerAnnotation, PeerMatch, PeerMatchPart
from annotation.pyramids.models import SCU, Pyramid


def store_scores(rows: list[tuple[int, str, tuple[int, int], dict]]) -> int:
    """Write each (annotation id, convention, (pyramid revision, annotation revision), values)
    unless a result from a newer state is stored, in one statement; returns how many were written.
    Raises ``IntegrityError`` when an annotation is gone (the caller drops it and stores the others).

    SQL because the ORM has no conditional upsert: ``bulk_create(update_conflicts=True)`` updates
    every conflicting row, and the condition (``ON CONFLICT ... DO UPDATE ... WHERE``, the same on
    SQLite and PostgreSQL) is what keeps a slow task from overwriting a fresher result without a
    lock or a read of the stored values."""
    table = AnnotationScore._meta.db_table
    values_field, at_field = AnnotationScore._meta.get_field("values"), AnnotationScore._meta.get_field("computed_at")
    now = at_field.get_db_prep_save(timezone.now(), connection)
    params = [
        p
        for a, c, (p_rev, a_rev), v in rows
        for p in (a, c, p_rev, a_rev, values_field.get_db_prep_save(v, connection), now)
    ]
    sql = (
        f"INSERT INTO {table} "
        '(annotation_id, convention, pyramid_revision, annotation_revision, "values", computed_at) '
        f"VALUES {', '.join(['(%s, %s, %s, %s, %s, %s)'] * len(rows))} "
        "ON CONFLICT (annotation_id, convention) DO UPDATE SET pyramid_revision = excluded.pyramid_revision, "
        'annotation_revision = excluded.annotation_revision, "values" = excluded."values", '
        "computed_at = excluded.computed_at "
        f"WHERE {table}.pyramid_revision <= excluded.pyramid_revision "
        f"AND {table}.annotation_revision <= excluded.annotation_revision"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


def bump_revisions(document_model, document_id: int, topic_id: int | None) -> int:
    """PostgreSQL only: move the document's revision (a pyramid's or a peer annotation's) and its
    topic's by one; returns the topic's id (``topic_id`` None: an annotation's, looked up in the
    same statement).

    SQL because the ORM cannot put an UPDATE in a WITH clause: these bumps run on every editing
    action, and as ORM updates they took two or three round trips instead of one."""
    document, topic, pyramid = (connection.ops.quote_name(m._meta.db_table) for m in (document_model, Topic, Pyramid))
    if topic_id is not None:
        sql = (
            f"WITH d AS (UPDATE {document} SET revision = revision + 1 WHERE id = %s) "
            f"UPDATE {topic} SET revision = revision + 1 WHERE id = %s"
        )
        params = [document_id, topic_id]
    elif document_model is PeerAnnotation:
        sql = (
            f"WITH d AS (UPDATE {document} SET revision = revision + 1 WHERE id = %s RETURNING pyramid_id) "
            f"UPDATE {topic} SET revision = {topic}.revision + 1 FROM {pyramid}, d "
            f"WHERE {pyramid}.id = d.pyramid_id AND {topic}.id = {pyramid}.topic_id RETURNING {topic}.id"
        )
        params = [document_id]
    else:
        raise ValueError("the topic of a pyramid is passed (it is on the pyramid's row)")
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return topic_id if topic_id is not None else cursor.fetchone()[0]


def match_rows(annotation_id: int) -> list[tuple]:
    """(match id, SCU id, SCU uid, review note, part id, start, end) of the annotation's matches
    joined with their parts (None for a match without parts) and SCUs, ordered by match, then part
    (start, end, id).

    SQL because every save reads them twice (the state before and after its change, for the
    history and the answer's delta): the ORM took 1.45 ms of CPU to compose and read them for a
    peer of ten matches, this statement 0.16 ms."""
    with connection.cursor() as cursor:
        cursor.execute(_match_rows_sql(), [annotation_id])
        return cursor.fetchall()


@functools.cache
def _match_rows_sql() -> str:
    q = connection.ops.quote_name
    match, part, scu = (q(m._meta.db_table) for m in (PeerMatch, PeerMatchPart, SCU))
    return (
        f"SELECT m.id, m.scu_id, s.uid, m.review_note, p.id, p.start, p.{q('end')} FROM {match} m "
        f"LEFT JOIN {part} p ON p.match_id = m.id LEFT JOIN {scu} s ON s.id = m.scu_id "
        f"WHERE m.annotation_id = %s ORDER BY m.id, p.start, p.{q('end')}, p.id"
    )
