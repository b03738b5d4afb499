"""Hand-written SQL lives in a concept's ``queries.py`` (each statement with its ORM twin test), and
the private parts of Django, redis-py and django-csp the app relies on only in
``annotation/jobs/framework_internals.py`` (each with a test that fails when an upgrade changes
it): a cursor or a private attribute anywhere else fails here, with the file and line. The one
cursor of framework_internals runs statements Django compiled (``kept_rows``), none written there."""

import re

from tests.conftest import REPO

SQL = re.compile(r"\.cursor\(|\.raw\(|\bRawSQL\b|\.extra\(")
PRIVATE = re.compile(
    r"\._cache\b|\._connections\b|\._alias\b|\brun_on_commit\b|\._password\b|\._csp_\w+|\.chain\(\)|\.sql_with_params\("
)
WRITTEN_SQL = re.compile(r"[\"'](?:SELECT|INSERT|UPDATE|DELETE|WITH)\b", re.IGNORECASE)
INTERNALS = REPO / "annotation" / "jobs" / "framework_internals.py"


def _app_files():
    for package in ("annotation", "frontend", "pyramid_app"):
        for path in sorted((REPO / package).rglob("*.py")):
            if "migrations" not in path.parts:
                yield path


def _found(pattern, keep) -> list[str]:
    return [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for path in _app_files()
        if not keep(path)
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if pattern.search(line)
    ]


def test_hand_written_sql_is_only_in_query_modules():
    assert _found(SQL, lambda path: path.name == "queries.py" or path == INTERNALS) == []
    assert not WRITTEN_SQL.search(INTERNALS.read_text())


def test_private_framework_parts_are_only_behind_framework_internals():
    assert _found(PRIVATE, lambda path: path == INTERNALS) == []
