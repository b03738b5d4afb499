from annotation.services.results import AGREEMENT_KEYS, agreement_rows

from ._export import ExportCommand


class Command(ExportCommand):
    help = "Agreement per topic whose peers two or more annotators annotated (JSON or CSV on stdout)."
    keys = AGREEMENT_KEYS

    def rows(self, topics, convention):
        return agreement_rows(topics, convention)
