"""What export_scores and export_agreement share: their options (rows are written by peers.results.write_rows)."""

from django.core.management.base import BaseCommand, CommandError

from scoring.model import Convention


class ExportCommand(BaseCommand):
    keys: tuple[str, ...] = ()
    # Data commands skip Django's system checks: the URL check imports every view (the API's pull in
    # scipy), most of a second of start-up for a command that only reads (``manage.py check`` runs them).
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("--dataset", help="only this dataset (default: all)")
        parser.add_argument("--convention", choices=[c.value for c in Convention], default=Convention.NIST.value)
        parser.add_argument("--format", choices=["json", "csv"], required=True)
        parser.add_argument(
            "--include-unfinished",
            action="store_true",
            help="also count annotations not marked done that have at least one match (rows say their status)",
        )

    def rows(self, topics, convention: Convention, include_unfinished: bool) -> list[dict]:
        raise NotImplementedError

    def columns(self, include_unfinished: bool) -> tuple[str, ...]:
        return self.keys

    def handle(self, *args, dataset=None, convention="nist", format="json", include_unfinished=False, **options):
        from annotation.corpus.models import Dataset
        from annotation.peers.results import topics_of, write_rows

        if dataset and not Dataset.objects.filter(name=dataset).exists():
            raise CommandError(f"no dataset named {dataset!r}")
        rows = self.rows(topics_of(dataset), Convention(convention), include_unfinished)
        write_rows(self.stdout, rows, self.columns(include_unfinished), format)
