"""CSV formula injection (OWASP): user text that a spreadsheet would run as a formula is written as
text, numbers stay numbers, and no code writes CSV around the neutralising writer."""

import ast
import csv
import io
from pathlib import Path

import pytest

from annotation.formats.csv_cells import DictWriter, neutralise, writer
from annotation.peers.results import write_rows

REPO = Path(__file__).resolve().parents[2]
ATTACKS = [
    '=HYPERLINK("http://evil.example","x")',
    "+1+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(A1:A9)",
    "\t=1+1",
    "\r=1+1",
    "\uff1d1+1",
    "-",
    "=",
    "+cmd",
]


@pytest.mark.parametrize("cell", ATTACKS)
def test_formula_cells_are_written_as_text(cell):
    assert neutralise(cell) == "'" + cell


@pytest.mark.parametrize(
    "value, expected",
    [
        (-0.25, -0.25),
        (3, 3),
        (0.0, 0.0),
        (None, None),
        (True, True),
        ("-0.25", "-0.25"),
        ("+3", "+3"),
        ("-1e-05", "-1e-05"),
        ("1.5", "1.5"),
        ("D0631", "D0631"),
        ("a=b", "a=b"),
        ("", ""),
        ("-.5", "-.5"),
    ],
)
def test_numbers_and_plain_text_unchanged(value, expected):
    assert neutralise(value) == expected


def test_writers_neutralise_every_cell_and_read_back():
    stream = io.StringIO()
    writer(stream).writerows([["label", "score"], ["=1+1", -0.5]])
    dict_stream = io.StringIO()
    w = DictWriter(dict_stream, fieldnames=["label", "score"])
    w.writeheader()
    w.writerows([{"label": "@me", "score": -1}])
    assert list(csv.reader(io.StringIO(stream.getvalue()))) == [["label", "score"], ["'=1+1", "-0.5"]]
    assert list(csv.reader(io.StringIO(dict_stream.getvalue()))) == [["label", "score"], ["'@me", "-1"]]


def test_exported_rows_are_neutralised_the_attack_reproduced():
    """An annotator named "=cmd|..." and a topic "-2+3" as they reach export_scores' CSV."""
    rows = [
        {"topic": "-2+3", "annotator": "=cmd|' /C calc'!A0", "modified": -0.0, "undefined": None, "peers": {"1": 0.5}}
    ]
    stream = io.StringIO()
    write_rows(stream, rows, ("topic", "annotator", "modified", "undefined", "peers"), "csv")
    [header, row] = list(csv.reader(io.StringIO(stream.getvalue())))
    assert row == ["'-2+3", "'=cmd|' /C calc'!A0", "-0.0", "", '{"1": 0.5}']


def _parse(path: Path) -> ast.AST:
    """``ast.parse``, once more on CPython 3.11's spurious "AST constructor recursion depth mismatch"
    (python/cpython#106905: the counter is process state that threads left running by earlier tests,
    e.g. a live server's, can disturb); a real syntax error still fails."""
    try:
        return ast.parse(path.read_text(), str(path))
    except SystemError:
        return ast.parse(path.read_text(), str(path))


def _csv_writers_used(path: Path) -> list[int]:
    lines = []
    for node in ast.walk(_parse(path)):
        if (
            isinstance(node, ast.Attribute)
            and node.attr in ("writer", "DictWriter")
            and isinstance(node.value, ast.Name)
            and node.value.id == "csv"
        ):
            lines.append(node.lineno)
        if (
            isinstance(node, ast.ImportFrom)
            and node.module == "csv"
            and {a.name for a in node.names} & {"writer", "DictWriter"}
        ):
            lines.append(node.lineno)
    return lines


def test_no_csv_written_around_csv_cells():
    """Every CSV the application writes goes through annotation/formats/csv_cells.py."""
    allowed = REPO / "annotation" / "formats" / "csv_cells.py"
    offenders = [
        f"{path.relative_to(REPO)}:{line}"
        for folder in ("annotation", "frontend", "scoring", "pyramid_app", "bench")
        for path in sorted((REPO / folder).rglob("*.py"))
        if path != allowed
        for line in _csv_writers_used(path)
    ]
    assert not offenders, (
        f"write CSV with annotation.formats.csv_cells.writer/DictWriter, not csv directly: {offenders}"
    )
