"""The health check's SQL (``annotation.jobs.queries``): the write probe touches the row an ORM
formulation of it touches, and changes nothing."""

import pytest
from django.db import transaction
from django.db.migrations.recorder import MigrationRecorder
from django.db.models import F

from annotation.jobs import queries

Migration = MigrationRecorder.Migration


def _rows():
    return list(Migration.objects.order_by("pk").values_list("pk", "app", "name", "applied"))


def _write_one_row_back_orm() -> int:
    first = Migration.objects.order_by("pk").values("pk")[:1]
    return Migration.objects.filter(pk__in=first).update(app=F("app"))


def _rolled_back(change):
    with transaction.atomic():
        written = change()
        rows = _rows()
        transaction.set_rollback(True)
    return written, rows


def test_the_database_answers(db):
    assert queries.select_one() == 1


@pytest.mark.parametrize("empty", [False, True], ids=["migrated", "empty"])
def test_the_write_probe_writes_the_row_the_orm_writes_and_changes_nothing(db, empty):
    with transaction.atomic():
        if empty:
            Migration.objects.all().delete()
        before = _rows()
        assert len(before) == (0 if empty else len(before)) and (empty or before)
        sql, orm = _rolled_back(queries.write_one_row_back), _rolled_back(_write_one_row_back_orm)
        assert sql == orm == (0 if empty else 1, before)
        transaction.set_rollback(True)
