"""Writing DUCView files: format details, round trips (fixtures and random), DUCView check."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotation.formats import (
    SCU,
    Contributor,
    DucViewError,
    Part,
    PeerAnnotationFile,
    PeerMatch,
    PeerPart,
    Pyramid,
    Reference,
    parse_peer_annotation,
    parse_pyramid,
    write_peer_annotation,
    write_pyramid,
)

from tests.formats.helpers import fixture_bytes, without_regex

JAVA_CHECK = Path(__file__).resolve().parent / "DucViewCheck.java"

REAL_PYRAMID_DTD = """<?xml version="1.0"?>
<!DOCTYPE pyramid [
 <!ELEMENT pyramid (startDocumentRegEx?,text,scu*)>
 <!ELEMENT startDocumentRegEx (#PCDATA)>
 <!ELEMENT text (line*)>
 <!ELEMENT line (#PCDATA)>
 <!ELEMENT scu (contributor)+>
 <!ATTLIST scu uid CDATA #REQUIRED
               label CDATA #REQUIRED
               comment CDATA #IMPLIED>
 <!ELEMENT contributor (part)+>
 <!ATTLIST contributor label CDATA #REQUIRED
                       comment CDATA #IMPLIED>
 <!ELEMENT part EMPTY>
 <!ATTLIST part label CDATA #REQUIRED
                start CDATA #REQUIRED
                end   CDATA #REQUIRED>

]>

<pyramid>
"""


def roundtrip_pyramid(pyramid: Pyramid) -> Pyramid:
    again, report = parse_pyramid(write_pyramid(pyramid))
    assert report.repairs == [] and report.rejects == []
    return again


def roundtrip_pan(pan: PeerAnnotationFile) -> PeerAnnotationFile:
    again, report = parse_peer_annotation(write_peer_annotation(pan))
    assert report.repairs == [] and report.rejects == []
    return again


@pytest.mark.parametrize("name", ["event.pyr", "event_crlf.pyr", "event_repairs.pyr"])
def test_fixture_pyramids_round_trip(name):
    pyramid, _ = parse_pyramid(fixture_bytes(name))
    assert roundtrip_pyramid(pyramid) == pyramid


def test_pyramid_without_regex_round_trips_with_a_written_regex():
    pyramid, _ = parse_pyramid(fixture_bytes("event_noregex.pyr"))
    again = roundtrip_pyramid(pyramid)
    assert again.header_regex is not None
    assert without_regex(again) == pyramid
    assert roundtrip_pyramid(again) == again


@pytest.mark.parametrize("name", ["event.pan", "event_v15.pan", "peer_repairs.pan"])
def test_fixture_peer_annotations_round_trip(name):
    pan, _ = parse_peer_annotation(fixture_bytes(name))
    assert roundtrip_pan(pan) == pan


def test_repairs_are_not_repeated_after_a_round_trip():
    pyramid, report = parse_pyramid(fixture_bytes("event_repairs.pyr"))
    assert report.repairs and report.rejects
    again, report2 = parse_pyramid(write_pyramid(pyramid))
    assert again == pyramid
    assert report2.repairs == [] and report2.rejects == []
    assert [(i.kind, i.scu_uid) for i in report2.legacy] == [(i.kind, i.scu_uid) for i in report.legacy]


def test_written_pyramid_layout():
    pyramid, _ = parse_pyramid(fixture_bytes("event.pyr"))
    out = write_pyramid(pyramid).decode("utf-8")
    assert out.startswith(REAL_PYRAMID_DTD)
    assert (
        "<startDocumentRegEx><![CDATA[[-]*\\n(\\s*)T[0-9]*\\.M\\.100\\.[A-Z]\\.[A-Z]\\n[-]*\\n]]>"
        "</startDocumentRegEx>\n <text>\n  <line>#3</line>\n  <line></line>\n  <line></line>\n"
        "  <line>---------------</line>\n  <line>T0001.M.100.A.A</line>\n"
        "  <line>---------------</line>\n  <line></line>\n"
        "  <line>The Harrowgate Lantern Fair opened on Friday with 3,000 visitors.</line>\n"
    ) in out
    assert (
        "  <line>Nobody was hurt, but the closing parade was cancelled.</line>\n"
        "  <line></line>\n  <line></line>\n  <line>---------------</line>\n" in out
    )
    assert (
        '  <contributor label="The fair...began Friday">\n'
        '   <part label="began Friday" start="403" end="415"/>\n'
        '   <part label="The fair" start="387" end="395"/>\n'
    ) in out
    assert '<scu uid="3" label="The fair draws lanterns &amp; crafts &lt;from the valley&gt;">' in out
    assert '<contributor label="no one was injured" comment="said by &quot;organisers&quot;">' in out
    assert out.endswith("</scu>\n</pyramid>\n")


def test_written_peer_annotation_layout():
    pan, _ = parse_peer_annotation(fixture_bytes("event.pan"))
    out = write_peer_annotation(pan).decode("utf-8")
    assert " <!ELEMENT peerAnnotation (pyramid,annotation)>" in out
    assert "<score>" not in out and "score?" not in out
    tail = out[out.index("<annotation>") :]
    peerscus = [line for line in tail.splitlines() if line.startswith(" <peerscu")]
    assert peerscus == [
        ' <peerscu uid="11" label="(3) A storm destroyed the main stage">',
        ' <peerscu uid="4" label="(2) The closing parade was cancelled" comment="partial match">',
        ' <peerscu uid="7" label="(2) Nobody was hurt">',
        ' <peerscu uid="25" label="(2) The fair opened on Friday">',
        ' <peerscu uid="3" label="(1) The fair draws lanterns &amp; crafts &lt;from the valley&gt;">',
        ' <peerscu uid="30" label="(1) The fair will return next year">',
        ' <peerscu uid="0" label="All non-matching SCUs go here">',
    ]
    assert out.endswith("</annotation>\n</peerAnnotation>\n")
    scored = write_peer_annotation(parse_peer_annotation(fixture_bytes("event_v15.pan"))[0])
    scored_text = scored.decode()
    assert "(pyramid,annotation,score?)" in scored_text
    assert "<score>\n <totalscu>5</totalscu>\n" in scored_text
    assert scored_text.endswith("</score>\n</peerAnnotation>\n")


def _small_pyramid(**changes) -> Pyramid:
    pyramid = Pyramid(
        [Reference("A", "Z9.M.1.A.A", "alpha beta\ngamma"), Reference("B", "Z9.M.1.A.B", "delta")],
        [SCU(5, "x", "", [Contributor("beta", "", [Part("A", 6, 10)]), Contributor("delta", "", [Part("B", 0, 5)])])],
        None,
    )
    return dataclasses.replace(pyramid, **changes)


def test_escaping_of_awkward_labels_and_comments():
    ref = Reference("A", "Z9.M.1.A.A", "a & b < c > d \"e\" 'f'\ttab\nnext line")
    label = "a & b < c > d \"e\" 'f'\ttab\nnext"
    pyramid = Pyramid(
        [ref, Reference("B", "Z9.M.1.A.B", "x")],
        [SCU(1, "l&<>\"\n\t'", "multi\nline & comment", [Contributor(label, "c\ttab", [Part("A", 0, len(label))])])],
        None,
    )
    assert without_regex(roundtrip_pyramid(pyramid)) == pyramid


def test_stored_regex_is_kept_only_when_it_still_splits_the_written_text():
    pyramid = _small_pyramid(header_regex=r"[-]*\nZ9\.M\.1\.A\.[A-Z]\n[-]*\n")
    assert roundtrip_pyramid(pyramid) == pyramid
    wrong = _small_pyramid(header_regex=r"NOT-A-HEADER")
    again = roundtrip_pyramid(wrong)
    assert again.header_regex != "NOT-A-HEADER"
    assert without_regex(again) == without_regex(wrong)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"scus": [SCU(0, "x", "", [Contributor("a", "", [Part("A", 0, 1)])])]}, "uid 0"),
        ({"scus": [SCU(1, "x", "", [Contributor("a", "", [Part("A", 0, 1)])])] * 2}, "duplicate SCU uid 1"),
        ({"scus": [SCU(1, "x", "", [Contributor("a", "", [Part("Q", 0, 1)])])]}, "unknown reference 'Q'"),
        ({"scus": [SCU(1, "x", "", [Contributor("a", "", [Part("A", 3, 99)])])]}, "outside the text of reference 'A'"),
        ({"scus": [SCU(1, "x", "", [Contributor("a", "", [Part("A", 3, 3)])])]}, "empty"),
        ({"scus": [SCU(1, "x", "", [])]}, "no contributor"),
        ({"scus": [SCU(1, "x", "", [Contributor("a", "", [])])]}, "no part"),
        ({"scus": [SCU(1, "bad \x07 bell", "", [Contributor("a", "", [Part("A", 0, 1)])])]}, r"U\+0007"),
        (
            {"references": [Reference("A", "Z9.M.1.A.X", "t"), Reference("B", "Z9.M.1.A.B", "u")], "scus": []},
            "would be read back as id 'X'",
        ),
        (
            {
                "references": [
                    Reference("A", "Z9.M.1.A.A", "t\n---------------\nZ9.M.1.A.B\n---------------\nu"),
                    Reference("B", "Z9.M.1.A.B", "u"),
                ],
                "scus": [],
            },
            "look like a reference header",
        ),
        ({"references": [Reference("A", "two\nlines", "t")], "scus": []}, "line break"),
    ],
)
def test_writer_refuses_what_it_cannot_write(changes, message):
    with pytest.raises(DucViewError, match=message):
        write_pyramid(_small_pyramid(**changes))


def test_peer_writer_refuses_dangling_matches():
    pan = PeerAnnotationFile(_small_pyramid(), "peer text", [PeerMatch(9, "p", "", [PeerPart(0, 4)])], [], None)
    with pytest.raises(DucViewError, match="SCU uid 9"):
        write_peer_annotation(pan)
    pan.matches = [PeerMatch(5, "p", "", [PeerPart(0, 40)])]
    with pytest.raises(DucViewError, match="outside the peer text"):
        write_peer_annotation(pan)


def _without_evidence() -> PeerAnnotationFile:
    """stale_label_v15.pan with SCU 4's only part moved outside the text: the match is kept, no evidence."""
    data = fixture_bytes("stale_label_v15.pan").replace(b'start="119" end="143"', b'start="900" end="924"')
    pan, _ = parse_peer_annotation(data)
    assert [m.parts for m in pan.matches if m.scu_uid == 4] == [[]]
    return pan


def test_a_match_without_evidence_is_written_and_read_back_kept():
    """The .pan of an annotation holding a match without evidence (issue 20: kept, as DUCView scored
    it) is written, not refused, and reads back with that match still there and still flagged, so the
    exported file scores as the annotation does (the dataset archive and the .pan download alike)."""
    pan = _without_evidence()
    again, report = parse_peer_annotation(write_peer_annotation(pan))
    assert again == pan
    assert (
        [m.review for m in again.matches if m.scu_uid == 4] == [m.review for m in pan.matches if m.scu_uid == 4] != [""]
    )
    assert [(r.kind, r.scu_uid) for r in report.rejects] == [("empty_part", 4)]


def test_empty_reference_header_is_written_as_its_id():
    pyramid = _small_pyramid(references=[Reference("A", "", "alpha beta\ngamma"), Reference("B", "", "delta")])
    again = roundtrip_pyramid(pyramid)
    assert [(r.id, r.header) for r in again.references] == [("A", "A"), ("B", "B")]
    assert again.scus == pyramid.scus


# --------------------------------------------------------------------------- random round trips

_CHARS = st.characters(
    blacklist_categories=("Cs", "Cc", "Cn"), blacklist_characters="\x85\u2028\u2029"
) | st.sampled_from(list("&<>\"' \t-.…€😀𝄞"))
_LINE = st.text(_CHARS, min_size=1, max_size=30).filter(
    lambda s: s.strip(" \t-=") != ""
)  # no blank or dash-only line at the ends of a text
_INNER = _LINE | st.sampled_from(["", "   ", "-----", "#2"])


@st.composite
def reference_texts(draw) -> str:
    first = draw(_LINE)
    middle = draw(st.lists(_INNER, max_size=3))
    last = [draw(_LINE)] if middle else draw(st.lists(_LINE, max_size=1))
    return "\n".join([first, *middle, *last])


@st.composite
def pyramids(draw) -> Pyramid:
    ids = draw(st.lists(st.sampled_from("ABCDEFGHIJ"), min_size=1, max_size=4, unique=True))
    refs = [Reference(i, f"R0042.M.100.Z.{i}", draw(reference_texts())) for i in ids]
    order = {r.id: k for k, r in enumerate(refs)}
    uids = draw(st.lists(st.integers(1, 500), min_size=0, max_size=5, unique=True))
    scus = []
    for uid in uids:
        contributors = []
        for _ in range(draw(st.integers(1, 3))):
            parts = []
            for _ in range(draw(st.integers(1, 3))):
                ref = draw(st.sampled_from(refs))
                start = draw(st.integers(0, len(ref.text) - 1))
                end = draw(st.integers(start + 1, len(ref.text)))
                parts.append(Part(ref.id, start, end))
            texts = [
                next(r for r in refs if r.id == p.reference).text[p.start : p.end]
                for p in sorted(parts, key=lambda p: (order[p.reference], p.start))
            ]
            contributors.append(Contributor("...".join(texts), draw(st.text(_CHARS, max_size=5)), parts))
        scus.append(SCU(uid, draw(st.text(_CHARS, max_size=20)), draw(st.text(_CHARS, max_size=5)), contributors))
    regex = draw(st.sampled_from([None, r"[-]*\n(\s*)R[0-9]*\.M\.100\.[A-Z]\.[A-Z]\n[-]*\n"]))
    return Pyramid(refs, scus, regex)


@st.composite
def peer_annotations(draw) -> PeerAnnotationFile:
    pyramid = draw(pyramids())
    text = "\n".join(draw(st.lists(st.text(_CHARS, max_size=25), min_size=1, max_size=4)))
    matches, non_matching = [], []
    if text:
        for uid in draw(st.lists(st.sampled_from([s.uid for s in pyramid.scus] + [0]), max_size=6)):
            parts = []
            for _ in range(draw(st.integers(1, 2))):
                start = draw(st.integers(0, len(text) - 1))
                parts.append(PeerPart(start, draw(st.integers(start + 1, len(text)))))
            label = "...".join(text[p.start : p.end] for p in sorted(parts, key=lambda p: p.start))
            (non_matching if uid == 0 else matches).append(PeerMatch(uid, label, "", parts))
    position = {s.uid: k for k, s in enumerate(pyramid.scus)}
    matches.sort(key=lambda m: position[m.scu_uid])  # the canonical order
    score = draw(st.none() | st.just({"totalscu": "3", "qualityScore": "0.5"}))
    comments = draw(
        st.dictionaries(
            st.sampled_from([s.uid for s in pyramid.scus] + [0]), st.text(_CHARS, min_size=1, max_size=5), max_size=2
        )
    )
    return PeerAnnotationFile(pyramid, text, matches, non_matching, score, comments)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pyramids())
def test_random_pyramids_round_trip(pyramid):
    again = roundtrip_pyramid(pyramid)
    if pyramid.header_regex is None:
        again = without_regex(again)
    assert again == pyramid


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(peer_annotations())
def test_random_peer_annotations_round_trip(pan):
    again = roundtrip_pan(pan)
    if pan.pyramid.header_regex is None:
        again = without_regex(again)
    assert again == pan


# --------------------------------------------------------------------------- DUCView (Java) check


def run_java_check(paths: list[Path]) -> str:
    java = shutil.which("java")
    if java is None:
        pytest.skip("java is not installed: cannot check the files the way DUCView (Java) reads them")
    done = subprocess.run([java, str(JAVA_CHECK), *map(str, paths)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_written_files_open_like_in_ducview(tmp_path):
    paths = []
    for name in ("event.pyr", "event_noregex.pyr", "event_repairs.pyr"):
        path = tmp_path / name
        path.write_bytes(write_pyramid(parse_pyramid(fixture_bytes(name))[0]))
        paths.append(path)
    for name in ("event.pan", "event_v15.pan", "peer_repairs.pan"):
        path = tmp_path / name
        path.write_bytes(write_peer_annotation(parse_peer_annotation(fixture_bytes(name))[0]))
        paths.append(path)
    paths.append(tmp_path / "without_evidence.pan")
    paths[-1].write_bytes(write_peer_annotation(_without_evidence()))
    odd_score = parse_peer_annotation(fixture_bytes("event.pan"))[0]
    odd_score.score = {"qualityScore": "0.5", "mine": "x"}  # not DUCView's score layout
    paths.append(tmp_path / "odd_score.pan")
    paths[-1].write_bytes(write_peer_annotation(odd_score))
    assert roundtrip_pan(odd_score) == odd_score
    astral = Pyramid(
        [
            Reference("A", "X.M.1.A.A", "Smile \U0001f600 here & <there>"),
            Reference("B", "X.M.1.A.B", "B text \U0001d11e music"),
        ],
        [
            SCU(
                1,
                "s",
                "",
                [Contributor("here & <there>", "", [Part("A", 8, 22)]), Contributor("music", "", [Part("B", 9, 14)])],
            )
        ],
        None,
    )
    paths.append(tmp_path / "astral.pyr")
    paths[-1].write_bytes(write_pyramid(astral))
    out = run_java_check(paths)
    assert out.count("OK ") == len(paths)
    assert "astral.pyr docs=2 scus=1" in out
    assert "event.pan docs=3 scus=6 peer_contributors=5" in out
