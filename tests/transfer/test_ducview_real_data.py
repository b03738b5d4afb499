"""Real DUC data: importing ../shared/data and exporting with the nist convention reproduces NIST's
official tables for all 761 peer annotations; agreement on D0631 matches NLTK computed from the files."""

import json
from io import StringIO

import pytest
from django.core.management import call_command

from annotation import formats
from annotation.peers.models import PeerAnnotation
from annotation.pyramids.models import SCU, Contributor, Pyramid
from scoring.agreement import dice_distance

from tests.conftest import recomputed_as_in_a_test, shared_data

pytestmark = [pytest.mark.django_db, pytest.mark.realdata]


def official_table(path, annotator_column: bool) -> dict:
    """(topic, peer as int, annotator or None) -> (modified, numSCUs, numrepetitions)."""
    table = {}
    for line in path.read_text().splitlines():
        fields = line.split()
        if len(fields) < 5:
            continue
        annotator = fields[5] if annotator_column else None
        table[(fields[0], int(fields[1]), annotator)] = (float(fields[2]), int(fields[3]), int(fields[4]))
    return table


def run(command, *args, **options) -> str:
    out = StringIO()
    call_command(command, *args, stdout=out, **options)
    return out.getvalue()


@pytest.fixture(scope="module")
def duc(django_db_setup, django_db_blocker):
    """Both DUC collections imported once for the module (rolled back at the end)."""
    d2006, d2007 = shared_data("duc2006"), shared_data("duc2007-main")
    with django_db_blocker.unblock():
        from django.db import transaction

        with transaction.atomic():
            with recomputed_as_in_a_test():
                outputs = (
                    run("import_ducview", str(d2006)),
                    run("import_ducview", str(d2007), annotators=str(d2007 / "annotator-table.txt")),
                )
            yield d2006, d2007, outputs
            transaction.set_rollback(True)


def test_every_official_score_is_reproduced(duc):
    d2006, d2007, _ = duc
    rows = json.loads(run("export_scores", format="json"))
    peers = [r for r in rows if r["kind"] == "peer"]
    assert len(peers) == 761
    expected = official_table(d2006 / "scoring" / "2006_modified_scores.txt", True)
    # DUC 2007 names its peer annotators in annotator-table.txt (topic, pyramid creator, peer annotator)
    annotator_of = {
        line.split()[0]: line.split()[-1]
        for line in (d2007 / "annotator-table.txt").read_text().splitlines()[1:]
        if line.strip()
    }
    expected |= {
        (topic, peer, annotator_of[topic]): value
        for (topic, peer, _), value in official_table(d2007 / "scoring" / "2007_modified_scores.txt", False).items()
    }
    mismatches = []
    for row in peers:
        annotator = row["annotator"] or None
        key = (row["topic"], int(row["summary"]), annotator)
        got = (round(row["modified"], 4), row["matched_scus"], row["repetitions"])
        if expected.get(key) != got:
            mismatches.append((key, expected.get(key), got))
    assert not mismatches, mismatches[:10]
    assert {r["convention"] for r in rows} == {"nist"}
    references = [r for r in rows if r["kind"] == "reference"]
    assert len(references) == 4 * (20 + 1 + 23)  # D0614's .pan files carry a second, different pyramid


def test_import_report_and_legacy_flags(duc):
    _, _, (out2006, out2007) = duc
    assert "files: 482 (0 rejected)" in out2006 and "peer annotations: 462 created" in out2006
    assert "files: 322 (0 rejected)" in out2007 and "peer annotations: 299 created" in out2007
    assert "SCU 237" in out2006 and "parts in references D, G" in out2006
    flagged = {
        (c.scu.pyramid.topic.external_id, c.scu.uid)
        for c in Contributor.objects.exclude(legacy_issue="").select_related("scu__pyramid__topic")
    }
    assert flagged == {
        ("D0631", 237),
        ("D0701", 36),
        ("D0706", 10),
        ("D0724", 67),
        ("D0727", 70),
        ("D0729", 139),
        ("D0739", 62),
    }


def test_reimport_adds_nothing(duc):
    d2006, _, _ = duc
    counts = (Pyramid.objects.count(), SCU.objects.count(), PeerAnnotation.objects.count())
    out = run("import_ducview", str(d2006 / "allpans"), dataset="duc2006")
    assert "peer annotations: 0 created, 462 already present" in out
    assert (Pyramid.objects.count(), SCU.objects.count(), PeerAnnotation.objects.count()) == counts


def test_agreement_on_d0631_matches_nltk_from_the_files(duc):
    from nltk.metrics.agreement import AnnotationTask

    d2006, _, _ = duc
    rows = json.loads(run("export_agreement", dataset="duc2006", format="json"))
    assert [r["topic"] for r in rows] == ["D0631"]
    row = rows[0]
    assert row["annotators"] == ["114", "115"] and row["peers"] == 22
    # Independent computation straight from the files with NLTK.
    data, pooled = {}, []
    for path in sorted((d2006 / "allpans").glob("11[45].D0631.*.pan")):
        pan, _ = formats.parse_peer_annotation(path.read_bytes())
        annotator, peer = path.name.split(".")[0], str(int(path.name.split(".")[-2]))
        counts = {s.uid: 0 for s in pan.pyramid.scus}
        for m in pan.matches:
            counts[m.scu_uid] += 1
        for uid, count in counts.items():
            data.setdefault(peer, []).append((annotator, uid, count))
            pooled.append((annotator, (peer, uid), count))
    per_peer = {peer: AnnotationTask(data=triples, distance=dice_distance).alpha() for peer, triples in data.items()}
    assert row["alpha_dice_by_peer"].keys() == per_peer.keys()
    for peer, value in per_peer.items():
        assert row["alpha_dice_by_peer"][peer]["value"] == pytest.approx(value, abs=1e-9)
    assert row["alpha_dice_mean"] == pytest.approx(sum(per_peer.values()) / len(per_peer), abs=1e-9)
    assert row["alpha_dice_pooled"] == pytest.approx(
        AnnotationTask(data=pooled, distance=dice_distance).alpha(), abs=1e-9
    )
    assert -1 <= row["pearson_ci"][0] < row["pearson_modified"] < row["pearson_ci"][1] <= 1
    assert 0 < row["mean_abs_diff_modified"] < 0.2


def test_csv_export_has_the_documented_columns(duc):
    header = run("export_scores", dataset="duc2006", format="csv", convention="sacrerouge").splitlines()[0]
    assert header.split(",") == [
        "dataset",
        "topic",
        "summary",
        "kind",
        "annotator",
        "version",
        "modified",
        "modified_jk",
        "original",
        "matched_scus",
        "repetitions",
        "non_matching",
        "observed_weight",
        "convention",
    ]
