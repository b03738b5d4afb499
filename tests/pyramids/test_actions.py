"""Pyramid and peer actions: rules with clear messages and nothing written on rejection, stale
revisions rejected with what changed, undo/redo through the server's history, an audit trail."""

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError

from annotation.history.changes import Conflict, Gone, redo, undo
from annotation.history.models import Change
from annotation.peers import actions as peer
from annotation.pyramids import actions as act
from annotation.pyramids.document_states import scu_states
from annotation.pyramids.models import SCU

from tests.foundation.factories import annotation, pyramid, topic

pytestmark = pytest.mark.django_db

TEXTS = {
    "A": "The dam burst at night. Villages flooded.",
    "B": "Floods hit villages after the dam failed.",
    "C": "A dam broke.",
}


@pytest.fixture
def world():
    t, refs = topic(**TEXTS)
    p, _ = pyramid(t, refs, uids=())
    user = User.objects.create(username="ann")
    return p, refs, user


def span(ref, phrase):
    start = ref.text.index(phrase)
    return [(start, start + len(phrase))]


def state(p):
    return scu_states(p, p.scus.values_list("uid", flat=True))


def rev(p):
    p.refresh_from_db()
    return p.revision


def test_build_merge_split_and_undo_everything(world):
    p, refs, user = world
    empty = state(p)
    a = act.create_scu(
        p, user, label="The dam burst", reference=refs["A"].pk, spans=span(refs["A"], "The dam burst")
    ).value
    b = act.create_scu(
        p, user, label="The dam failed", reference=refs["B"].pk, spans=span(refs["B"], "the dam failed")
    ).value
    assert (a.uid, b.uid) == (1, 2)
    act.add_contributor_to(a, user, reference=refs["C"].pk, spans=span(refs["C"], "A dam broke"))
    act.merge_scus(a, [b], user)
    a.refresh_from_db()
    assert sorted(a.contributors.values_list("reference__external_id", flat=True)) == ["A", "B", "C"]
    assert not SCU.objects.filter(pk=b.pk).exists()
    merged = state(p)
    c_contributor = a.contributors.get(reference=refs["C"])
    new = act.split_contributor(c_contributor, user, label="A dam broke").value
    assert new.uid == 3 and new.contributors.get().reference == refs["C"]
    undo("pyramid", p.pk, user)  # undo the split
    assert state(p) == merged
    redo("pyramid", p.pk, user)  # redo it
    assert SCU.objects.get(pyramid=p, uid=3).contributors.count() == 1
    for _ in range(5):  # undo split, merge, add, create, create
        undo("pyramid", p.pk, user)
    assert state(p) == empty
    with pytest.raises(ValidationError, match="Nothing to undo"):
        undo("pyramid", p.pk, user)
    assert Change.objects.filter(pyramid=p, action="undo").count() == 6


def test_merge_conflict_is_reported_and_nothing_changes(world):
    p, refs, user = world
    a = act.create_scu(p, user, label="x", reference=refs["A"].pk, spans=span(refs["A"], "The dam burst")).value
    b = act.create_scu(p, user, label="y", reference=refs["A"].pk, spans=span(refs["A"], "Villages flooded")).value
    before, revision = state(p), rev(p)
    with pytest.raises(ValidationError) as excinfo:
        act.merge_scus(a, [b], user)
    assert "two contributors from reference(s) A" in str(excinfo.value)
    assert state(p) == before and rev(p) == revision
    with pytest.raises(ValidationError, match="two contributors from reference"):
        act.move_contributor(b.contributors.get(), a, user)
    assert state(p) == before


def test_second_contributor_from_one_reference_rejected(world):
    p, refs, user = world
    a = act.create_scu(p, user, label="x", reference=refs["A"].pk, spans=span(refs["A"], "The dam burst")).value
    with pytest.raises(ValidationError, match="already has a contributor from reference A"):
        act.add_contributor_to(a, user, reference=refs["A"].pk, spans=span(refs["A"], "Villages flooded"))
    assert a.contributors.count() == 1


def test_discontinuous_contributor_and_part_rules(world):
    p, refs, user = world
    a = act.create_scu(p, user, label="x", reference=refs["A"].pk, spans=span(refs["A"], "The dam")).value
    contributor = a.contributors.get()
    act.add_part_to(contributor, user, **dict(zip(("start", "end"), span(refs["A"], "burst")[0], strict=True)))
    assert contributor.label == "The dam...burst"
    with pytest.raises(ValidationError, match="overlaps"):
        act.add_part_to(contributor, user, start=0, end=3)
    with pytest.raises(ValidationError, match="past the end"):
        act.add_part_to(contributor, user, start=30, end=500)
    assert contributor.parts.count() == 2


def test_stale_revision_is_a_conflict_listing_what_changed(world):
    p, refs, user = world
    seen = rev(p)
    other = User.objects.create(username="tab2")
    act.create_scu(p, other, label="from the other tab", reference=refs["A"].pk, spans=span(refs["A"], "The dam burst"))
    with pytest.raises(Conflict) as excinfo:
        act.create_scu(
            p, user, label="mine", reference=refs["B"].pk, spans=span(refs["B"], "Floods"), expected_revision=seen
        )
    assert excinfo.value.current_revision == rev(p)
    assert [c.summary for c in excinfo.value.changes] == ["Created SCU 1 “from the other tab”"]
    assert p.scus.count() == 1
    outcome = act.create_scu(
        p, user, label="mine", reference=refs["B"].pk, spans=span(refs["B"], "Floods"), expected_revision=rev(p)
    )
    assert outcome.revision == rev(p) and outcome.change.revision == outcome.revision


def test_undo_refuses_to_destroy_later_work_of_someone_else(world):
    p, refs, user = world
    a = act.create_scu(p, user, label="x", reference=refs["A"].pk, spans=span(refs["A"], "The dam burst")).value
    other = User.objects.create(username="other")
    act.update_scu(a, other, label="relabelled by someone else")
    with pytest.raises(ValidationError, match="has changed since"):
        undo("pyramid", p.pk, user)
    assert SCU.objects.get(pk=a.pk).label == "relabelled by someone else"


def test_new_action_clears_redo(world):
    p, refs, user = world
    act.create_scu(p, user, label="x", reference=refs["A"].pk, spans=span(refs["A"], "The dam burst"))
    undo("pyramid", p.pk, user)
    act.create_scu(p, user, label="y", reference=refs["B"].pk, spans=span(refs["B"], "Floods"))
    with pytest.raises(ValidationError, match="Nothing to redo"):
        redo("pyramid", p.pk, user)


def test_matched_scus_cannot_be_removed(world):
    p, refs, user = world
    a = act.create_scu(p, user, label="x", reference=refs["A"].pk, spans=span(refs["A"], "The dam burst")).value
    ann = annotation(p.topic, p, text="The dam burst yesterday.")
    peer.match_span(ann, user, scu=a, spans=[(0, 13)])
    with pytest.raises(ValidationError, match="matched in 1 peer annotation"):
        act.delete_scu(a, user)
    with pytest.raises(ValidationError, match="matched in 1 peer annotation"):
        act.remove_contributor(a.contributors.get(), user)
    assert SCU.objects.filter(pk=a.pk).exists()


def test_peer_actions_with_repetition_non_matching_and_undo(world):
    p, refs, user = world
    a = act.create_scu(p, user, label="x", reference=refs["A"].pk, spans=span(refs["A"], "The dam burst")).value
    ann = annotation(p.topic, p, text="The dam burst. The dam burst again. Sunny day.")
    peer.match_span(ann, user, scu=a, spans=[(0, 13)])
    peer.match_span(ann, user, scu=a, spans=[(15, 28)])  # a repetition
    nm = peer.match_span(ann, user, scu=None, spans=[(36, 45)]).value
    assert ann.matches.filter(scu=a).count() == 2 and ann.matches.filter(scu=None).count() == 1
    peer.move_match(nm, a, user)
    assert ann.matches.filter(scu=None).count() == 0
    undo("annotation", ann.pk, user)
    assert ann.matches.filter(scu=None).count() == 1
    with pytest.raises(ValidationError):
        peer.match_span(ann, user, scu=a, spans=[(40, 99)])
    assert ann.matches.count() == 3
    ann.refresh_from_db()
    with pytest.raises(Gone):  # undo recreated the matches: the old one is gone, nothing is removed in its name
        peer.remove_match(nm, user, expected_revision=ann.revision)
    nm = ann.matches.get(scu=None)
    with pytest.raises(Conflict):
        peer.remove_match(nm, user, expected_revision=ann.revision - 1)
    peer.remove_match(nm, user, expected_revision=ann.revision)
    assert [c.action for c in Change.objects.filter(annotation=ann).order_by("id")] == [
        "add_match",
        "add_match",
        "add_match",
        "move_match",
        "undo",
        "remove_match",
    ]


def test_history_records_who_what_before_after(world):
    p, refs, user = world
    a = act.create_scu(p, user, label="first", reference=refs["A"].pk, spans=span(refs["A"], "The dam burst")).value
    act.update_scu(a, user, label="second")
    change = Change.objects.filter(pyramid=p).first()
    assert change.user == user and change.action == "update_scu"
    assert change.before["1"]["label"] == "first" and change.after["1"]["label"] == "second"
    assert change.before["1"]["contributors"] == change.after["1"]["contributors"]
