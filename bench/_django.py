"""Set-up shared by the benchmarks that run inside Django (not the browser ones: bench/_browser.py)."""

import os
import tempfile
from pathlib import Path


def fresh_database() -> Path:
    """Django on a database of the benchmark's own: DATABASE_URL if set (PostgreSQL is flushed),
    else a new SQLite file; development settings, quiet logs, migrated. Returns a temporary folder
    the benchmark may write to."""
    tmp = Path(tempfile.mkdtemp())
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{tmp}/bench.sqlite3")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pyramid_app.settings")
    os.environ.setdefault("DEBUG", "1")  # a local benchmark: development settings
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    if connection.vendor == "postgresql":
        call_command("flush", interactive=False, verbosity=0)
    call_command("migrate", verbosity=0)
    return tmp
