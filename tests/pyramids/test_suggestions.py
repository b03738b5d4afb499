"""Autoannotate suggestions (annotation/pyramids/suggestions.py, suggestion_features.py,
suggestion_model.py, peers/ranked_suggestions.py and GET annotations/{id}/suggestions/): what each source
finds, the features and the ranking, training from DUCView files, and the blind rule: an annotator's
suggestions never come from another annotator's work."""

import io
import math

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from hypothesis import given
from hypothesis import strategies as st

from annotation.corpus.models import Assignment, PeerSummary
from annotation.formats.model import SCU as SCUFile
from annotation.formats.model import Contributor, Part, PeerAnnotationFile, PeerMatch, PeerPart, Reference
from annotation.formats.model import Pyramid as PyramidFile
from annotation.formats.writer import write_peer_annotation
from annotation.peers.editing import add_match
from annotation.peers.models import PeerAnnotation
from annotation.peers.ranked_suggestions import peer_case, study_cases
from annotation.pyramids.editing import add_contributor
from annotation.pyramids.models import SCU, Pyramid
from annotation.pyramids.suggestion_features import (
    FEATURES,
    TOKENS_KEPT,
    ScuText,
    _common_subsequence,
    _mass,
    candidates,
    contributor_context,
    covers,
    is_right,
    most_alike,
    seen_sentences,
    tokens,
    word_weights,
    word_weights_of_sets,
)
from annotation.pyramids.suggestion_inputs import pyramid_scus, topic_weights
from annotation.pyramids.suggestion_model import (
    PeerCase,
    ducview_cases,
    examples,
    fit,
    load,
    ranked,
    rules_confidence,
    save,
    saw,
)
from annotation.pyramids.suggestions import from_earlier

from tests.api.world import client_for
from tests.foundation.factories import topic
from tests.scoring._strategies import hsettings

REF_A = "The dam burst at night and the valley flooded."
REF_B = "Engineers blamed the old concrete of the dam."


def test_from_earlier_finds_the_same_words_whole_and_in_order():
    peer = "Officials said THE OLD  DAM\nfailed; the old damage was repaired."
    found = from_earlier(
        peer,
        [
            (5, ["the old dam failed"], "3"),
            (6, ["old dam", "repaired"], "4"),
            (7, ["dam"], "4"),
            (8, ["old dama"], "4"),
        ],
    )
    assert [(s.scu, [peer[a:b] for a, b in s.parts]) for s in found] == [
        (5, ["THE OLD  DAM\nfailed"]),
        (6, ["OLD  DAM", "repaired"]),
    ]  # one word is too little; "dama" is no whole word
    assert found[0].why == "you matched the same words in peer 3"


@pytest.fixture
def study(db):
    t, refs = topic("T7", "Blind", A=REF_A, B=REF_B)
    pyramid = Pyramid.objects.create(topic=t, status=Pyramid.Status.DONE)
    pyramid.references.set(refs.values())
    dam = SCU.objects.create(pyramid=pyramid, uid=1, label="The dam burst at night")
    add_contributor(dam, refs["A"], [(4, 22)])
    concrete = SCU.objects.create(pyramid=pyramid, uid=2, label="The concrete was old")
    add_contributor(concrete, refs["B"], [(21, 33)])
    users = {name: User.objects.create_user(name) for name in ("xena", "yuri")}
    peers = {
        pid: PeerSummary.objects.create(topic=t, external_id=pid, text=text)
        for pid, text in [
            ("1", "Engineers said the aging concrete cracked."),
            ("2", "Reports say the aging concrete cracked, then the dam burst at night."),
        ]
    }
    for name in users:
        Assignment.objects.create(topic=t, annotator=users[name], task=Assignment.Task.ANNOTATE_PEERS)
    earlier = PeerAnnotation.objects.create(peer=peers["1"], pyramid=pyramid, annotator=users["xena"], status="done")
    at = peers["1"].text.index("aging concrete cracked")
    add_match(earlier, concrete, [(at, at + len("aging concrete cracked"))])  # words no contributor has
    mine = {
        name: PeerAnnotation.objects.create(
            peer=peers["2"], pyramid=pyramid, annotator=users[name], status="in_progress"
        )
        for name in users
    }
    return users, mine, dam, concrete


def test_suggestions_api_and_the_blind_rule(study):
    users, mine, dam, concrete = study
    xena = client_for(users["xena"]).get(f"/api/annotations/{mine['xena'].pk}/suggestions/")
    assert xena.status_code == 200
    text = mine["xena"].peer.text
    shown = [
        (s["scu"], s["source"], [text[p["start"] : p["end"]] for p in s["parts"]]) for s in xena.json()["suggestions"]
    ]
    assert shown == [
        (concrete.pk, "earlier", ["aging concrete cracked"]),
        (dam.pk, "pyramid", ["then the dam burst at night"]),
    ]
    yuri = client_for(users["yuri"]).get(f"/api/annotations/{mine['yuri'].pk}/suggestions/").json()["suggestions"]
    assert [(s["scu"], s["source"]) for s in yuri] == [(dam.pk, "pyramid")], "xena's work never reaches yuri"
    assert client_for(users["yuri"]).get(f"/api/annotations/{mine['xena'].pk}/suggestions/").status_code == 404
    add_match(
        mine["xena"], dam, [(text.index("dam"), text.index("dam") + 3)]
    )  # what the annotation has is not suggested again
    again = client_for(users["xena"]).get(f"/api/annotations/{mine['xena'].pk}/suggestions/").json()["suggestions"]
    assert [s["scu"] for s in again] == [concrete.pk]


# ---------------------------------------------------------------------------- features and ranking


def test_tokens_are_lemmas_without_stop_words():
    assert [t[0] for t in tokens("The dams were flooded by 3 rivers")] == ["dam", "flood", "3", "river"]


def test_a_peers_second_suggestions_split_no_text_of_the_pyramid_or_topic_again(study):
    """The words of the texts suggestions rest on are kept per process (``tokens``): a second read of
    the pyramid's SCUs and the topic's word weights splits nothing again and gives what a fresh
    split gives; what is kept is a tuple (shared by every caller: never changed) and bounded."""
    users, mine, _, _ = study
    pyramid = mine["xena"].pyramid
    tokens.cache_clear()
    first = (pyramid_scus(pyramid), topic_weights(pyramid), peer_case(mine["xena"]))
    split = tokens.cache_info().misses
    again = (pyramid_scus(pyramid), topic_weights(pyramid), peer_case(mine["xena"]))
    assert tokens.cache_info().misses == split, "texts split again"
    assert again == first
    tokens.cache_clear()
    assert (pyramid_scus(pyramid), topic_weights(pyramid), peer_case(mine["xena"])) == first
    assert isinstance(tokens("The dams were flooded"), tuple)
    assert tokens.cache_info().maxsize == TOKENS_KEPT


def test_word_weights_are_the_topics_idf():
    texts = ["The dam burst.", "A dam held.", "Rain fell on the dam."]
    weights = word_weights(texts)
    n = len(texts)
    assert (
        weights["dam"] == pytest.approx(math.log((1 + n) / (1 + 3)) + 1) == pytest.approx(1.0)
    )  # in every text: tells little
    assert weights["rain"] == pytest.approx(math.log((1 + n) / (1 + 1)) + 1)
    assert weights["rain"] > weights["dam"]


def test_candidate_features_say_how_much_of_the_scu_a_clause_holds():
    peer = "Officials met on Monday. The old dam burst in 1998, flooding the valley below."
    scus = [
        ScuText(1, "The dam burst in 1998", ["the dam burst in 1998"]),
        ScuText(2, "The dam burst in 1997", ["dam burst 1997"]),
        ScuText(3, "Officials met", ["officials met"]),
    ]
    found = {c.scu: c for c in candidates(peer, scus, word_weights([peer]))}
    one, two, three = found[1], found[2], found[3]
    assert peer[slice(*one.span)] == "The old dam burst in 1998"  # widened to its clause, not the whole sentence
    assert one.features["contributor_share"] == 1.0 and one.features["numbers_found"] == 1.0
    assert two.features["numbers_found"] == 0.0 and two.features["has_numbers"] == 1.0  # the wrong year
    assert one.features["rank_in_sentence"] == 0.0 and two.features["rank_in_sentence"] == 1.0
    assert one.features["margin_in_sentence"] > 0 > two.features["margin_in_sentence"]
    assert three.sentence == 0 and peer[slice(*three.span)] == "Officials met on Monday"
    assert all(set(c.features) == set(FEATURES) for c in found.values())


def test_earlier_matches_give_the_very_words_and_their_share():
    peer = "Rescuers arrived late, and the aging concrete cracked."
    scus = [ScuText(4, "The concrete was old", ["old concrete"])]
    with_earlier = candidates(peer, scus, {}, [(4, ["aging concrete cracked"], "2"), (4, ["the concrete aged"], "3")])
    (c,) = with_earlier
    assert c.features["earlier_exact"] == 1.0 and peer[slice(*c.span)] == "aging concrete cracked"
    assert c.features["earlier_count"] == pytest.approx(math.log(3)) and c.features["earlier_any"] == 1.0
    (alone,) = candidates(peer, scus, {})
    assert (
        alone.features["earlier_exact"] == 0.0
        and alone.features["earlier_wshare"] == 0.0
        and alone.features["earlier_any"] == 0.0
    )


def test_a_sentence_read_and_left_without_the_scu_says_it_is_not_there():
    """The annotator's finished earlier peers: each sentence with the SCUs matched in it; the most
    alike sentence of the peer being annotated tells which SCUs the annotator put there, and which not."""
    earlier = "The old dam burst at night. Officials met on Monday."
    matches = [(1, [(earlier.index("dam burst"), earlier.index("dam burst") + 9)])]  # in the first sentence only
    read = seen_sentences([(earlier, matches)])
    assert read == [({"old", "dam", "burst", "night"}, frozenset({1})), ({"official", "meet", "monday"}, frozenset())]
    assert most_alike({"old", "dam", "burst", "night", "valley"}, read) == (0.8, frozenset({1}))  # 4 of 5 lemmas
    assert most_alike({"valley", "flood"}, read) == (0.0, frozenset())  # alike to none: says nothing

    peer = "Officials met on Monday, after the old dam burst at night."
    scus = [ScuText(1, "The dam burst", ["the dam burst"]), ScuText(2, "Officials met", ["officials met"])]
    found = {c.scu: c.features for c in candidates(peer, scus, {}, seen=[(earlier, matches)])}
    alike = 4 / 7  # {official, meet, monday, old, dam, burst, night} against the first earlier sentence's 4
    assert found[1]["seen_likeness"] == pytest.approx(alike) and found[1]["seen_matched"] == 1.0
    assert found[2]["seen_likeness"] == pytest.approx(alike) and found[2]["seen_matched"] == 0.0  # read, not put there
    assert found[1]["seen_matches"] == pytest.approx(math.log(2))
    blind = {c.scu: c.features for c in candidates(peer, scus, {})}
    assert blind[2]["seen_likeness"] == 0.0 and blind[2]["seen_matches"] == 0.0


def test_right_means_the_experts_scu_and_half_of_its_span():
    expert = [(7, [(10, 20), (30, 40)])]  # 20 characters
    assert covers([(10, 20)], expert[0][1]) == 0.5 and is_right(7, [(0, 20)], expert)
    assert not is_right(7, [(10, 19)], expert)  # 9 of 20
    assert not is_right(8, [(0, 50)], expert)  # another SCU
    assert is_right(7, [(12, 18), (31, 36), (0, 100)], expert)


def test_rules_rank_best_first_one_clause_per_scu():
    peer = "Later the dam burst again. The valley flooded at night. The dam burst at night, people said."
    scus = [
        ScuText(1, "The dam burst at night", ["dam burst at night"]),
        ScuText(2, "The valley flooded", ["the valley flooded"]),
        ScuText(3, "Officials blamed the rain", ["officials blamed rain"]),
    ]
    out = ranked(PeerCase(peer, scus, word_weights([peer])), None)
    assert [(c.scu, peer[slice(*c.span)]) for c, _ in out] == [
        (2, "The valley flooded at night"),
        (1, "The dam burst at night"),
    ]
    assert (
        [p for _, p in out] == [rules_confidence(c) for c, _ in out] == [0.9, 0.9]
    )  # "Later the dam burst again": 2 of 3 words, beaten


def _constructed_cases():
    """Small DUCView-like cases: an SCU is matched where its clause has the SCU's words and the right number."""
    cases, topics = [], []
    for k in range(24):
        year, wrong = 1970 + k, 1930 + k
        scus = [
            ScuText(1, f"The dam burst in {year}", [f"the dam burst in {year}", f"dam failed {year}"]),
            ScuText(2, "Crops were lost", ["farmers lost their crops"]),
            ScuText(3, "Rain fell", ["heavy rain fell"]),
        ]
        peer = f"The dam burst in {year}, and farmers lost crops. The dam burst again in {wrong}, said heavy critics."
        first, second = peer.index("The dam burst in"), peer.index("farmers lost crops")
        expert = [
            (1, [(first, first + len(f"The dam burst in {year}"))]),
            (2, [(second, second + len("farmers lost crops"))]),
        ]
        cases.append(PeerCase(peer, scus, word_weights([peer]), (), expert))
        topics.append(f"T{k % 4}")
    return cases, topics


def test_a_trained_model_ranks_right_candidates_above_wrong_ones(tmp_path):
    cases, topics = _constructed_cases()
    X, y, _ = examples(cases)
    model = fit(cases, topics, "constructed")
    probabilities = model.confidences([c for c in candidates(cases[0].text, cases[0].scus, cases[0].weights)])
    found = candidates(cases[0].text, cases[0].scus, cases[0].weights)
    right = [p for c, p in zip(found, probabilities, strict=True) if is_right(c.scu, [c.span], cases[0].expert)]
    wrong = [p for c, p in zip(found, probabilities, strict=True) if not is_right(c.scu, [c.span], cases[0].expert)]
    assert right and wrong and min(right) > max(wrong)
    assert sum(y) and len(y) > sum(y)
    out = ranked(cases[0], model)
    assert [p for _, p in out] == sorted((p for _, p in out), reverse=True) and all(
        p >= model.threshold for _, p in out
    )
    assert {c.scu for c, _ in out} == {1, 2} and all(is_right(c.scu, [c.span], cases[0].expert) for c, _ in out)
    saved = save(model, tmp_path / "m.joblib")
    assert load(saved).threshold == model.threshold and load(tmp_path / "none.joblib") is None
    (tmp_path / "broken.joblib").write_bytes(b"not a model")
    assert load(tmp_path / "broken.joblib") is None  # the rules serve


def _pan_file(folder, annotator, peer_id, year):
    """A DUCView .pan (NIST-named) with a two-reference pyramid and the expert's matches."""
    refs = [
        Reference("A", "D0901.M.250.A.A", f"The dam burst in {year}. Farmers lost their crops."),
        Reference("B", "D0901.M.250.A.B", f"In {year} the dam failed. Heavy rain fell."),
    ]

    def part(ref, phrase):
        text = refs[0 if ref == "A" else 1].text
        return Part(ref, text.index(phrase), text.index(phrase) + len(phrase))

    scus = [
        SCUFile(
            1,
            "The dam burst",
            "",
            [
                Contributor("", "", [part("A", f"The dam burst in {year}")]),
                Contributor("", "", [part("B", "the dam failed")]),
            ],
        ),
        SCUFile(2, "Crops were lost", "", [Contributor("", "", [part("A", "Farmers lost their crops")])]),
        SCUFile(3, "Rain fell", "", [Contributor("", "", [part("B", "Heavy rain fell")])]),
    ]
    peer = f"The dam burst in {year}, and farmers lost crops. The dam burst again in {year - 40}, said heavy critics."
    a, b = peer.index(f"The dam burst in {year}"), peer.index("farmers lost crops")
    matches = [
        PeerMatch(1, "", "", [PeerPart(a, a + len(f"The dam burst in {year}"))]),
        PeerMatch(2, "", "", [PeerPart(b, b + len("farmers lost crops"))]),
    ]
    pan = PeerAnnotationFile(PyramidFile(refs, scus, None), peer, matches, [], None)
    path = folder / f"{annotator}.D09{peer_id:02d}.M.250.A.{peer_id}.pan"
    path.write_bytes(write_peer_annotation(pan))
    return path


def test_train_suggestions_command_learns_from_pan_files(tmp_path, db, settings):
    folder = tmp_path / "pans"
    folder.mkdir()
    for k in range(1, 25):
        _pan_file(folder, 100 + k % 2, k, 1960 + k)
    (folder / "notes.txt").write_text("not a pan")
    settings.SUGGESTIONS_MODEL = str(tmp_path / "var" / "model.joblib")
    out = io.StringIO()
    call_command("train_suggestions", str(folder), stdout=out)
    assert "trained on 24 peer annotations (24 DUCView files, 0 study annotations)" in out.getvalue()
    model = load()
    assert model is not None and 0 < model.threshold < 1
    # It records what trained it: every .pan file (resolved) and their topics (the files' D09xx).
    pans = sorted(str(p.resolve()) for p in folder.glob("*.pan"))
    assert (
        sorted(model.sources) == pans
        and len(pans) == 24
        and model.topics == tuple(sorted({f"D09{k:02d}" for k in range(1, 25)}))
    )
    case = ducview_cases([_pan_file(tmp_path, 200, 1, 2020)])[0][3]  # a peer it never saw
    out = ranked(case, model)
    assert {c.scu for c, _ in out} == {1, 2} and all(is_right(c.scu, [c.span], case.expert) for c, _ in out)
    with pytest.raises(CommandError, match="no such file"):
        call_command("train_suggestions", str(tmp_path / "missing"))
    with pytest.raises(CommandError, match="nothing to learn from"):
        call_command("train_suggestions", "--no-study", str(tmp_path / "var"))


def test_a_model_that_saw_the_release_or_its_topics_is_refused(tmp_path):
    """What a bench checks before it measures a model on a release (issue 30): it must record what
    trained it, no file of it may lie in the release, and it may not share a topic with it."""
    cases, topics = _constructed_cases()
    trained = tmp_path / "duc2006" / "allpans"
    sources = [str(trained / f"{t}.pan") for t in topics]
    model = fit(cases, topics, "constructed", sources)
    other = tmp_path / "duc2007-main"
    assert saw(model, other, ["D0701", "D0702"]) is None
    assert "are in" in saw(model, tmp_path / "duc2006", ["D0701"])  # its own files
    assert "trained on 1 of the topics reported on" in saw(model, other, ["D0701", topics[0]])
    unrecorded = fit(cases, topics, "constructed")  # what the files were is not known: refused too
    unrecorded.topics = ()
    assert "does not record" in saw(unrecorded, other, ["D0701"])
    del model.sources, model.topics  # a model pickled before they were recorded: the class's defaults
    assert model.seen() is None and "does not record" in saw(model, other, ["D0701"])


def test_training_from_the_study_uses_finished_annotations_only(study):
    users, mine, dam, concrete = study
    ((topic_id, case),) = study_cases()  # xena's earlier peer is done
    assert case.expert and case.text == PeerSummary.objects.get(external_id="1").text
    assert [scu for scu, _ in case.expert] == [concrete.pk]


def test_seen_is_the_annotators_own_finished_peers_and_the_one_finishing(study):
    """The finished peers the ranking reads: the annotator's own done annotations of the pyramid, plus
    the one the page says it is finishing (read ahead of its "done"), never another annotator's."""
    users, mine, dam, concrete = study
    first = PeerSummary.objects.get(external_id="1")
    third = PeerSummary.objects.create(topic=first.topic, external_id="3", text="The dam burst at night.")
    going = PeerAnnotation.objects.create(peer=third, pyramid=dam.pyramid, annotator=users["xena"])
    add_match(going, dam, [(4, 13)])
    at = first.text.index("aging concrete cracked")
    assert peer_case(mine["xena"]).seen == [(first.text, [(concrete.pk, [(at, at + 22)])])]  # not the unfinished one
    assert peer_case(mine["xena"], finishing=going.pk).seen == [
        (first.text, [(concrete.pk, [(at, at + 22)])]),
        (third.text, [(dam.pk, [(4, 13)])]),
    ]
    assert peer_case(mine["yuri"], finishing=going.pk).seen == []  # xena's, named by yuri: nothing read
    url = f"/api/annotations/{mine['xena'].pk}/suggestions/"
    assert client_for(users["xena"]).get(url, {"finishing": going.pk}).status_code == 200
    refused = client_for(users["xena"]).get(url, {"finishing": "next"})
    assert refused.status_code == 400 and "finishing" in refused.json()


def _shown(user, annotation):
    return client_for(user).get(f"/api/annotations/{annotation.pk}/suggestions/").json()["suggestions"]


@pytest.mark.parametrize("trained", [False, True])
def test_blind_rule_another_annotators_annotation_of_the_peer_changes_nothing(study, tmp_path, settings, trained):
    """Plant yuri's annotation of the very peer xena is annotating (and of her earlier peer): xena's
    suggestions are identical with and without it, with the rules and with a trained model."""
    users, mine, dam, concrete = study
    settings.SUGGESTIONS_MODEL = str(tmp_path / "model.joblib")
    if trained:
        cases, topics = _constructed_cases()
        save(fit(cases, topics, "constructed"))
    before = _shown(users["xena"], mine["xena"])
    text = mine["yuri"].peer.text
    for phrase, scu in (("aging concrete cracked", dam), ("dam burst at night", concrete), ("Reports say", concrete)):
        at = text.index(phrase)
        add_match(mine["yuri"], scu, [(at, at + len(phrase))])  # deliberately odd matches
    mine["yuri"].status = "done"
    mine["yuri"].save()
    other_peer = PeerSummary.objects.get(external_id="1")
    planted = PeerAnnotation.objects.create(
        peer=other_peer, pyramid=mine["yuri"].pyramid, annotator=users["yuri"], status="done"
    )
    add_match(planted, dam, [(0, len(other_peer.text))])
    after = _shown(users["xena"], mine["xena"])
    assert after == before and before


def test_api_returns_suggestions_best_first_with_a_confidence(study):
    users, mine, dam, concrete = study
    shown = _shown(users["xena"], mine["xena"])
    confidences = [s["confidence"] for s in shown]
    assert len(shown) == 2 and all(0 < c <= 1 for c in confidences)
    assert confidences == sorted(confidences, reverse=True)
    text = mine["xena"].peer.text
    # the same ranking as the rules computed independently from the features of each suggestion
    scus = {
        dam.pk: ScuText(dam.pk, dam.label, [REF_A[4:22]]),
        concrete.pk: ScuText(concrete.pk, concrete.label, [REF_B[21:33]]),
    }
    case = PeerCase(
        text,
        list(scus.values()),
        word_weights([REF_A, REF_B, text, PeerSummary.objects.get(external_id="1").text]),
        [(concrete.pk, ["aging concrete cracked"], "1")],
    )
    assert [(s["scu"], s["confidence"]) for s in shown] == [(c.scu, p) for c, p in ranked(case, None)]


def test_words_that_tell_scus_apart_weigh_more_and_phrases_count():
    """ "dam" is in every SCU of this pyramid, "spillway" in one: a sentence with "dam" alone holds
    little of what tells the SCU apart; and word pairs found in order count as a phrase."""
    scus = [
        ScuText(1, "The dam spillway broke", ["dam spillway broke"]),
        ScuText(2, "The dam was old", ["old dam"]),
        ScuText(3, "The dam was rebuilt", ["dam rebuilt"]),
    ]
    weights = word_weights_of_sets([{"dam", "spillway", "break"}, {"dam", "old"}, {"dam", "rebuild"}])
    assert weights["dam"] == pytest.approx(math.log(4 / 4) + 1) and weights["spillway"] == pytest.approx(
        math.log(4 / 2) + 1
    )
    peer = "The spillway broke. The dam held."
    found = {(c.scu, c.sentence): c.features for c in candidates(peer, scus, {})}
    spillway, dam = found[(1, 0)], found[(1, 1)]
    total = weights["dam"] + weights["spillway"] + weights["break"]
    assert spillway["scu_specific_wshare"] == pytest.approx((weights["spillway"] + weights["break"]) / total)
    assert dam["scu_specific_wshare"] == pytest.approx(weights["dam"] / total)
    assert (
        spillway["bigram_share"] == 0.5 and dam["bigram_share"] == 0.0
    )  # "spillway broke" of (dam spillway, spillway broke)


def test_evidence_in_absolute_mass_rarest_word_order_and_derived_words():
    """The pooled words found as idf mass and as their rarest one; the contributor's words found in
    its order with gaps (longest common subsequence); and words matching on their first letters
    ("investigators" for "investigation", which their lemmas do not join)."""
    peer = "The valley dam, at night, burst open as investigators watched."
    scus = [ScuText(1, "The dam burst", ["dam burst at night, valley investigation"])]
    weights = {"dam": 1.0, "burst": 2.0, "night": 1.5, "valley": 3.0, "investigation": 2.5}
    (c,) = candidates(peer, scus, weights)
    found = ["valley", "dam", "night", "burst"]  # "investigation" is not, as a lemma
    assert c.features["union_mass"] == pytest.approx(sum(weights[w] for w in found))
    assert c.features["rarest_hit"] == weights["valley"]
    contributor = [t[0] for t in tokens("dam burst at night, valley investigation")]
    sentence = [t[0] for t in tokens(peer)]
    assert contributor == ["dam", "burst", "night", "valley", "investigation"]
    assert sentence[:4] == ["valley", "dam", "night", "burst"]
    assert c.features["order_share"] == pytest.approx(2 / 5)  # "dam night" or "dam burst", in order
    assert tokens("investigators")[0][0] != "investigation"
    mass = sum(weights.values())
    assert c.features["contributor_wshare"] == pytest.approx(7.5 / mass)
    assert c.features["stem_wshare"] == pytest.approx((7.5 + weights["investigation"]) / mass)
    in_span = {t[0] for t in tokens(peer[slice(*c.span)])}
    assert c.features["length_ratio"] == pytest.approx(math.log((1 + len(in_span)) / (1 + 5)))


def test_rivals_strong_and_the_best_other_score():
    peer = "The dam burst and the old concrete cracked. The dam held."
    scus = [
        ScuText(1, "The dam burst", ["dam burst"]),
        ScuText(2, "The concrete cracked", ["old concrete cracked"]),
        ScuText(3, "The dam was rebuilt", ["dam rebuilt quickly"]),
    ]
    found = {(c.scu, c.sentence): c.features for c in candidates(peer, scus, {})}
    burst, concrete, rebuilt = found[(1, 0)], found[(2, 0)], found[(3, 0)]
    assert (burst["contributor_wshare"], concrete["contributor_wshare"], rebuilt["contributor_wshare"]) == (
        1.0,
        1.0,
        pytest.approx(1 / 3),
    )
    assert burst["strong_rivals"] == pytest.approx(math.log(2))  # the concrete only: rebuilt is below one half
    assert rebuilt["strong_rivals"] == pytest.approx(math.log(3))
    assert rebuilt["best_other_in_sentence"] == 1.0 and burst["best_other_in_sentence"] == 1.0
    assert found[(1, 1)]["best_other_in_peer"] == 1.0 and burst["best_other_in_peer"] == pytest.approx(0.5)
    assert burst["margin_in_peer"] == pytest.approx(1.0 - burst["best_other_in_peer"])


def test_the_reference_sentence_of_a_contributor_tells_the_peer_sentence_it_was_written_from():
    reference = "The dam burst. Engineers blamed the old concrete, officials said. Rain fell."
    at = reference.index("old concrete")
    context = contributor_context([(reference, at, at + len("old concrete")), (reference, 0, 3)])
    assert context == "Engineers blamed the old concrete, officials said. The dam burst."
    scus = [ScuText(2, "The concrete was old", ["old concrete"], [context])]
    peer = "Officials said engineers blamed the concrete. The concrete was old."
    weights = word_weights([peer, reference])
    found = {c.sentence: c.features for c in candidates(peer, scus, weights)}
    lemmas = {t[0] for t in tokens(context)}
    rest = lemmas - {"old", "concrete"}

    def share(words, of):
        return sum(weights[w] for w in words & of) / sum(weights[w] for w in of)

    first = {t[0] for t in tokens("Officials said engineers blamed the concrete.")}
    assert found[0]["context_wshare"] == pytest.approx(share(first, lemmas))
    assert found[0]["context_rest_wshare"] == pytest.approx(share(first, rest)) and share(first, rest) > 0
    assert found[1]["context_rest_wshare"] == 0.0  # the SCU's own words only: not the sentence written from
    (alone,) = [c for c in candidates(peer, [ScuText(2, "x", ["old concrete"])], weights) if c.sentence == 1]
    assert alone.features["context_wshare"] == 0.0  # no reference sentence known: nothing


def test_weighted_masses_do_not_depend_on_the_order_of_a_set():
    """A set's order changes with string hashing from one process to the next: a plain sum of the
    same weights in another order differs in its last bit, which reordered tied candidates and so
    changed a trained model from run to run."""
    weights = {"a": 0.1, "b": 0.2, "c": 0.3}
    assert sum([0.1, 0.2, 0.3]) != sum([0.3, 0.2, 0.1])  # what a plain sum does
    assert _mass(["a", "b", "c"], weights) == _mass(["c", "b", "a"], weights) == 0.6


def test_the_pyramid_gives_each_contributor_its_reference_sentence(study):
    _, _, dam, concrete = study
    scus = {unit.scu: unit for unit in pyramid_scus(dam.pyramid)}
    assert scus[dam.pk].contributors == [REF_A[4:22]] and scus[dam.pk].contexts == [REF_A]
    assert scus[concrete.pk].contributors == [REF_B[21:33]] and scus[concrete.pk].contexts == [REF_B]


@hsettings(300)
@given(
    st.lists(st.sampled_from("abcdefgh"), max_size=12),
    st.lists(st.sampled_from("abcdefghijklmnop"), max_size=25),
)
def test_the_order_feature_is_the_longest_common_subsequence(contributor, sentence):
    """The words in no common subsequence are left out before the quadratic search: the length is
    that of the plain dynamic programme over both whole sequences."""
    table = [[0] * (len(sentence) + 1) for _ in range(len(contributor) + 1)]
    for i, x in enumerate(contributor, 1):
        for j, y in enumerate(sentence, 1):
            table[i][j] = table[i - 1][j - 1] + 1 if x == y else max(table[i - 1][j], table[i][j - 1])
    assert _common_subsequence(contributor, sentence) == table[-1][-1]
