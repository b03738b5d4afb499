from annotation.management.commands._export import ExportCommand
from annotation.peers.results import AGREEMENT_KEYS, agreement_rows


class Command(ExportCommand):
    help = "Agreement per topic whose peers two or more annotators annotated (JSON or CSV on stdout)."
    keys = AGREEMENT_KEYS

    def rows(self, topics, convention, include_unfinished):
        return agreement_rows(topics, convention, include_unfinished=include_unfinished)
