from annotation.services.results import SCORE_KEYS, score_rows

from ._export import ExportCommand


class Command(ExportCommand):
    help = "Scores of every peer annotation and reference summary (JSON or CSV on stdout)."
    keys = SCORE_KEYS

    def rows(self, topics, convention):
        return score_rows(topics, convention)
