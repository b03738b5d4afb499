from django.core.management.base import BaseCommand, CommandError

from annotation.corpus.models import Dataset
from annotation.transfer.copies import find_copies, remove_copies


class Command(BaseCommand):
    help = (
        "Find the peer annotations that earlier imports stored twice: an annotation without annotator that "
        "is, by the import's identity rule, a named annotator's annotation again (same peer and pyramid, same "
        "matches, same file name), e.g. a zip imported with its annotator table and again without it. Lists "
        "them (a dry run) unless --apply, which deletes them and keeps the annotator's. Adjudicated versions and "
        "annotations that differ in anything (matches, status) are never removed."
    )

    def add_arguments(self, parser):
        parser.add_argument("--dataset", action="append", help="dataset name (repeatable; default: every dataset)")
        parser.add_argument("--apply", action="store_true", help="delete the copies (default: only list them)")

    def handle(self, *args, dataset=None, apply=False, **options):
        datasets = None
        if dataset:
            datasets = Dataset.objects.filter(name__in=dataset)
            missing = sorted(set(dataset) - set(datasets.values_list("name", flat=True)))
            if missing:
                raise CommandError(f"no dataset named {', '.join(map(repr, missing))}")
        copies = find_copies(datasets)
        for copy in copies:
            self.stdout.write(copy.describe())
        if not apply:
            self.stdout.write(f"{len(copies)} copies found; nothing removed (--apply removes them)")
            return
        removed = remove_copies(copies)
        self.stdout.write(f"{removed} copies removed; the annotators' annotations kept")
