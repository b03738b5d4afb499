"""Run as a script against the database named by DATABASE_URL (the fault tests' own copy): prints
JSON saying what is stale and whether every stored score equals a fresh ``export_scores``.

    python tests/faults/probe.py state | token USERNAME | ids
"""
import json
import os
import sys
from io import StringIO
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pyramid_app.settings")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402


def state() -> dict:
    from annotation.models import AnnotationScore, PeerAnnotation
    from annotation.dashboards.snapshots import stale_datasets
    from annotation.peers.recompute import stale_work

    annotations, topics = stale_work()
    mismatches = []
    for convention in ("nist", "sacrerouge"):
        out = StringIO()
        call_command("export_scores", format="json", convention=convention, stdout=out)
        fresh = {(r["topic"], r["summary"], r["annotator"]): r for r in json.loads(out.getvalue()) if r["kind"] == "peer"}
        for score in AnnotationScore.objects.filter(convention=convention).select_related("annotation__peer__topic", "annotation__annotator"):
            a = score.annotation
            row = fresh[(a.peer.topic.external_id, a.peer.external_id, a.annotator.username)]
            if any(score.values[k] != row[k] for k in ("modified", "modified_jk", "original", "matched_scus", "repetitions", "non_matching")):
                mismatches.append([a.pk, convention])
    return {"stale_annotations": annotations, "stale_topics": topics, "stale_dashboards": stale_datasets(),
            "mismatches": mismatches, "annotations": PeerAnnotation.objects.count(),
            "matches": sum(a.matches.count() for a in PeerAnnotation.objects.all())}


def token(username: str) -> dict:
    from django.contrib.auth.models import User
    from rest_framework.authtoken.models import Token

    return {"token": Token.objects.get_or_create(user=User.objects.get(username=username))[0].key}


def ids() -> dict:
    from annotation.models import SCU, PeerAnnotation

    annotations = {f"{a.annotator.username}:{a.peer.external_id}": a.pk for a in PeerAnnotation.objects.select_related("annotator", "peer")}
    scus = {s.uid: s.pk for s in SCU.objects.all()}
    pyramid = SCU.objects.first().pyramid
    references = {r.external_id: r.pk for r in pyramid.references.all()}
    return {"annotations": annotations, "scus": scus, "pyramid": pyramid.pk, "references": references, "dataset": pyramid.topic.dataset_id}


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    print(json.dumps({"state": state, "token": token, "ids": ids}[command](*args)))
