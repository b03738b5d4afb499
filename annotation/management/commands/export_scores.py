from annotation.management.commands._export import ExportCommand
from annotation.peers.results import SCORE_KEYS, score_keys, score_rows


class Command(ExportCommand):
    help = "Scores of every peer annotation and reference summary (JSON or CSV on stdout)."
    keys = SCORE_KEYS

    def rows(self, topics, convention, include_unfinished):
        return score_rows(topics, convention, include_unfinished=include_unfinished)

    def columns(self, include_unfinished):
        return score_keys(include_unfinished)
