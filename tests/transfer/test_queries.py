"""The transfer package's SQL (``annotation.transfer.queries``) against an ORM formulation of the
same statement, on a populated world (two datasets, three topics, pyramids, annotations): both
write, or read, the same rows, edge cases included."""

from datetime import UTC, datetime

import pytest
from django.apps import apps
from django.db import connection, transaction

from annotation.corpus.models import ReferenceSummary
from annotation.peers.models import PeerAnnotation, PeerMatch
from annotation.pyramids.models import SCU, Contributor, Pyramid
from annotation.transfer import backup, queries

from tests.foundation import factories


@pytest.fixture
def world(db):
    """Topics T1, T2 (dataset D1) and T3 (D2), each with a pyramid of two SCUs and an annotation."""
    for name, dataset in (("T1", "D1"), ("T2", "D1"), ("T3", "D2")):
        t, references = factories.topic(name, dataset)
        p, _ = factories.pyramid(t, references, uids=(1, 2))
        factories.annotation(t, p)


def _written(model, fields, insert):
    """The rows ``insert()`` adds to ``model``'s table (the ``fields``, in the order of the ids it
    returns, else of the primary key), then rolled back."""
    with transaction.atomic():
        before = set(model.objects.values_list("pk", flat=True))
        ids = insert()
        new = model.objects.exclude(pk__in=before)
        order = {pk: i for i, pk in enumerate(ids)} if ids else None
        rows = sorted(new.values_list("pk", *fields), key=(lambda r: order[r[0]]) if ids else (lambda r: r[0]))
        transaction.set_rollback(True)
    if ids:
        assert sorted(ids) == sorted(r[0] for r in rows)  # the ids returned are those of the new rows
    return [r[1:] for r in rows]


def _same_as_bulk_create(model, fields, rows, *, returning):
    """``insert_rows`` writes what ``bulk_create`` of the same values writes (ids returned in order)."""
    sql = _written(model, fields, lambda: queries.insert_rows(model, fields, rows, returning=returning))

    def orm():
        objects = model.objects.bulk_create(
            [model(**{model._meta.get_field(f).attname: v for f, v in zip(fields, row, strict=True)}) for row in rows]
        )
        return [o.pk for o in objects] if returning else []

    assert sql == _written(model, fields, orm)
    return sql


def test_inserting_no_rows_writes_nothing(world):
    assert _same_as_bulk_create(SCU, ("pyramid", "uid", "label", "comment"), [], returning=True) == []


def test_inserted_rows_and_their_ids_are_those_of_bulk_create(world):
    pyramids = list(Pyramid.objects.order_by("pk"))
    rows = [
        (p.pk, uid, f"Label {uid} of {p.pk}", "" if uid % 3 else "a comment")
        for p in pyramids
        for uid in range(10, 110)
    ]
    # more rows than one SQLite statement takes (900 parameters), over several pyramids
    written = _same_as_bulk_create(SCU, ("pyramid", "uid", "label", "comment"), rows, returning=True)
    assert written == [(p, uid, label, comment) for p, uid, label, comment in rows]


def test_inserted_rows_keep_nulls_timestamps_and_empty_texts(world):
    scus = list(SCU.objects.order_by("pk"))
    annotations = list(PeerAnnotation.objects.order_by("pk"))
    when = datetime(2006, 5, 4, 3, 2, 1, tzinfo=UTC)
    stamp = PeerMatch._meta.get_field("created_at").get_db_prep_save(when, connection)
    rows = [
        (a.pk, scu.pk if scu.pyramid_id == a.pyramid_id else None, note, stamp)
        for a in annotations
        for scu in scus
        for note in ("", "why")
    ]
    fields = ("annotation", "scu", "review_note", "created_at")
    sql = _written(PeerMatch, fields, lambda: queries.insert_rows(PeerMatch, fields, rows, returning=True))
    orm = _written(
        PeerMatch,
        fields,
        lambda: [
            m.pk
            for m in PeerMatch.objects.bulk_create(
                [PeerMatch(annotation_id=a, scu_id=s, review_note=n) for a, s, n, _ in rows]
            )
        ],
    )
    # bulk_create stamps ``created_at`` itself (auto_now_add); the SQL keeps the moment it is given
    assert [row[:3] for row in sql] == [row[:3] for row in orm] and {row[3] for row in sql} == {when}
    assert sum(row[1] is None for row in sql) == len(rows) - 2 * 2 * len(annotations)


def test_rows_inserted_without_their_ids_are_those_of_bulk_create(world):
    references = list(ReferenceSummary.objects.order_by("pk"))
    rows = [
        (scu.pk, reference.pk, f"{scu.uid}", "", "a note" if reference.pk % 2 else "")
        for scu in SCU.objects.order_by("pk")
        for reference in references
        if reference.topic_id == scu.pyramid.topic_id
    ]
    _same_as_bulk_create(
        Contributor, ("scu", "reference", "comment", "legacy_issue", "review_note"), rows, returning=False
    )


def _tables_with_rows_orm(skipped) -> list[str]:
    """The ORM's reading: the tables of the models (with their many-to-many tables) holding a row."""
    models = apps.get_models(include_auto_created=True)
    return sorted(m._meta.db_table for m in models if m._meta.db_table not in skipped and m._base_manager.exists())


def _model_tables():
    return {m._meta.db_table for m in apps.get_models(include_auto_created=True)}


@pytest.mark.parametrize("populated", [False, True], ids=["migrated only", "populated"])
def test_tables_with_rows_are_those_the_orm_finds(request, populated):
    if populated:
        request.getfixturevalue("world")
    else:
        request.getfixturevalue("db")
    held = queries.tables_with_rows(backup.MIGRATE_TABLES)
    assert [t for t in held if t in _model_tables()] == _tables_with_rows_orm(backup.MIGRATE_TABLES)
    assert ("annotation_scu" in held) is populated
    assert "django_migrations" not in held and "django_migrations" in queries.tables_with_rows(set())
