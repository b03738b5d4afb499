"""CSV cells that a spreadsheet opens as text, never as a formula (CSV injection, OWASP).

Labels, comments, usernames and topic titles are user text; a cell starting with ``=``, ``+``,
``-``, ``@``, a tab or a carriage return (or their full-width forms) is run as a formula by Excel,
LibreOffice and Google Sheets. As OWASP recommends, such a cell is prefixed with a single quote,
which spreadsheets show as text. Numbers stay numbers: an ``int``/``float`` and a string that is
exactly a decimal number (``-0.25``, ``+3``, ``1e-5``) are written unchanged.

Every CSV the application writes goes through :func:`writer` or :class:`DictWriter`
(``tests/security/test_csv_cells.py`` forbids ``csv.writer`` anywhere else).
"""

import csv
import re

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def neutralise(value):
    """The cell as it is safe to write: numbers unchanged, formula-looking text quoted."""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    text = str(value)
    if text.startswith(FORMULA_STARTS) and not _NUMBER.fullmatch(text):
        return "'" + text
    return text


def neutralise_row(row):
    return [neutralise(value) for value in row]


class _Writer:
    """csv.writer with every cell neutralised."""

    def __init__(self, stream, *args, **kwargs):
        self._writer = csv.writer(stream, *args, **kwargs)

    def writerow(self, row):
        return self._writer.writerow(neutralise_row(row))

    def writerows(self, rows):
        for row in rows:
            self.writerow(row)


def writer(stream, *args, **kwargs) -> _Writer:
    return _Writer(stream, *args, **kwargs)


class DictWriter(csv.DictWriter):
    """csv.DictWriter with every value neutralised (the header is the program's own column names)."""

    def writerow(self, rowdict):
        return super().writerow({key: neutralise(value) for key, value in rowdict.items()})

    def writerows(self, rowdicts):
        for row in rowdicts:
            self.writerow(row)
