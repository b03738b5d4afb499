"""A database made before a change of layout upgrades to exactly the schema of a fresh one.

Moving models between modules must rename no table, column, constraint, index or trigger unless a
migration does it: a database migrated by main before the layout by concept (its schema and
``django_migrations`` kept as ``fixtures/schema-before-layout.sql``, from ``pg_dump``) is migrated
by today's code and compared, names included, with a database migrated from scratch.
"""

import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]
DUMP = Path(__file__).parent / "fixtures" / "schema-before-layout.sql"

SCHEMA_QUERIES = {
    "columns": """SELECT table_name, column_name, data_type, character_maximum_length, is_nullable, column_default
                  FROM information_schema.columns WHERE table_schema = 'public' ORDER BY 1, 2""",
    "constraints": """SELECT rel.relname, con.conname, con.contype, pg_get_constraintdef(con.oid)
                      FROM pg_constraint con JOIN pg_class rel ON rel.oid = con.conrelid
                      JOIN pg_namespace ns ON ns.oid = rel.relnamespace WHERE ns.nspname = 'public' ORDER BY 1, 2""",
    "indexes": "SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1, 2",
    "triggers": """SELECT tgrelid::regclass::text, tgname, pg_get_triggerdef(oid) FROM pg_trigger
                   WHERE NOT tgisinternal ORDER BY 1, 2""",
    "functions": """SELECT proname, prosrc FROM pg_proc p JOIN pg_namespace ns ON ns.oid = p.pronamespace
                    WHERE ns.nspname = 'public' ORDER BY 1""",
    "migrations": "SELECT app, name FROM django_migrations ORDER BY 1, 2",
}


def server_url(database: str) -> str:
    params = connection.settings_dict
    return f"postgresql://{params['USER']}@{params['HOST'] or '127.0.0.1'}:{params['PORT'] or 5432}/{database}"


def schema(url: str) -> dict:
    with psycopg.connect(url) as conn:
        return {name: conn.execute(query).fetchall() for name, query in SCHEMA_QUERIES.items()}


def migrate(url: str) -> None:
    env = {**os.environ, "DATABASE_URL": url, "DEBUG": "1"}
    env.pop("REDIS_URL", None)  # no broker needed to migrate
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT, env=env, check=True, timeout=600
    )


@pytest.fixture
def databases_made(db):
    if connection.vendor != "postgresql":
        pytest.skip("the dump is PostgreSQL's (CI runs on PostgreSQL)")
    names = [f"{connection.settings_dict['NAME']}_{kind}" for kind in ("before", "fresh")]
    with psycopg.connect(server_url("postgres"), autocommit=True) as admin:
        for name in names:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
            admin.execute(f'CREATE DATABASE "{name}"')
    yield [server_url(name) for name in names]
    with psycopg.connect(server_url("postgres"), autocommit=True) as admin:
        for name in names:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_a_database_made_before_the_layout_upgrades_to_the_fresh_schema(databases_made):
    before, fresh = databases_made
    with psycopg.connect(before, autocommit=True) as conn:
        conn.execute(DUMP.read_text())
    made_before = schema(before)
    assert ("annotation", "0013_crowd_clients") in made_before["migrations"] and len(made_before["constraints"]) > 100
    migrate(before)
    migrate(fresh)
    upgraded, new = schema(before), schema(fresh)
    for part in SCHEMA_QUERIES:
        assert upgraded[part] == new[part], part
