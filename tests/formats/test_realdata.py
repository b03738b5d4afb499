"""The DUCView module against the real DUC 2006 / 2007 and PyrEval files in ../shared/data.

Skipped (never failed) when the data is absent. The data is read in place, never copied.
Numbers measured on the release in ../shared/data (see the assertions):

* .pyr files: 7034 pyramid parts, 91 with label != text[start:end]: 25 only because DUCView
  dropped a newline from the label (offsets kept), 66 shifted by one character (DUC 2007 D0740,
  placed back); none rejected.
* the pyramids inside the .pan files: 125,607 parts, 361 + 858 repaired the same way, none
  rejected.
* peer parts: 9408, 28 labels without their newline (offsets kept), none moved or rejected.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path

import pytest

from annotation.formats import (
    DucViewError,
    parse_nist_filename,
    parse_peer_annotation,
    parse_pyramid,
    write_peer_annotation,
    write_pyramid,
)

from tests.conftest import shared_data
from tests.formats.helpers import REAL_DATA, without_regex

pytestmark = pytest.mark.realdata

DUC = {"duc2006": (20, 462), "duc2007-main": (23, 299)}


def _require_data() -> Path:
    shared_data("duc2006", "allpans")
    return REAL_DATA


@pytest.fixture(scope="module")
def parsed():
    """Every DUC .pyr and .pan parsed once: path -> (object, report) or the error."""
    root = _require_data()
    out = {}
    for corpus in DUC:
        for path in sorted((root / corpus).glob("all*/*.p*")):
            data = path.read_bytes()
            try:
                if path.suffix == ".pan":
                    out[path] = parse_peer_annotation(data)
                else:
                    out[path] = parse_pyramid(data)
            except DucViewError as exc:  # reported by test_every_file_parses
                out[path] = exc
    return out


def test_every_file_parses_and_file_counts(parsed):
    errors = {p.name: str(v) for p, v in parsed.items() if isinstance(v, Exception)}
    assert errors == {}
    for corpus, (n_pyr, n_pan) in DUC.items():
        assert sum(1 for p in parsed if p.parent.parent.name == corpus and p.suffix == ".pyr") == n_pyr
        assert sum(1 for p in parsed if p.parent.parent.name == corpus and p.suffix == ".pan") == n_pan


def _parts(pyramid):
    return sum(len(c.parts) for s in pyramid.scus for c in s.contributors)


def test_repair_and_reject_counts(parsed):
    counts = Counter()
    for path, (obj, report) in parsed.items():
        kind = path.suffix[1:]
        pyramid = obj.pyramid if kind == "pan" else obj
        counts[(kind, "pyramid parts")] += _parts(pyramid)
        if kind == "pan":
            counts[("pan", "peer parts")] += sum(len(m.parts) for m in obj.matches + obj.non_matching)
        for r in report.repairs:
            counts[(kind, r.scope, r.kind)] += 1
        for r in report.rejects:
            counts[(kind, r.scope, "rejected", r.kind)] += 1
    assert counts == Counter(
        {
            ("pyr", "pyramid parts"): 7034,
            ("pyr", "pyramid", "label"): 25,
            ("pyr", "pyramid", "moved"): 66,
            ("pan", "pyramid parts"): 125607,
            ("pan", "pyramid", "label"): 361,
            ("pan", "pyramid", "moved"): 858,
            ("pan", "peer parts"): 9408,
            ("pan", "peer", "label"): 28,
        }
    )


def test_moved_parts_are_the_d0740_shift_by_one(parsed):
    shifts = Counter()
    for path, (_, report) in parsed.items():
        for r in report.repairs:
            if r.kind == "moved":
                shifts[
                    (parse_nist_filename(path.name).topic, r.placed[0] - r.stored[0], r.placed[1] - r.stored[1])
                ] += 1
    assert shifts == Counter({("D0740", -1, -1): 66 * 14})  # the .pyr and its 13 .pan files


def test_legacy_issues_are_reported_exactly(parsed):
    found = set()
    for path, (_, report) in parsed.items():
        if path.suffix == ".pyr":
            topic = parse_nist_filename(path.name).topic
            found |= {(topic, i.kind, i.scu_uid, i.references) for i in report.legacy}
    assert found == {
        ("D0631", "cross_reference_contributor", 237, ("D", "G")),
        ("D0729", "cross_reference_contributor", 139, ("G", "H")),
        ("D0701", "same_reference_contributors", 36, ("H",)),
        ("D0706", "same_reference_contributors", 10, ("E",)),
        ("D0724", "same_reference_contributors", 67, ("F",)),
        ("D0727", "same_reference_contributors", 70, ("F",)),
        ("D0739", "same_reference_contributors", 62, ("I",)),
    }
    pan_legacy = Counter(i.kind for p, (_, r) in parsed.items() if p.suffix == ".pan" for i in r.legacy)
    assert pan_legacy == Counter({"cross_reference_contributor": 57, "same_reference_contributors": 65})


def test_references_and_headers(parsed):
    for path, (obj, _) in parsed.items():
        pyramid = obj.pyramid if path.suffix == ".pan" else obj
        name = parse_nist_filename(path.name)
        assert len(pyramid.references) == 4, path.name
        for ref in pyramid.references:
            assert ref.header.strip().startswith(name.topic + ".M.250."), path.name
            assert ref.header.strip().rsplit(".", 1)[1] == ref.id
            assert ref.text.strip() and ref.text == ref.text.strip("\n")
        if name.models:
            assert "".join(r.id for r in pyramid.references) == name.models
    regexless = sorted(p.name for p, (o, _) in parsed.items() if p.suffix == ".pyr" and o.header_regex is None)
    assert regexless == [
        "D0608.pyr",
        "D0624.pyr",
        "D0640.pyr",
        "D0701-AGHI.pyr",
        "D0706-BDEI.pyr",
        "D0711-ABCF.pyr",
        "D0724-ABCF.pyr",
        "D0739-DEGI.pyr",
    ]


def test_peer_annotation_facts(parsed):
    pans = {p: o for p, (o, _) in parsed.items() if p.suffix == ".pan"}
    names = {p: parse_nist_filename(p.name) for p in pans}
    assert sum(len(o.non_matching) for o in pans.values()) == 798  # uid 0 is used in 2006
    assert sum(1 for o in pans.values() if o.non_matching) == 120
    assert sum(len(o.matches) for o in pans.values()) == 6893
    assert [p.name for p, o in pans.items() if o.text == ""] == ["D0706.M.250.B.6.pan"]
    assert all(o.score is None for o in pans.values())  # DUCView 1.4 files
    assert sorted({n.peer for n in names.values() if n.peer.startswith("0")}) == [
        "01",
        "02",
        "03",
        "05",
        "06",
        "08",
    ]  # only DUC 2006 D0647 pads its peer ids
    assert {n.topic for n in names.values() if n.peer.startswith("0")} == {"D0647"}
    assert sorted({n.annotator for n in names.values() if n.topic == "D0631"}) == ["114", "115"]
    pyramid_topics = {parse_nist_filename(p.name).topic for p in parsed if p.suffix == ".pyr"}
    assert {n.topic for n in names.values()} == pyramid_topics


def test_every_real_file_round_trips(parsed):
    for path, (obj, _) in parsed.items():
        if path.suffix == ".pan":
            again, report = parse_peer_annotation(write_peer_annotation(obj))
            regex = obj.pyramid.header_regex
        else:
            again, report = parse_pyramid(write_pyramid(obj))
            regex = obj.header_regex
        assert report.repairs == [] and report.rejects == [], path.name
        if regex is None:
            again = without_regex(again)
        assert again == obj, path.name


def test_pyreval_pyramids_with_other_headers():
    root = _require_data() / "pyreval-matter" / "Scoring" / "pyrs" / "manual_pyramids"
    shared_data(*root.relative_to(REAL_DATA).parts)
    expected = {
        "12_10_09_MATTER.pyr": ["1", "2", "3", "4", "5"],  # bare '---' separators
        "Becky_MATTER.pyr": [f"TCstudent{i}" for i in range(1, 6)],  # '-- TCstudent1 --'
        "Yinghui_12_10_09_MATTER.pyr": ["1", "2", "3", "4", "5"],  # '1.txt'
        "D0601.pyr": ["A", "B", "C", "E"],
        "12_10_09_MATTER_fixed.pyr": ["1", "2", "3", "4", "5"],
        "Yinghui_12_10_09_MATTER_fixed.pyr": ["1", "2", "3", "4", "5"],
    }
    for path in sorted(root.rglob("*.pyr")):
        pyramid, report = parse_pyramid(path.read_bytes())
        assert [r.id for r in pyramid.references] == expected[path.name], path.name
        assert report.repairs == [] and report.rejects == [], path.name
        again, _ = parse_pyramid(write_pyramid(pyramid))
        assert dataclasses.replace(again, header_regex=pyramid.header_regex) == pyramid


def test_a_few_written_real_files_open_like_in_ducview(parsed, tmp_path):
    from tests.formats.test_ducview_write import run_java_check

    wanted = {
        "D0614.pyr",
        "D0631.pyr",
        "D0707-BHIJ.pyr",
        "D0729-AGHJ.pyr",
        "D0740.M.250.I.1.pan",
        "119.D0647.M.250.B.01.pan",
        "D0706.M.250.B.6.pan",
    }
    paths = []
    for path, (obj, _) in parsed.items():
        if path.name in wanted:
            out = tmp_path / path.name
            out.write_bytes(write_peer_annotation(obj) if path.suffix == ".pan" else write_pyramid(obj))
            paths.append(out)
    assert len(paths) == len(wanted)
    assert run_java_check(paths).count("OK ") == len(wanted)
