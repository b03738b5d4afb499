"""The flush after a transactional test (``tests/conftest.py``, ``deleting_flush``): on PostgreSQL one
DELETE a table instead of a TRUNCATE of them all, which must still leave every table of the app empty
whatever references what."""

import pytest
from django.apps import apps
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connection
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
    # Django's post_migrate handlers put back what every database has (content types, permissions).
    left = {model.__name__ for model in apps.get_models() if model.objects.exists()}
    assert left <= {"ContentType", "Permission", "Group"}, left
