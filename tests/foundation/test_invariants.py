"""Every model invariant is rejected twice: by validation with a clear message, and by the database
itself (constraints and triggers) when validation is bypassed. Nothing is half written."""

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from annotation.corpus.models import ReferenceSummary
from annotation.peers.editing import add_match
from annotation.peers.models import PeerAnnotation, PeerMatch, PeerMatchPart
from annotation.pyramids.editing import add_contributor
from annotation.pyramids.models import SCU, Contributor, ContributorPart

from tests.foundation.factories import annotation, pyramid, topic

pytestmark = pytest.mark.django_db


def messages(excinfo) -> str:
    return " ".join(str(m) for m in excinfo.value.messages)


@pytest.fixture
def setup():
    t, refs = topic()
    p, scus = pyramid(t, refs, uids=(1, 2))
    return t, refs, p, scus


def db_rejects(action, fragment=""):
    with pytest.raises(IntegrityError) as excinfo, transaction.atomic():
        action()
    assert fragment in str(excinfo.value)


def test_one_contributor_per_reference_per_scu(setup):
    t, refs, p, scus = setup
    add_contributor(scus[1], refs["A"], [(0, 5)])
    with pytest.raises(ValidationError) as excinfo:
        add_contributor(scus[1], refs["A"], [(6, 10)])
    assert "already has a contributor from reference A" in messages(excinfo)
    db_rejects(lambda: Contributor.objects.create(scu=scus[1], reference=refs["A"]))
    assert scus[1].contributors.count() == 1
    # The same reference may contribute to another SCU, and legacy imports are kept (flagged).
    add_contributor(scus[2], refs["A"], [(6, 10)])
    Contributor.objects.create(scu=scus[1], reference=refs["A"], legacy_issue="second contributor from A (DUC legacy)")
    assert scus[1].contributors.count() == 2


def test_part_offsets_inside_text_and_nonempty(setup):
    t, refs, p, scus = setup
    length = len(refs["A"].text)
    for spans, fragment in [
        ([(0, length + 1)], "past the end of the text"),
        ([(5, 5)], "empty or reversed"),
        ([(6, 2)], "empty or reversed"),
        ([], "At least one span"),
    ]:
        with pytest.raises(ValidationError) as excinfo:
            add_contributor(scus[1], refs["A"], spans)
        assert fragment in messages(excinfo)
    assert not Contributor.objects.exists(), "a rejected contributor must not be half written"
    contributor = Contributor.objects.create(scu=scus[1], reference=refs["A"])
    db_rejects(
        lambda: ContributorPart.objects.create(contributor=contributor, reference=refs["A"], start=0, end=length + 1),
        "end inside",
    )
    db_rejects(lambda: ContributorPart.objects.create(contributor=contributor, reference=refs["A"], start=4, end=4))
    db_rejects(
        lambda: ContributorPart.objects.create(contributor=contributor, reference=refs["B"], start=0, end=3),
        "contributor's reference summary",
    )


def test_bad_second_part_leaves_nothing(setup):
    t, refs, p, scus = setup
    with pytest.raises(ValidationError):
        add_contributor(scus[1], refs["A"], [(0, 5), (3, 999)])
    assert not Contributor.objects.exists() and not ContributorPart.objects.exists()


def test_contributor_reference_in_pyramid_topic(setup):
    t, refs, p, scus = setup
    _, other_refs = topic("T2")
    contributor = Contributor(scu=scus[1], reference=other_refs["A"])
    with pytest.raises(ValidationError) as excinfo:
        contributor.full_clean()
    assert "belongs to another topic" in messages(excinfo)
    db_rejects(lambda: Contributor.objects.create(scu=scus[1], reference=other_refs["A"]), "topic of its SCU")


def test_scu_uid_unique_per_pyramid_and_positive(setup):
    t, refs, p, scus = setup
    with pytest.raises(ValidationError) as excinfo:
        SCU(pyramid=p, uid=1, label="again").full_clean()
    assert "already exists" in messages(excinfo)
    with pytest.raises(ValidationError) as excinfo:
        SCU(pyramid=p, uid=0, label="zero").full_clean()
    assert "uid 0 is reserved" in messages(excinfo)
    db_rejects(lambda: SCU.objects.create(pyramid=p, uid=1, label="again"))
    db_rejects(lambda: SCU.objects.create(pyramid=p, uid=0, label="zero"))
    other, _ = pyramid(t, refs, uids=(1,))  # uids are per pyramid
    assert other.scus.get().uid == 1


def test_peer_match_scu_of_the_annotations_pyramid(setup):
    t, refs, p, scus = setup
    other, other_scus = pyramid(t, refs, uids=(7,))
    a = annotation(t, p)
    with pytest.raises(ValidationError) as excinfo:
        add_match(a, other_scus[7], [(0, 4)])
    assert "belongs to another pyramid" in messages(excinfo)
    db_rejects(lambda: PeerMatch.objects.create(annotation=a, scu=other_scus[7]), "annotation's pyramid")
    assert not PeerMatch.objects.exists()


def test_peer_parts_inside_peer_text(setup):
    t, refs, p, scus = setup
    a = annotation(t, p, text="Short.")
    with pytest.raises(ValidationError) as excinfo:
        add_match(a, scus[1], [(0, 3), (2, 50)])
    assert "past the end" in messages(excinfo)
    assert not PeerMatch.objects.exists()
    match = PeerMatch.objects.create(annotation=a, scu=scus[1])
    db_rejects(lambda: PeerMatchPart.objects.create(match=match, start=0, end=50), "inside the peer")


def test_annotation_pyramid_in_peer_topic(setup):
    t, refs, p, scus = setup
    t2, refs2 = topic("T2")
    foreign, _ = pyramid(t2, refs2)
    a = annotation(t, p)
    bad = PeerAnnotation(peer=a.peer, pyramid=foreign)
    with pytest.raises(ValidationError) as excinfo:
        bad.full_clean()
    assert "another topic" in messages(excinfo)
    db_rejects(lambda: PeerAnnotation.objects.create(peer=a.peer, pyramid=foreign), "peer summary's topic")


def test_texts_cannot_be_cut_under_existing_spans(setup):
    t, refs, p, scus = setup
    add_contributor(scus[1], refs["A"], [(6, 10)])
    db_rejects(lambda: ReferenceSummary.objects.filter(pk=refs["A"].pk).update(text="Alpha"), "would cut")
    ReferenceSummary.objects.filter(pk=refs["A"].pk).update(text="Alpha beta gamma delta.")  # longer is fine


def test_weight_and_non_matching_are_derived(setup):
    t, refs, p, scus = setup
    add_contributor(scus[1], refs["A"], [(0, 5), (11, 16)])
    add_contributor(scus[1], refs["B"], [(0, 5)])
    assert scus[1].contributors.count() == 2
    assert scus[1].contributors.get(reference=refs["A"]).label == "Alpha...gamma"
    a = annotation(t, p, text="Alpha and also an unrelated fact.")
    add_match(a, scus[1], [(0, 5)])
    add_match(a, None, [(15, 32)])
    assert a.matches.filter(scu=None).count() == 1


@pytest.mark.django_db
def test_saving_an_instance_loaded_before_a_revision_bump_keeps_the_newer_revision():
    """A status change saved from an instance read before its matches changed must not write the
    old revision back: the score computed for the newer revision would then never be current."""
    from django.db.models import F

    from annotation.corpus.models import Topic
    from annotation.lightweight.models import LightweightPyramid
    from annotation.peers.score_events import touch_annotation, touch_pyramid, touch_topic
    from annotation.pyramids.models import Pyramid

    t, refs = topic()
    p, _ = pyramid(t, refs)
    a = annotation(t, p)
    run = LightweightPyramid.objects.create(dataset=t.dataset, name="run")
    stale = [
        PeerAnnotation.objects.get(pk=a.pk),
        Pyramid.objects.get(pk=p.pk),
        Topic.objects.get(pk=t.pk),
        LightweightPyramid.objects.get(pk=run.pk),
    ]
    before = [document.revision for document in stale]
    touch_annotation(a.pk, t.pk)
    touch_pyramid(p.pk, t.pk)
    touch_topic(t.pk)
    LightweightPyramid.objects.filter(pk=run.pk).update(revision=F("revision") + 1)
    stale[0].status = PeerAnnotation.Status.IN_PROGRESS
    stale[1].status = Pyramid.Status.IN_PROGRESS
    stale[2].title = "Renamed"
    stale[3].name = "renamed run"
    for document in stale:
        document.save()
    after = [type(document).objects.get(pk=document.pk) for document in stale]
    # the topic: three bumps, then its own save is one more (a renamed topic's agreement is stale)
    assert [document.revision for document in after] == [before[0] + 1, before[1] + 1, before[2] + 4, before[3] + 1]
    assert (after[0].status, after[1].status, after[2].title, after[3].name) == (
        "in_progress",
        "in_progress",
        "Renamed",
        "renamed run",
    )
