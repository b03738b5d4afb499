import sys
from pathlib import Path

from django.core.files import File
from django.core.management.base import BaseCommand, CommandError

from annotation.corpus.models import Dataset
from annotation.formats import AnnotatorTable, AnnotatorTableError, NameOptions, parse_annotator_table
from annotation.transfer import uploads
from annotation.transfer.ducview_import import ImportReport, freeze_for_process, import_paths


class Command(BaseCommand):
    help = (
        "Import DUCView .pyr and .pan files (files or directories, recursively). Any file name imports: the topic "
        "comes from the NIST name, else the file's content, else --topic, else the file stem; the peer from the NIST "
        "name, else --peer, else the file stem; the annotator from the name's leading number (DUC 2006), else the "
        "--annotators table, else --annotator, else it is unknown. Re-importing adds nothing twice. A dataset "
        "archive (.zip, given alone) is imported as its upload is: statuses, annotators and times from its manifest; "
        "its names' work goes to imported identities unless --map-user attributes a name to an account."
    )
    requires_system_checks = []  # as the exports (see ``_export.ExportCommand``): no view is needed to import

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", help=".pyr/.pan files or directories, or one dataset archive (.zip)")
        parser.add_argument(
            "--dataset", help="dataset name (default: the name of the first directory given, or the archive's)"
        )
        parser.add_argument("--topic", help="topic of files whose name and content do not say it")
        parser.add_argument("--annotator", help="annotator of .pan files whose name does not say it")
        parser.add_argument(
            "--annotators",
            metavar="TABLE",
            help="a table of who annotated each topic (TOPIC ANNOTATOR) or peer (TOPIC PEER ANNOTATOR), "
            "e.g. DUC 2007's annotator-table.txt; used for files whose name does not say it",
        )
        parser.add_argument("--peer", help="peer of .pan files whose name does not say it")
        parser.add_argument(
            "--map-user",
            action="append",
            default=[],
            metavar="ARCHIVE_NAME=USERNAME",
            help="a dataset archive's name whose work goes to this account (repeat for each); any other "
            "name's work goes to an imported identity (inactive, no login)",
        )
        parser.add_argument(
            "--verbose-report",
            action="store_true",
            help="list every file (where its names came from), repair, unplaced part and legacy issue",
        )

    def handle(
        self,
        *args,
        paths,
        dataset=None,
        topic=None,
        annotator=None,
        peer=None,
        annotators=None,
        verbose_report=False,
        map_user=(),
        **options,
    ):
        table = None
        if annotators:
            try:
                table = parse_annotator_table(Path(annotators).read_bytes(), annotators)
            except OSError as error:
                raise CommandError(f"--annotators {annotators}: {error.strerror or error}") from None
            except AnnotatorTableError as error:
                raise CommandError(str(error)) from None
        freeze_for_process()  # the import and its scoring: nothing else runs in this process
        first = Path(paths[0])
        archive = first.suffix.lower() in uploads.ARCHIVE_EXTENSIONS
        dataset = dataset or (first.stem if archive else (first if first.is_dir() else first.parent).resolve().name)
        show_bar = sys.stderr.isatty()

        def progress(files):
            if not show_bar:
                return files
            from tqdm import tqdm  # only for a terminal

            return tqdm(files, desc="importing", unit="file")

        try:
            if archive:
                report = import_archive(paths, dataset, table, uploads.read_user_map("\n".join(map_user)))
            elif map_user:
                raise CommandError("--map-user is for a dataset archive (.zip) only")
            else:
                report = import_paths(
                    paths, dataset, progress, NameOptions(topic=topic, annotator=annotator, peer=peer, annotators=table)
                )
        except (FileNotFoundError, uploads.UploadRejected) as error:
            raise CommandError(str(error)) from None
        self.stdout.write(f"Dataset: {dataset}")
        for line in report.summary_lines():
            self.stdout.write("  " + line)
        files = [describe(outcome) for outcome in report.outcomes] if verbose_report else []
        for title, items in [
            ("Files", files),
            ("Legacy rule violations (kept, flagged on the contributors)", report.legacy),
            (
                "Offsets kept, label not found — review (kept, so the scores are the files' own; flagged "
                "in the editors)",
                report.kept,
            ),
            ("Left out: nothing of the text at the stored offsets (a peer match stays, flagged)", report.unplaced),
            ("Repairs", report.repairs if verbose_report else []),
        ]:
            if items:
                self.stdout.write(f"{title}:")
                for item in items:
                    self.stdout.write("  " + item)
        if report.repairs and not verbose_report:
            self.stdout.write(f"({len(report.repairs)} repairs; --verbose-report lists them and every file)")
        for item in report.rejected:
            self.stderr.write(self.style.ERROR("rejected " + item))
        if report.rejected:
            raise CommandError(f"{len(report.rejected)} file(s) rejected; nothing of them was written")


def import_archive(
    paths: list[str], dataset: str, annotators: AnnotatorTable | None = None, users: dict[str, str] | None = None
) -> ImportReport:
    """A zip (a dataset archive or any zip of DUCView files) imported as its upload is
    (``upload_import``: the same limits, the annotator table, an archive manifest's statuses,
    annotators and times, and the names the coordinator attributes to accounts), so every path
    gives the same dataset."""
    if len(paths) != 1:
        raise CommandError("a dataset archive (.zip) is imported on its own")
    with open(paths[0], "rb") as stream:
        files, _, archived = uploads.collect_files([File(stream, name=Path(paths[0]).name)])
    target = Dataset.objects.get_or_create(name=dataset)[0]
    return uploads.import_files(files, target, annotators=annotators, archived=archived, users=users)


def describe(outcome: dict) -> str:
    """One file's fate: '114.D0631.M.250.D.10.pan: imported; topic D0631 (file name), peer 10 (file name), ...'."""
    names = ", ".join(
        f"{key} {outcome[key]} ({outcome[key + '_from']})" for key in ("topic", "peer", "annotator") if outcome.get(key)
    )
    line = f"{outcome['file']}: {outcome['status']}" + (f"; {names}" if names else "")
    return line + (f" — {outcome['reason']}" if outcome["reason"] else "")
