from django.core.management.base import BaseCommand, CommandError

from annotation.lightweight.importing import get_run, import_paths


class Command(BaseCommand):
    help = (
        "Import lightweight-pyramid files: Phase-2 results CSVs (MTurk, REALSumm), folders of them, "
        "Lite2-3Pyramid folders, statement lists and Phase-1 results. Re-importing adds nothing twice."
    )

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", help="CSV files, folders of CSV files, or Lite2-3Pyramid folders")
        parser.add_argument("--dataset", required=True, help="dataset name (created if absent)")
        parser.add_argument(
            "--name", default="imported", help="the lightweight pyramid (run) within the dataset (default: imported)"
        )

    def handle(self, *args, paths, dataset, name, **options):
        run = get_run(dataset, name)
        reports = import_paths(run, paths)
        self.stdout.write(f"Dataset: {dataset}, lightweight pyramid: {name}")
        for report in reports:
            if report.error:
                self.stderr.write(self.style.ERROR("rejected " + report.line()))
            else:
                self.stdout.write("  " + report.line())
        rejected = sum(1 for r in reports if r.error)
        if rejected:
            raise CommandError(f"{rejected} file(s) rejected; nothing of them was written")
