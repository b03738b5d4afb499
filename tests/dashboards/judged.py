"""Judgments for the dashboards' tests, imported as the judgments page does (``parse_judgments_csv``
then ``save_judgments``: all rows or none)."""

from annotation.corpus.models import Dataset
from annotation.dashboards.judgments import ImportResult, parse_judgments_csv, save_judgments


def import_judgments_csv(dataset: Dataset | str, text: str, source: str = "") -> ImportResult:
    """Import a ``topic,summary,metric,value`` CSV into ``dataset``."""
    return save_judgments(dataset, parse_judgments_csv(text), source)
