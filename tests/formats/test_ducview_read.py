"""Reading DUCView files: exact values from small hand-written fixtures (original text)."""

from __future__ import annotations

from collections import Counter

import pytest

from annotation.formats import (
    SCU,
    Contributor,
    DucViewError,
    LegacyIssue,
    Part,
    PeerMatch,
    PeerPart,
    Reference,
    Repair,
    parse_peer_annotation,
    parse_pyramid,
)

from tests.formats.helpers import fixture_bytes

REGEX = r"[-]*\n(\s*)T[0-9]*\.M\.100\.[A-Z]\.[A-Z]\n[-]*\n"
TEXT_A = (
    "The Harrowgate Lantern Fair opened on Friday with 3,000 visitors.\n"
    "A storm on Saturday night knocked down the main stage.\n"
    "Nobody was hurt, but the closing parade was cancelled."
)
TEXT_B = (
    "Heavy wind on Saturday destroyed the fair's main stage in Harrowgate.\n"
    "Organisers said no one was injured.\n"
    'The fair, which began Friday, draws lanterns & crafts from "all over" the valley.'
)
TEXT_C = (
    "Harrowgate's lantern fair lost its stage to a storm.\nThe parade was called off; the fair will return next year."
)
EVENT_REFERENCES = [
    Reference("A", "T0001.M.100.A.A", TEXT_A),
    Reference("B", "T0001.M.100.A.B", TEXT_B),
    Reference("C", "T0001.M.100.A.C", TEXT_C),
]
EVENT_SCUS = [
    SCU(
        11,
        "A storm destroyed the main stage",
        "merged from two SCUs",
        [
            Contributor("A storm on Saturday night knocked down the main stage", "", [Part("A", 66, 119)]),
            Contributor("Heavy wind on Saturday destroyed the fair's main stage", "", [Part("B", 0, 54)]),
            Contributor("lost its stage to a storm", "", [Part("C", 26, 51)]),
        ],
    ),
    SCU(
        4,
        "The closing parade was cancelled",
        "",
        [
            Contributor("the closing parade was cancelled", "", [Part("A", 142, 174)]),
            Contributor("The parade was called off", "", [Part("C", 53, 78)]),
        ],
    ),
    SCU(
        7,
        "Nobody was hurt",
        "",
        [
            Contributor("Nobody was hurt", "", [Part("A", 121, 136)]),
            Contributor("no one was injured", 'said by "organisers"', [Part("B", 86, 104)]),
        ],
    ),
    SCU(
        25,
        "The fair opened on Friday",
        "",
        [
            Contributor("The Harrowgate Lantern Fair opened on Friday", "", [Part("A", 0, 44)]),
            # stored out of text order in the file: kept in file order
            Contributor("The fair...began Friday", "", [Part("B", 122, 134), Part("B", 106, 114)]),
        ],
    ),
    SCU(
        3,
        "The fair draws lanterns & crafts <from the valley>",
        "",
        [
            Contributor('draws lanterns & crafts from "all over" the valley', "", [Part("B", 136, 186)]),
        ],
    ),
    SCU(
        30,
        "The fair will return next year",
        "",
        [
            Contributor("the fair will return next year", "", [Part("C", 80, 110)]),
        ],
    ),
]


def part_text(pyramid, part) -> str:
    """The text a part covers in its reference."""
    return pyramid.reference(part.reference).text[part.start : part.end]


def test_event_pyramid_exact_values():
    pyramid, report = parse_pyramid(fixture_bytes("event.pyr"))
    assert pyramid.header_regex == REGEX
    assert pyramid.references == EVENT_REFERENCES
    assert pyramid.scus == EVENT_SCUS
    assert report.repairs == [] and report.rejects == [] and report.legacy == []
    assert report.ok
    # every part covers exactly its label in its reference's text
    assert part_text(pyramid, EVENT_SCUS[3].contributors[1].parts[1]) == "The fair"
    assert [s.weight for s in pyramid.scus] == [3, 2, 2, 2, 1, 1]


def test_crlf_file_reads_like_lf_file():
    crlf = fixture_bytes("event_crlf.pyr")
    assert b"\r\n" in crlf
    pyramid, report = parse_pyramid(crlf)
    assert pyramid == parse_pyramid(fixture_bytes("event.pyr"))[0]
    assert all("\r" not in ref.text for ref in pyramid.references)
    assert report.ok


def test_file_without_regex_uses_default_and_keeps_2007_headers():
    pyramid, report = parse_pyramid(fixture_bytes("event_noregex.pyr"))
    assert pyramid.header_regex is None
    # DUC 2007 style: header lines with a leading blank, kept as in the file
    assert [(r.id, r.header) for r in pyramid.references] == [
        ("A", " T0001.M.100.A.A"),
        ("B", " T0001.M.100.A.B"),
        ("C", " T0001.M.100.A.C"),
    ]
    assert [r.text for r in pyramid.references] == [TEXT_A, TEXT_B, TEXT_C]
    assert pyramid.scus == EVENT_SCUS  # local offsets do not depend on the header layout
    assert report.ok and report.legacy == []


def test_xml_comments_anywhere_are_ignored():
    data = fixture_bytes("event.pyr")
    assert b"<!-- the references follow -->" in data  # between lines and between SCUs
    inline = data.replace(
        b"<line>Nobody was hurt, but the closing parade",
        b"<line>Nobody was hurt, <!-- inside a line -->but the closing parade",
    )
    assert inline != data
    assert parse_pyramid(inline)[0] == parse_pyramid(data)[0]


def test_pan_file_accepted_by_parse_pyramid():
    pyramid, _ = parse_pyramid(fixture_bytes("event.pan"))
    assert pyramid.references == EVENT_REFERENCES
    assert pyramid.scus == EVENT_SCUS


PEER_TEXT = (
    "A fair in Harrowgate opened Friday.\n"
    "On Saturday a storm knocked the main stage down, and a storm also flattened tents.\n"
    "The parade was cancelled. Food stalls sold out."
)


def test_event_peer_annotation_exact_values():
    pan, report = parse_peer_annotation(fixture_bytes("event.pan"))
    assert pan.pyramid.references == EVENT_REFERENCES
    assert pan.pyramid.scus == EVENT_SCUS
    assert pan.text == PEER_TEXT
    # pyramid SCU order (the file lists 25 before 4); a repetition = two matches of SCU 11
    assert pan.matches == [
        PeerMatch(11, "a storm knocked the main stage down", "", [PeerPart(48, 83)]),
        PeerMatch(11, "a storm also flattened tents", "same storm, second mention", [PeerPart(89, 117)]),
        PeerMatch(4, "The parade was cancelled", "", [PeerPart(119, 143)]),
        PeerMatch(25, "A fair...opened Friday", "", [PeerPart(21, 34), PeerPart(0, 6)]),
    ]
    assert pan.non_matching == [PeerMatch(0, "Food stalls sold out.", "", [PeerPart(145, 166)])]
    assert pan.score is None
    assert pan.peer_scu_comments == {4: "partial match"}
    assert report.ok and report.legacy == []
    assert PEER_TEXT[0:6] + "..." + PEER_TEXT[21:34] == "A fair...opened Friday"


def test_ducview_15_score_element():
    pan, report = parse_peer_annotation(fixture_bytes("event_v15.pan"))
    assert pan.score == {
        "totalscu": "5",
        "uniquescu": "3",
        "scusNotInPyr": "1",
        "totalWeight": "7",
        "maxScoreTotalscu": "10",
        "qualityScore": "0.7",
        "averagescu": "4",
        "maxScoreAveragescu": "9",
        "coverageScore": "0.7778",
        "comprehensiveScore": "0.7368",
    }
    plain, _ = parse_peer_annotation(fixture_bytes("event.pan"))
    assert pan.matches == plain.matches and pan.pyramid == plain.pyramid
    assert report.ok


def test_pyramid_repairs_rejects_and_legacy_issues():
    pyramid, report = parse_pyramid(fixture_bytes("event_repairs.pyr"))
    assert pyramid.references == EVENT_REFERENCES
    by_uid = {s.uid: s for s in pyramid.scus}
    # every SCU kept with its weight: a contributor whose label is stale stays at its offsets
    assert [(s.uid, s.weight) for s in pyramid.scus] == [
        (11, 1),
        (4, 1),
        (7, 1),
        (25, 1),
        (3, 1),
        (40, 1),
        (50, 1),
        (60, 3),
        (70, 1),
    ]
    # label without the newline DUCView drops: offsets kept, label re-derived from the text
    assert by_uid[11].contributors == [Contributor("visitors.\nA storm", "", [Part("A", 56, 73)])]
    # shifted by 3: placed back
    assert by_uid[4].contributors == [Contributor("the closing parade was cancelled", "", [Part("A", 142, 174)])]
    # whitespace and typographic quotes differ: offsets kept
    assert by_uid[7].contributors[0].parts == [Part("B", 86, 104)]
    assert by_uid[3].contributors[0].parts == [Part("B", 136, 186)]
    # a part whose label is nowhere near stays at its stored offsets (the text there is what the
    # file's own tool marked), flagged for review; the SCU keeps its weight
    kept = "offsets kept, label not found — review"
    assert [(c.label, c.review, [part_text(pyramid, p) for p in c.parts]) for c in by_uid[25].contributors] == [
        ("The fair...began Friday", kept, ["began Friday", "The fair"])
    ]
    assert [(c.label, c.review, [part_text(pyramid, p) for p in c.parts]) for c in by_uid[40].contributors] == [
        ("3,000 visitors", kept, ["3,000 visitors"])
    ]
    # legacy issues are kept as they are
    assert by_uid[50].contributors[0].parts == [Part("A", 4, 14), Part("B", 55, 68)]
    assert [c.parts[0].reference for c in by_uid[60].contributors] == ["A", "C", "A"]
    # a trailing newline is clipped, a part in a header line is left out
    assert by_uid[70].contributors == [Contributor("cancelled.", "", [Part("A", 165, 175)])]

    assert [(r.kind, r.scu_uid, r.contributor, r.part, r.stored, r.placed) for r in report.repairs] == [
        ("label", 11, 0, 0, (110, 127), (110, 127)),
        ("moved", 4, 0, 0, (199, 231), (196, 228)),
        ("label", 7, 0, 0, (367, 385), (367, 385)),
        ("kept", 25, 0, 1, (387, 395), (387, 395)),
        ("label", 3, 0, 0, (417, 467), (417, 467)),
        ("kept", 40, 0, 0, (104, 118), (104, 118)),
        ("clipped", 70, 0, 0, (219, 230), (219, 229)),
    ]
    assert report.repairs[1] == Repair(
        "moved",
        "SCU 4, contributor 1 ('the closing parade was cancelled'), part 1: label "
        "'the closing parade was cancelled' not at stored [199, 231) (text there: "
        "' closing parade was cancelled.\\n\\n'); placed at [196, 228)",
        "pyramid",
        4,
        0,
        0,
        "the closing parade was cancelled",
        (199, 231),
        (196, 228),
    )
    assert [(r.kind, r.scu_uid, r.contributor, r.part, r.stored) for r in report.rejects] == [
        ("outside_references", 70, 0, 1, (248, 263)),
    ]
    assert report.repairs[3] == Repair(
        "kept",
        "SCU 25, contributor 1 ('The fare...began Friday'), part 2: label 'The fare' not found "
        "near stored [387, 395); offsets kept (text there: 'The fair'): review",
        "pyramid",
        25,
        0,
        1,
        "The fare",
        (387, 395),
        (387, 395),
    )
    assert report.legacy == [
        LegacyIssue(
            "cross_reference_contributor",
            "SCU 50: contributor 1 ('Harrowgate...in Harrowgate') has parts in references A, B; kept as it is",
            50,
            (0,),
            ("A", "B"),
        ),
        LegacyIssue(
            "same_reference_contributors",
            "SCU 60: contributors 1, 3 all come from reference A; kept as they are",
            60,
            (0, 2),
            ("A",),
        ),
    ]
    assert not report.ok
    assert len(report.messages()) == len(report.repairs) + len(report.rejects) + len(report.legacy) == 7 + 1 + 2


def test_peer_repairs_and_rejects():
    pan, report = parse_peer_annotation(fixture_bytes("peer_repairs.pan"))
    assert pan.text == PEER_TEXT
    # stale labels ('a hurricane', 'stalls sold in'): their matches and parts stay at the stored
    # offsets, as DUCView scored them, flagged for review
    assert pan.matches == [
        PeerMatch(11, "a storm knocked the main stage down", "", [PeerPart(48, 83)]),
        PeerMatch(11, "a storm also", "", [PeerPart(89, 101)]),
        PeerMatch(4, "The parade was cancelled...stalls sold out", "", [PeerPart(119, 143), PeerPart(150, 165)]),
        PeerMatch(25, "Friday.\nOn Saturday", "", [PeerPart(28, 47)]),
    ]
    assert [m.review for m in pan.matches] == [
        "",
        "offsets kept, label not found — review",
        "offsets kept, label not found — review",
        "",
    ]
    assert pan.non_matching == []
    assert [(r.kind, r.scope, r.scu_uid, r.contributor, r.part, r.stored, r.placed) for r in report.repairs] == [
        ("label", "peer", 25, 0, 0, (28, 47), (28, 47)),
        ("moved", "peer", 11, 0, 0, (50, 85), (48, 83)),
        ("kept", "peer", 11, 1, 0, (89, 101), (89, 101)),
        ("label", "peer", 4, 0, 0, (119, 143), (119, 143)),
        ("kept", "peer", 4, 0, 1, (150, 165), (150, 165)),
    ]
    assert report.rejects == []


def test_astral_characters_use_java_utf16_offsets():
    # U+1F600 is two UTF-16 code units: the file stores Java offsets, we return code points.
    text = "#2\n---\nX.A\n---\nSmile \U0001f600 here\n---\nX.B\n---\nok"
    java = text.encode("utf-16-le")
    start16 = java.index("here".encode("utf-16-le")) // 2
    data = (
        '<?xml version="1.0"?>\n<pyramid>\n<text>'
        + "".join(f"<line>{line}</line>" for line in text.split("\n"))
        + f'</text>\n<scu uid="1" label="s"><contributor label="here">'
        f'<part label="here" start="{start16}" end="{start16 + 4}"/></contributor></scu>'
        "\n</pyramid>"
    ).encode("utf-8")
    pyramid, report = parse_pyramid(data)
    assert pyramid.references[0].text == "Smile \U0001f600 here"
    assert pyramid.scus[0].contributors[0].parts == [Part("A", 8, 12)]
    assert report.ok


def test_windows_1252_file_is_read_with_a_repair():
    data = fixture_bytes("event.pyr").replace(
        b'<scu uid="7" label="Nobody was hurt"', '<scu uid="7" label="Nobody was hurt, café"'.encode("cp1252")
    )
    pyramid, report = parse_pyramid(data)
    assert {s.uid: s.label for s in pyramid.scus}[7] == "Nobody was hurt, café"
    assert [(r.kind, r.scope) for r in report.repairs] == [("encoding", "file")]


# --------------------------------------------------------------------------- errors


def test_hostile_entities_are_refused():
    for name in ("hostile_xxe.pyr", "hostile_billion_laughs.pyr", "hostile_parameter_entity.pyr"):
        with pytest.raises(DucViewError, match="entities are not allowed"):
            parse_pyramid(fixture_bytes(name))


def test_external_dtd_is_not_fetched():
    pyramid, _ = parse_pyramid(fixture_bytes("hostile_external_dtd.pyr"))
    assert pyramid.references == [Reference("A", "T0001.M.100.A.A", "Harmless text.")]


def test_oversized_input_refused_before_parsing():
    data = fixture_bytes("event.pyr")
    with pytest.raises(DucViewError, match="over the limit of 100 bytes"):
        parse_pyramid(data, max_bytes=100)
    with pytest.raises(DucViewError, match="over the limit"):
        parse_peer_annotation(b"<" * 101, max_bytes=100)
    parse_pyramid(data, max_bytes=len(data))


def _mutated(old: bytes, new: bytes, name: str = "event.pyr") -> bytes:
    data = fixture_bytes(name)
    assert old in data, old
    return data.replace(old, new, 1)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "empty"),
        (b"<pyramid><text>", "malformed XML"),
        (fixture_bytes("event.pyr")[:-30], "malformed XML"),
        (b"<pyramid/>", "has no <text>"),
        (b"<other/>", "root element is <other>"),
        (_mutated(b'uid="4"', b'uid="0"'), "uid 0 is reserved"),
        (_mutated(b'uid="4"', b'uid="11"'), "duplicate SCU uid 11"),
        (_mutated(b'uid="4"', b'uid="four"'), "uid='four' is not an integer"),
        (_mutated(b'uid="4"', b'uid="' + b"9" * 5000 + b'"'), "is not an integer"),
        (_mutated(b'start="120"', b'start="6.6"'), "start='6.6' is not an integer"),
        (_mutated(b' start="120"', b""), "<part> has no 'start' attribute"),
        (_mutated(b'uid="4"', b'uid="-4"'), "uid -4 is out of range"),
        (_mutated(b'uid="4"', b'uid="2147483648"'), "uid 2147483648 is out of range"),
        (_mutated(b"<line>#3</line>", b"<line>#3<b>x</b></line>"), "holds a <b> element"),
        (_mutated(b"<line>#3</line>", b"<p>#3</p>"), "holds a <p> element"),
        (b"<pyramid><text><line>no header here</line></text></pyramid>", "no reference header found"),
    ],
)
def test_malformed_pyramids_raise_with_a_clear_message(data, message):
    with pytest.raises(DucViewError, match=message.replace("(", r"\(")):
        parse_pyramid(data)


@pytest.mark.parametrize(
    ("old", "new", "kind"),
    [
        (b'end="385"', b'end="99999"', "bad_offsets"),
        (b'start="120"', b'start="-1"', "bad_offsets"),
        (b'start="367" end="385"', b'start="385" end="367"', "bad_offsets"),
        (b'start="367" end="385"', b'start="367" end="367"', "bad_offsets"),
        (b'start="367" end="385"', b'start="5" end="23"', "moved"),
    ],
)
def test_glitched_offsets_are_relocated_by_their_label_and_reported(old, new, kind):
    good, _ = parse_pyramid(fixture_bytes("event.pyr"))
    pyramid, report = parse_pyramid(_mutated(old, new))
    assert pyramid == good
    assert [r.kind for r in report.repairs] == [kind]
    assert not report.rejects


def test_part_outside_the_text_whose_label_is_nowhere_is_dropped_and_its_contributor_counted_once():
    pyramid, report = parse_pyramid(
        _mutated(b'label="no one was injured" start="367" end="385"', b'label="nowhere" start="900000" end="3"')
    )
    assert [(r.kind, r.scu_uid) for r in report.rejects] == [("empty_contributor", 7)]  # one entry, not one per part
    assert "900000" in report.rejects[0].message and "outside the text" in report.rejects[0].message
    # that contributor lies nowhere in the text (no reference to attach it to): the only case
    # where a contributor goes, said once
    good, _ = parse_pyramid(fixture_bytes("event.pyr"))
    assert {s.uid: s.weight for s in pyramid.scus} == {s.uid: s.weight - (s.uid == 7) for s in good.scus}


def test_missing_labels_are_derived():
    good, _ = parse_pyramid(fixture_bytes("event.pyr"))
    pyramid, report = parse_pyramid(_mutated(b'<scu uid="7" label="Nobody was hurt"', b'<scu uid="7"'))
    assert {s.uid: s.label for s in pyramid.scus}[7] == {s.uid: s.contributors[0].label for s in good.scus}[7]
    assert [r.kind for r in report.repairs] == ["missing_label"]


def test_error_names_the_part():
    with pytest.raises(DucViewError) as err:
        parse_pyramid(_mutated(b'start="367"', b'start="x"'))
    assert str(err.value) == (
        "pyramid SCU 7, <contributor> 2, <part> 1: <part> attribute start='x' is not an integer (of at most 12 digits)"
    )


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (b'<peerscu uid="4"', b'<peerscu uid="99"', "uid 99 is not an SCU of the pyramid"),
        (b'<peerscu uid="7" label="(2) Nobody was hurt"', b'<peerscu uid="-7"', "uid -7 is not an SCU"),
        (b"<annotation>", b"<annotatio>", "malformed XML"),
    ],
)
def test_malformed_peer_annotations(old, new, message):
    with pytest.raises(DucViewError, match=message):
        parse_peer_annotation(_mutated(old, new, "event.pan"))


def test_parse_peer_annotation_needs_a_pan():
    with pytest.raises(DucViewError, match="expected <peerAnnotation>"):
        parse_peer_annotation(fixture_bytes("event.pyr"))


def test_bytes_required():
    with pytest.raises(TypeError):
        parse_pyramid("<pyramid/>")  # type: ignore[arg-type]


def test_glitched_peer_offsets_are_repaired():
    good, _ = parse_peer_annotation(fixture_bytes("event.pan"))
    for new in (b'start="145" end="999"', b'start="166" end="145"'):
        pan, report = parse_peer_annotation(_mutated(b'start="145" end="166"', new, "event.pan"))
        assert pan.matches == good.matches
        assert [(r.kind, r.scope) for r in report.repairs] == [("bad_offsets", "peer")]
    pan, report = parse_peer_annotation(
        _mutated(b'<peerscu uid="7" label="(2) Nobody was hurt"', b'<peerscu uid="7"', "event.pan")
    )
    assert pan.matches == good.matches and report.ok


def _scored_by_us(pan):
    """The peer's NIST scores computed from the parsed file (weights = contributors as read)."""
    from scoring.model import Convention
    from scoring.model import PeerAnnotation as ScoredPeer
    from scoring.model import Pyramid as ScoredPyramid
    from scoring.scores import score_peer

    pyramid = ScoredPyramid.of(
        [r.id for r in pan.pyramid.references],
        {s.uid: [[p.reference for p in c.parts] for c in s.contributors] for s in pan.pyramid.scus},
    )
    found = Counter(m.scu_uid for m in pan.matches)
    return score_peer(pyramid, ScoredPeer(dict(found), len(pan.non_matching)), Convention.NIST)


def test_a_match_whose_label_is_stale_is_kept_and_scored_as_the_files_own_tool_did():
    # SCU 4's match is labelled 'The closing parade was called off', found nowhere in the peer
    # text; its offsets hold 'The parade was cancelled'. DUCView 1.5 scored it (the <score>).
    pan, report = parse_peer_annotation(fixture_bytes("stale_label_v15.pan"))
    assert [
        (m.scu_uid, [pan.text[p.start : p.end] for p in m.parts], m.review) for m in pan.matches if m.scu_uid == 4
    ] == [(4, ["The parade was cancelled"], "offsets kept, label not found — review")]
    assert [(r.kind, r.scope, r.scu_uid) for r in report.repairs] == [("kept", "peer", 4)] and report.rejects == []
    ours, theirs = _scored_by_us(pan), pan.score
    assert (ours.size, ours.matched_scus, ours.observed_weight) == (
        int(theirs["totalscu"]),
        int(theirs["uniquescu"]),
        int(theirs["totalWeight"]),
    )
    assert (round(ours.modified, 4), round(ours.original, 4)) == (
        float(theirs["coverageScore"]),
        float(theirs["qualityScore"]),
    )


def test_a_match_whose_parts_all_lie_outside_the_text_stays_without_evidence():
    data = fixture_bytes("stale_label_v15.pan").replace(b'start="119" end="143"', b'start="900" end="924"')
    pan, report = parse_peer_annotation(data)
    assert [(m.parts, m.review) for m in pan.matches if m.scu_uid == 4] == [
        ([], "no evidence left (its parts lie outside the text and their labels are nowhere in it) — review")
    ]
    assert [(r.kind, r.scu_uid, r.part) for r in report.rejects] == [("unplaced", 4, 0)]
    assert "outside the text" in report.rejects[0].message
    ours = _scored_by_us(pan)
    assert (ours.matched_scus, ours.observed_weight) == (int(pan.score["uniquescu"]), int(pan.score["totalWeight"]))


def test_a_kept_pyramid_part_that_strays_into_a_header_is_clipped_to_its_reference():
    # A stale label over [210, 240): the end of reference A, then blank lines and B's header.
    pyramid, report = parse_pyramid(
        _mutated(b'label="Nobody was hurt" start="175" end="190"', b'label="Nobody at all" start="210" end="240"')
    )
    (part,) = {s.uid: s for s in pyramid.scus}[7].contributors[0].parts
    a = pyramid.reference("A").text
    assert (part.reference, part.end) == ("A", len(a)) and a[part.start :].strip().endswith("cancelled.")
    assert [(r.kind, r.stored) for r in report.repairs] == [("kept", (210, 240)), ("clipped", (210, 240))]
    assert report.rejects == []
