"""Autoannotate suggestions (annotation/pyramids/suggestions.py and GET annotations/{id}/suggestions/):
what each source finds, and the blind rule: an annotator's suggestions never come from another
annotator's work."""
import pytest
from django.contrib.auth.models import User

from annotation.models import SCU, Assignment, PeerAnnotation, PeerSummary, Pyramid
from annotation.pyramids.editing import add_contributor, add_match
from annotation.pyramids.suggestions import Suggestion, from_earlier, from_pyramid, merge

from tests.foundation.factories import topic
from tests.api.world import client_for

REF_A = "The dam burst at night and the valley flooded."
REF_B = "Engineers blamed the old concrete of the dam."


def test_from_pyramid_finds_most_content_words_of_a_contributor_in_one_sentence():
    peer = "Nobody was hurt. At night the dams burst, and the town's valley was flooded by noon."
    found = from_pyramid(peer, [(1, "dam burst at night"), (2, "the valley flooded"), (3, "engineers blamed the old concrete")])
    by_scu = {s.scu: s for s in found}
    assert set(by_scu) == {1, 2}
    (start, end), = by_scu[1].parts
    assert peer[start:end] == "night the dams burst" and by_scu[1].source == "pyramid"
    assert by_scu[1].why == "3 of the 3 content words of a contributor"
    (start, end), = by_scu[2].parts
    assert peer[start:end] == "valley was flooded"


def test_from_earlier_finds_the_same_words_whole_and_in_order():
    peer = "Officials said THE OLD  DAM\nfailed; the old damage was repaired."
    found = from_earlier(peer, [(5, ["the old dam failed"], "3"), (6, ["old dam", "repaired"], "4"), (7, ["dam"], "4"), (8, ["old dama"], "4")])
    assert [(s.scu, [peer[a:b] for a, b in s.parts]) for s in found] == [
        (5, ["THE OLD  DAM\nfailed"]), (6, ["OLD  DAM", "repaired"])]  # one word is too little; "dama" is no whole word
    assert found[0].why == "you matched the same words in peer 3"


def test_merge_drops_what_the_annotation_has_and_orders_by_position():
    a, b = Suggestion(1, ((10, 20),), "pyramid", ""), Suggestion(2, ((0, 5),), "pyramid", "")
    again = Suggestion(1, ((12, 18),), "earlier", "")
    assert merge([(1, ((15, 30),))], [a, b]) == [b]
    assert merge([], [again], [a, b]) == [b, again]


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
    peers = {pid: PeerSummary.objects.create(topic=t, external_id=pid, text=text) for pid, text in [
        ("1", "Engineers said the aging concrete cracked."), ("2", "Reports say the aging concrete cracked, then the dam burst at night.")]}
    for name in users:
        Assignment.objects.create(topic=t, annotator=users[name], task=Assignment.Task.ANNOTATE_PEERS)
    earlier = PeerAnnotation.objects.create(peer=peers["1"], pyramid=pyramid, annotator=users["xena"], status="done")
    at = peers["1"].text.index("aging concrete cracked")
    add_match(earlier, concrete, [(at, at + len("aging concrete cracked"))])  # words no contributor has
    mine = {name: PeerAnnotation.objects.create(peer=peers["2"], pyramid=pyramid, annotator=users[name], status="in_progress") for name in users}
    return users, mine, dam, concrete


def test_suggestions_api_and_the_blind_rule(study):
    users, mine, dam, concrete = study
    xena = client_for(users["xena"]).get(f"/api/annotations/{mine['xena'].pk}/suggestions/")
    assert xena.status_code == 200
    text = mine["xena"].peer.text
    shown = [(s["scu"], s["source"], [text[p["start"]:p["end"]] for p in s["parts"]]) for s in xena.json()["suggestions"]]
    assert shown == [(concrete.pk, "earlier", ["aging concrete cracked"]), (dam.pk, "pyramid", ["dam burst at night"])]
    yuri = client_for(users["yuri"]).get(f"/api/annotations/{mine['yuri'].pk}/suggestions/").json()["suggestions"]
    assert [(s["scu"], s["source"]) for s in yuri] == [(dam.pk, "pyramid")], "xena's work never reaches yuri"
    assert client_for(users["yuri"]).get(f"/api/annotations/{mine['xena'].pk}/suggestions/").status_code == 404
    add_match(mine["xena"], dam, [(text.index("dam"), text.index("dam") + 3)])   # what the annotation has is not suggested again
    again = client_for(users["xena"]).get(f"/api/annotations/{mine['xena'].pk}/suggestions/").json()["suggestions"]
    assert [s["scu"] for s in again] == [concrete.pk]
