"""``manage.py dedupe_annotations`` on a database made as imports made it before one identity rule:
a zip imported with its annotator table, then again without it, stored every annotation twice (the
second by an unknown annotator). The command lists those copies, removes them with ``--apply``,
keeps the annotator's, and never removes an annotation that differs or that anything rests on."""

import csv
import io

import pytest
from django.core.management import CommandError, call_command

from annotation.adjudication.models import Adjudication
from annotation.corpus.models import Dataset
from annotation.peers.models import PeerAnnotation, PeerMatch, PeerMatchPart
from annotation.transfer.ducview_import import annotation_content

from tests.transfer.test_import_identity import FILES, PEERS, TABLE, by_api

pytestmark = pytest.mark.django_db


def copy_of(annotation: PeerAnnotation, *, source=None, drop_a_match=False) -> PeerAnnotation:
    """What the old import stored on the second import: the same file again, by an unknown annotator."""
    copy = PeerAnnotation.objects.create(
        peer=annotation.peer,
        pyramid=annotation.pyramid,
        annotator=None,
        status=annotation.status,
        source=annotation.source if source is None else source,
    )
    matches = list(annotation.matches.order_by("pk"))
    for match in matches[1:] if drop_a_match else matches:
        new = PeerMatch.objects.create(annotation=copy, scu=match.scu)
        PeerMatchPart.objects.bulk_create(
            [PeerMatchPart(match=new, start=p.start, end=p.end) for p in match.parts.all()]
        )
    return copy


@pytest.fixture
def old_database(in_process_jobs):
    """Peer 1 and 2 copied as the old import did; peer 3's copy lost a match (it differs); a copy of
    peer 1 from another file (not the same file again); an adjudicated version identical to peer 2's."""
    dataset = Dataset.objects.create(name="old")
    by_api(dataset, FILES, TABLE, None)
    originals = {a.peer.external_id: a for a in PeerAnnotation.objects.filter(pyramid__topic__dataset=dataset)}
    copies = [copy_of(originals["1"]), copy_of(originals["2"])]
    kept = [copy_of(originals["3"], drop_a_match=True), copy_of(originals["1"], source="renamed.pan")]
    adjudicated = copy_of(originals["2"], source="")
    record = Adjudication.objects.create(annotation=adjudicated, decisions={}, source_revisions={})
    record.sources.set([originals["2"]])
    return dataset, originals, copies, kept + [adjudicated]


def run(*args) -> str:
    out = io.StringIO()
    call_command("dedupe_annotations", *args, stdout=out)
    return out.getvalue()


def scored_peers(dataset) -> list[str]:
    out = io.StringIO()
    call_command("export_scores", dataset=dataset.name, format="csv", stdout=out)
    return sorted(row["summary"] for row in csv.DictReader(io.StringIO(out.getvalue())) if row["kind"] == "peer")


def test_a_dry_run_lists_the_copies_and_apply_removes_only_them(old_database):
    dataset, originals, copies, differing = old_database
    assert all(annotation_content(c.pk) == annotation_content(originals[c.peer.external_id].pk) for c in copies)
    assert annotation_content(differing[0].pk) != annotation_content(originals["3"].pk)
    before = set(PeerAnnotation.objects.values_list("pk", flat=True))
    out = run()
    assert "2 copies found; nothing removed" in out
    listed = [line for line in out.splitlines() if "again" in line]
    assert [
        (f"annotation {c.pk} " in line, f"annotation {originals[c.peer.external_id].pk} of annotator 201" in line)
        for c, line in zip(copies, listed, strict=True)
    ] == [(True, True)] * 2
    assert set(PeerAnnotation.objects.values_list("pk", flat=True)) == before, "a dry run removes nothing"
    assert "2 copies removed" in run("--apply", "--dataset", "old")
    after = set(PeerAnnotation.objects.values_list("pk", flat=True))
    assert after == before - {c.pk for c in copies}
    assert {o.pk for o in originals.values()} | {d.pk for d in differing} <= after
    assert "0 copies found" in run(), "nothing left to remove"


def test_after_apply_every_peer_is_scored_once_again(old_database):
    dataset, *_ = old_database
    before = scored_peers(dataset)
    # peer 1: its annotator's, the copy and the renamed file's (another origin); peer 2: its
    # adjudicated version (scores rest on it); peer 3: its annotator's and the one that differs.
    assert [before.count(peer) for peer in PEERS] == [3, 1, 2], before
    run("--apply")
    assert [scored_peers(dataset).count(peer) for peer in PEERS] == [2, 1, 2]


def test_an_unknown_dataset_is_an_error():
    with pytest.raises(CommandError, match="no dataset named 'nope'"):
        run("--dataset", "nope")
