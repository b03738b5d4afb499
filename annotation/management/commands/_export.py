"""What export_scores and export_agreement share: their options (rows are written by services.results.write_rows)."""
from django.core.management.base import BaseCommand, CommandError

from scoring.model import Convention


class ExportCommand(BaseCommand):
    keys: tuple[str, ...] = ()

    def add_arguments(self, parser):
        parser.add_argument("--dataset", help="only this dataset (default: all)")
        parser.add_argument("--convention", choices=[c.value for c in Convention], default=Convention.NIST.value)
        parser.add_argument("--format", choices=["json", "csv"], required=True)

    def rows(self, topics, convention: Convention) -> list[dict]:
        raise NotImplementedError

    def handle(self, *args, dataset=None, convention="nist", format="json", **options):
        from annotation.models import Dataset
        from annotation.services.results import topics_of, write_rows

        if dataset and not Dataset.objects.filter(name=dataset).exists():
            raise CommandError(f"no dataset named {dataset!r}")
        write_rows(self.stdout, self.rows(topics_of(dataset), Convention(convention)), self.keys, format)
