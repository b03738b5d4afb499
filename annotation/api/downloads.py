"""What every downloaded file says about itself: its name and where its numbers come from.

*Name* (``download_name``): ``{dataset}-{table}[-{convention}][-{qualifier}...]-{YYYY-MM-DD}.{ext}``,
e.g. ``duc2006-scores-nist-with-references-2026-11-26.csv``: two downloads of different tables,
conventions or filters never share a name, and a folder of them sorts by dataset and table.

*Provenance* (``provenance``): the app version and the settings that produced the numbers
(convention, seed, filters), as two trailing columns of every row, ``app_version`` and ``settings``
(a JSON object), in CSV and JSON alike. Not a ``#`` comment line: pandas' ``read_csv`` and Excel
would read it as a row; a column is read by both as it is and survives filtering and concatenating
rows of several downloads. Files that are not tables carry them in their own metadata (the dataset
archive's ``manifest.json``); DUCView and SacreROUGE files are named but keep their formats as they
are (their numbers, SCU weights, depend on no setting).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from importlib import metadata

from django.utils import timezone

PROVENANCE_KEYS = ("app_version", "settings")


@lru_cache(maxsize=1)
def app_version() -> str:
    """The installed version of this project (pyproject.toml's ``version``)."""
    try:
        return metadata.version("pyramid")
    except metadata.PackageNotFoundError:
        return "unknown"


def _part(text) -> str:
    """A name part in ASCII letters, digits, ``_`` and ``.`` (case kept: NIST ids are D0631, not d0631)."""
    return re.sub(r"[^A-Za-z0-9_.]+", "-", str(text)).strip("-.")


def download_name(dataset, table: str, extension: str, *, convention=None, qualifiers=(), day=None) -> str:
    """The file name of a download of ``table`` of ``dataset`` (a Dataset, or a name), in ASCII
    (a name with no ASCII letter or digit, Chinese say, becomes ``dataset-{id}``)."""
    name = dataset if isinstance(dataset, str) else dataset.name
    slug = _part(name) or (f"dataset-{dataset.pk}" if not isinstance(dataset, str) else "dataset")
    convention = getattr(convention, "value", convention)
    parts = [slug, _part(table), *([_part(convention)] if convention else []), *(_part(q) for q in qualifiers if q)]
    return f"{'-'.join(p for p in parts if p)}-{(day or timezone.localdate()).isoformat()}.{extension}"


def content_disposition(filename: str) -> str:
    return f'attachment; filename="{filename}"'


def provenance(**settings) -> dict:
    """The two provenance cells of every row: the app version and the settings (None left out)."""
    settings = {k: getattr(v, "value", v) for k, v in settings.items() if v is not None}
    return {"app_version": app_version(), "settings": json.dumps(settings, sort_keys=True, separators=(",", ":"))}


def with_provenance(rows: list[dict], keys: tuple[str, ...], stamp: dict) -> tuple[list[dict], tuple[str, ...]]:
    """Rows and keys with the provenance columns appended (``stamp``: ``provenance(...)``)."""
    return [row | stamp for row in rows], tuple(keys) + PROVENANCE_KEYS
