"""What export_scores and export_agreement share: output formats and options."""
import csv
import json

from django.core.management.base import BaseCommand, CommandError

from scoring.model import Convention


def write_rows(stream, rows: list[dict], keys: tuple[str, ...], fmt: str) -> None:
    if fmt == "json":
        stream.write(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
        return
    writer = csv.DictWriter(stream, fieldnames=list(keys), extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: json.dumps(v) if isinstance(v, (dict, list)) else ("" if v is None else v) for k, v in row.items()})


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
        from annotation.services.results import topics_of

        if dataset and not Dataset.objects.filter(name=dataset).exists():
            raise CommandError(f"no dataset named {dataset!r}")
        write_rows(self.stdout, self.rows(topics_of(dataset), Convention(convention)), self.keys, format)
