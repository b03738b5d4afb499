"""The flush after a transactional test (``tests/conftest.py``, ``deleting_flush``): on PostgreSQL one
DELETE a table instead of a TRUNCATE of them all, which must still leave every table of the app empty
whatever references what, and keep the rows post_migrate would write back (no post_migrate sent)."""

import pytest
from django.apps import apps
from django.contrib.auth.management import create_permissions
from django.contrib.auth.models import Permission, User
from django.contrib.contenttypes.management import create_contenttypes
from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.core.management.sql import emit_post_migrate_signal
from django.db import connection
from django.db.models.signals import post_migrate
from django.test.utils import CaptureQueriesContext

from annotation.peers.models import PeerMatch
from annotation.pyramids.editing import add_contributor

from tests.foundation.factories import annotation, pyramid, topic


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_flush_deletes_every_row_whatever_references_it():
    t, references = topic()
    p, scus = pyramid(t, references, uids=(1, 2))
    add_contributor(scus[1], references["A"], [(0, 5)])
    annotated = annotation(t, p, annotator=User.objects.create_user("ann"))
    PeerMatch.objects.create(annotation=annotated, scu=scus[1])
    tables = [model for model in apps.get_models() if model.objects.exists()]
    assert len(tables) >= 10, tables  # rows in tables that reference each other, and history written by signals
    with CaptureQueriesContext(connection) as flushed:
        # As Django's TransactionTestCase (pytest-django's transactional_db) ends a test.
        call_command("flush", verbosity=0, interactive=False, reset_sequences=False, allow_cascade=False)
    statements = [query["sql"] for query in flushed.captured_queries]
    assert not any("TRUNCATE" in sql for sql in statements), statements
    assert sum(sql.startswith("DELETE FROM") for sql in statements) >= len(tables)
    # What post_migrate's handlers would write back (content types, permissions) is kept, not rewritten.
    left = {model.__name__ for model in apps.get_models() if model.objects.exists()}
    assert left == {"ContentType", "Permission"}, left


def _kept() -> tuple[list, list]:
    return (
        list(ContentType.objects.order_by("pk").values_list("pk", "app_label", "model")),
        list(Permission.objects.order_by("pk").values_list("pk", "content_type", "codename")),
    )


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_flush_keeps_exactly_what_post_migrate_would_write_back():
    """The flush keeps the content types and permissions and sends no post_migrate: right only while
    those two tables are all its receivers write, so a new receiver fails here until it is looked at."""
    receivers = {entry[1]() for entry in post_migrate.receivers}  # (key, weak reference, ...)
    assert receivers == {create_contenttypes, create_permissions}, receivers
    before = _kept()
    assert len(before[0]) >= len(apps.get_models()) and len(before[1]) >= 4 * len(apps.get_models())
    call_command("flush", verbosity=0, interactive=False, reset_sequences=False, allow_cascade=False)
    assert _kept() == before  # the same rows, ids included
    emit_post_migrate_signal(0, False, connection.alias)  # what the flush no longer sends: adds nothing
    assert _kept() == before


@pytest.mark.postgres
@pytest.mark.django_db
def test_the_truncating_flush_keeps_them_too():
    """Django's TRUNCATE, which the flush still uses when asked to reset sequences or cascade, spares
    the same tables (none of the suite's tests asks for it today)."""
    from django.core.management.color import no_style

    from tests.conftest import KEPT_BY_FLUSH, deleting_flush

    tables = connection.introspection.django_table_names(only_existing=True)
    assert KEPT_BY_FLUSH <= set(tables)
    for options in ({"reset_sequences": True}, {"allow_cascade": True}):
        statements = deleting_flush(connection.ops, no_style(), tables, **options)
        flushed = " ".join(statements)
        assert "TRUNCATE" in flushed and "annotation_peermatch" in flushed, statements
        assert not any(table in flushed for table in KEPT_BY_FLUSH), statements
