from django.core.management.base import BaseCommand, CommandError

from annotation.lightweight.models import LightweightPyramid
from annotation.lightweight.scores import LEVELS, export_rows, settings_of
from annotation.peers.results import write_rows
from scoring.lightweight import AgreementMeasure, BlankPolicy


class Command(BaseCommand):
    help = (
        "Export a lightweight pyramid's scores, worker agreement or labels (settings options override the stored ones)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--name", help="the lightweight pyramid within the dataset (needed when it has several)")
        parser.add_argument("--level", choices=list(LEVELS), required=True)
        parser.add_argument("--agreement", choices=[m.value for m in AgreementMeasure])
        parser.add_argument("--threshold", type=float)
        parser.add_argument("--blank", choices=[b.value for b in BlankPolicy])
        parser.add_argument("--topic-filter", type=float, help="percent of topics (lowest crowd alpha) to leave out")
        parser.add_argument("--format", choices=["json", "csv"], required=True)
        counted = parser.add_mutually_exclusive_group()
        counted.add_argument(
            "--verified-only",
            dest="verified_only",
            action="store_true",
            default=None,
            help="count only the answers whose completion code the platform confirmed",
        )
        counted.add_argument("--all-answers", dest="verified_only", action="store_false", help="count every answer")
        parser.add_argument("--pseudonyms", action="store_true", help="worker ids as the run's pseudonyms")

    def handle(
        self,
        *args,
        dataset,
        name=None,
        level,
        agreement=None,
        threshold=None,
        blank=None,
        topic_filter=None,
        format="json",
        verified_only=None,
        pseudonyms=False,
        **options,
    ):
        runs = LightweightPyramid.objects.filter(dataset__name=dataset)
        if name:
            runs = runs.filter(name=name)
        runs = list(runs)
        if not runs:
            raise CommandError(f"no lightweight pyramid in dataset {dataset!r}" + (f" named {name!r}" if name else ""))
        if len(runs) > 1:
            raise CommandError(
                f"dataset {dataset!r} has several lightweight pyramids "
                f"({', '.join(r.name for r in runs)}): choose one with --name"
            )
        try:
            settings = settings_of(
                runs[0], agreement=agreement, threshold=threshold, blank=blank, topic_filter=topic_filter
            )
        except ValueError as error:
            raise CommandError(str(error)) from None
        out, columns = export_rows(runs[0], level, settings, verified_only, pseudonyms)
        write_rows(self.stdout, out, columns, format)
