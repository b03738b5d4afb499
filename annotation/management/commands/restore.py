from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.peers.recompute import schedule_stale
from annotation.transfer.backup import BackupError, restore


class Command(BaseCommand):
    help = (
        "Replace the configured database (DATABASE_URL) with a backup written by `manage.py backup`. "
        "Refused when the database already holds data, unless --force. Stop the app first (see docs/backup.md)."
    )
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path, help="the backup file to restore")
        parser.add_argument("--force", action="store_true", help="replace a database that already holds data")

    def handle(self, *args, file, force=False, **options):
        try:
            restored = restore(file, force=force)
        except BackupError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"Restored {restored.path} ({restored.size:,} bytes, {restored.engine} backup).")
        for line in restored.source:
            self.stdout.write(f"  {line}")
        if restored.pending_migrations:
            self.stdout.write(
                f"The backup predates {len(restored.pending_migrations)} migration(s) of this code "
                f"({', '.join(restored.pending_migrations[:3])}...): run `python manage.py migrate`, "
                "then `python manage.py recompute_stale`."
            )
            return
        self.stdout.write("Now holding: " + ", ".join(f"{label} {n}" for label, n in restored.counts.items()) + ".")
        # Scores, agreement and dashboards are stored: only what was stale when the backup was taken is recomputed.
        annotations, topics = schedule_stale()
        self.stdout.write(f"Stale results: {annotations} annotation(s) and {topics} topic(s) sent for recomputation.")
