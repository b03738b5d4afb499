from django.core.management.base import BaseCommand, CommandError

from annotation.transfer.ducview_import import freeze_for_process
from annotation.transfer.pyramid_sets import import_pyramid_set


class Command(BaseCommand):
    help = (
        "Import several DUCView pyramids (.pyr) of the same reference summaries into one topic, when the files "
        "hold their own copies of the texts (other ids, spaces, line breaks): reference i of every file is "
        "reference i of the first file (in path order), every span is moved onto its text, and the pyramids "
        "share the topic's references, so their construction agreement can be computed. "
        "E.g. the PyrEval MATTER pyramids: import_pyramid_set --dataset PyrEval --topic MATTER FOLDER"
    )
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", help=".pyr files or directories (searched recursively)")
        parser.add_argument("--dataset", required=True, help="dataset name (created if needed)")
        parser.add_argument("--topic", required=True, help="topic id (created if needed)")

    def handle(self, *args, paths, dataset, topic, **options):
        freeze_for_process()  # the import and its scoring: nothing else runs in this process
        try:
            report = import_pyramid_set(paths, dataset, topic)
        except FileNotFoundError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"Dataset: {dataset}, topic: {topic}")
        for line in report.summary_lines():
            self.stdout.write("  " + line)
        for item in report.repairs:
            self.stdout.write("  repair: " + item)
        for item in report.rejected:
            self.stderr.write(self.style.ERROR("rejected " + item))
        if report.rejected:
            raise CommandError(f"{len(report.rejected)} file(s) rejected")
