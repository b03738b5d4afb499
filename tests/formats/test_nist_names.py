"""NIST file names."""

from __future__ import annotations

import pytest

from annotation.formats import DucViewError, NistName, parse_nist_filename
from annotation.formats.nist_names import looks_like_topic_id


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("100.D0601.M.250.A.1.pan", NistName("100", "D0601", "250", "A", "1")),
        ("119.D0647.M.250.B.01.pan", NistName("119", "D0647", "250", "B", "01")),
        ("D0701.M.250.A.13.pan", NistName(None, "D0701", "250", "A", "13")),
        ("D0703-A.M.100.A.1.pan", NistName(None, "D0703-A", "100", "A", "1")),
        ("107.D0703-A.M.100.A.1.pan", NistName("107", "D0703-A", "100", "A", "1")),
        ("D0601.M.250.A.B.pan", NistName(None, "D0601", "250", "A", "B")),
        ("/some/dir/D0701.M.250.A.9.pan", NistName(None, "D0701", "250", "A", "9")),
        ("D0601.pyr", NistName(None, "D0601", None, None, None, kind="pyr")),
        ("D0701-AGHI.pyr", NistName(None, "D0701", None, None, None, kind="pyr", models="AGHI")),
        ("D0703-A.pyr", NistName(None, "D0703-A", None, None, None, kind="pyr")),
        ("D0703-A.BCDE.pyr", NistName(None, "D0703-A", None, None, None, kind="pyr", models="BCDE")),
        ("D0801-A.M.100.A.pyr", NistName(None, "D0801-A", None, None, None, kind="pyr")),
        ("14.d311i.M.250.I.1.pan", NistName("14", "d311i", "250", "I", "1")),
        ("D0801-B.M.100.H.58.pan", NistName(None, "D0801-B", "100", "H", "58")),
    ],
)
def test_nist_names(name, expected):
    assert parse_nist_filename(name) == expected


def test_peer_key_drops_leading_zeros():
    assert parse_nist_filename("119.D0647.M.250.B.01.pan").peer_key == "1"
    assert parse_nist_filename("D0601.M.250.A.B.pan").peer_key == "B"
    assert parse_nist_filename("D0601.pyr").peer_key is None


@pytest.mark.parametrize(
    "name",
    [
        "",
        "D0601.txt",
        "Becky_MATTER.pyr",
        "D0601.M.250.A.pan",
        "x.D0601.M.250.A.1.pan",
        "D0601.X.250.A.1.pan",
        "D0601.M.abc.A.1.pan",
        "D0601.M.250.A.1.pan.bak",
        "12_10_09_MATTER.pyr",
    ],
)
def test_not_nist_names(name):
    with pytest.raises(DucViewError, match="not a NIST file name"):
        parse_nist_filename(name)


@pytest.mark.parametrize(
    ("topic", "expected"),
    [
        ("D0601", True),
        ("d311i", True),
        ("D0703-A", True),
        ("T0001", True),
        ("D1001-B", True),
        ("MATTER", False),
        ("Becky_MATTER", False),
        ("foo", False),
        ("summary2", False),
    ],
)
def test_topic_ids_are_told_from_free_names(topic, expected):
    assert looks_like_topic_id(topic) is expected
