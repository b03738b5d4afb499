"""The browser's provisional score (frontend/static/frontend/js/pyramidscore.js), run in Debian's
Chromium, against the Python scoring core on every DUC 2006 and DUC 2007 peer annotation, in both
conventions: the same counts and bit-for-bit the same original and modified scores."""

import json

import pytest

from annotation.formats.ducview import parse_peer_annotation
from scoring.model import SCU, Contributor, Convention, PeerAnnotation, Pyramid
from scoring.scores import score_peer

from tests.conftest import shared_data

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

KEYS = (
    "observed_weight",
    "matched_scus",
    "repetitions",
    "non_matching",
    "size",
    "average_scus",
    "xa",
    "max_weight_x",
    "max_weight_xa",
    "original",
    "modified",
)


@pytest.fixture
def page(chromium, live_server):
    page = chromium.new_page()
    page.goto(f"{live_server.url}/healthz")
    page.evaluate("async () => { window.ps = await import('/static/frontend/js/pyramidscore.js'); }")
    yield page
    page.close()


def as_document(pan):
    """The .pan file as the annotator's document shows it (SCU ids = uids here) and as scoring inputs."""
    scus, scoring_scus = [], []
    for scu in pan.pyramid.scus:
        contributors = [c for c in scu.contributors if c.parts]
        scus.append(
            {
                "id": scu.uid,
                "contributors": [
                    {"reference": c.parts[0].reference, "parts": [{"reference": p.reference} for p in c.parts]}
                    for c in contributors
                ],
            }
        )
        scoring_scus.append(
            SCU(scu.uid, tuple(Contributor(frozenset(p.reference for p in c.parts)) for c in contributors))
        )
    known = {s.uid for s in pan.pyramid.scus}
    found = [m.scu_uid for m in pan.matches if m.scu_uid in known]
    references = [r.id for r in pan.pyramid.references]
    document = {
        "pyramid": {"references": [{"id": r} for r in references], "scus": scus},
        "matches": [{"scu": uid} for uid in found] + [{"scu": None}] * len(pan.non_matching),
    }
    return document, Pyramid(tuple(references), tuple(scoring_scus)), PeerAnnotation.of(found, len(pan.non_matching))


def python_scores(pyramid, annotation, convention):
    score = score_peer(pyramid, annotation, convention).as_dict()
    out = {key: score[key] for key in KEYS}
    # The SCUs found several times, of those the Python core scored (its dropped matches count nowhere).
    out["repeated"] = sorted(
        (
            [uid, count]
            for uid, count in annotation.matches.items()
            if count > 1 and uid not in score["dropped_matches"]
        ),
        key=lambda r: (-r[1], r[0]),
    )
    return out


def test_hand_computed_example(page):
    # A (weight 3: A, B, C), B (2: A, B), C (1: A); the peer finds A twice and C, plus one unit in no SCU.
    pyramid = {
        "references": [{"id": r} for r in "ABCD"],
        "scus": [
            {"id": 1, "contributors": [{"reference": r, "parts": [{"reference": r}]} for r in "ABC"]},
            {"id": 2, "contributors": [{"reference": r, "parts": [{"reference": r}]} for r in "AB"]},
            {"id": 3, "contributors": [{"reference": "A", "parts": [{"reference": "A"}, {"reference": "B"}]}]},
        ],
    }
    matches = [{"scu": 1}, {"scu": 1}, {"scu": 3}, {"scu": None}]
    nist, sacrerouge = page.evaluate(
        "([p, m]) => [ps.scorePeer(p, m, 'nist'), ps.scorePeer(p, m, 'sacrerouge')]", [pyramid, matches]
    )
    # nist: D = 3 + 1 = 4; X = 2 matched + 1 repetition + 1 = 4 -> MaxWeight(4) = 6; Xa = round(6/4 = 1.5) = 2 -> 5
    assert (nist["observed_weight"], nist["size"], nist["xa"], nist["original"], nist["modified"]) == (
        4,
        4,
        2,
        4 / 6,
        4 / 5,
    )
    # DUCView's figures: MaxWeight(X) = 3+2+1 = 6 (only 3 SCUs), MaxWeight(Xa) = 3+2 = 5, mean 6/4 SCUs,
    # SCU 1 found twice
    assert (nist["max_weight_x"], nist["max_weight_xa"], nist["average_scus"], nist["repeated"]) == (
        6,
        5,
        1.5,
        [{"scu": 1, "count": 2}],
    )
    # sacrerouge drops SCU 3 (its contributor lies in two references): D = 3, X = 3, Xa = ceil(5/4) = 2 -> 5
    assert (
        sacrerouge["observed_weight"],
        sacrerouge["size"],
        sacrerouge["xa"],
        sacrerouge["original"],
        sacrerouge["modified"],
    ) == (3, 3, 2, 3 / 5, 3 / 5)
    assert (sacrerouge["average_scus"], sacrerouge["repeated"]) == (5 / 4, [{"scu": 1, "count": 2}])


@pytest.mark.parametrize("corpus", ["duc2006", "duc2007-main"])
def test_every_duc_annotation_scores_as_in_python(page, corpus):
    paths = sorted(shared_data(corpus, "allpans").glob("*.pan"))
    documents, expected = [], []
    for path in paths:
        pan, _ = parse_peer_annotation(path.read_bytes())
        document, pyramid, annotation = as_document(pan)
        documents.append(document)
        expected.append({c.value: python_scores(pyramid, annotation, c) for c in Convention})
    # Both ways as one JSON text: Playwright's own serialization of 4.5 MB of nested objects took
    # most of the test's time (numbers survive JSON both ways as the same doubles).
    shown = json.loads(
        page.evaluate(
            """(text) => JSON.stringify(JSON.parse(text).map((d) => Object.fromEntries(
            ps.CONVENTIONS.map((c) => [c, ps.scorePeer(d.pyramid, d.matches, c)]))))""",
            json.dumps(documents),
        )
    )
    assert len(shown) == len(paths) > 250
    assert sum(1 for e in expected if e["nist"]["repeated"]) > 10, (
        "the corpus has peers that repeat SCUs: the list is checked"
    )
    for path, mine, theirs in zip(paths, shown, expected, strict=True):
        for convention in ("nist", "sacrerouge"):
            shown_repeated = [[r["scu"], r["count"]] for r in mine[convention]["repeated"]]
            assert {**{k: mine[convention][k] for k in KEYS}, "repeated": shown_repeated} == theirs[convention], (
                f"{path.name} ({convention})"
            )
