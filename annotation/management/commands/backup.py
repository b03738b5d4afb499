from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.transfer.backup import BackupError, backup


class Command(BaseCommand):
    help = (
        "Write a consistent copy of the whole database to FILE while the app runs: SQLite's online backup "
        "(a SQLite file), PostgreSQL's pg_dump --format=custom (see docs/backup.md). FILE is replaced only "
        "once complete."
    )
    # Like the export commands: no system checks (the URL check imports every view), a backup needs none.
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path, help="the backup file to write")

    def handle(self, *args, file, **options):
        try:
            written = backup(file)
        except BackupError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"Wrote {written.path} ({written.size:,} bytes, {written.engine} backup).")
