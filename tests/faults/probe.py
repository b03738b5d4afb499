"""Run as a script against the database named by DATABASE_URL (the fault tests' own copy): prints
JSON saying what is stale and whether every stored score equals a fresh computation.

    python tests/faults/probe.py state | token USERNAME | ids
"""

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pyramid_app.settings")

import django  # noqa: E402  (the repository on sys.path and the settings module set first)

django.setup()


def state() -> dict:
    """What is stale, and which stored scores differ from the same annotations scored afresh here
    (a new process: no prepared pyramid kept). Not from ``export_scores``: it reads the stored
    scores whenever their revisions are current, so it would compare them with themselves."""
    from annotation.dashboards.snapshots import stale_datasets
    from annotation.peers.models import AnnotationScore, PeerAnnotation
    from annotation.peers.recompute import stale_work
    from annotation.peers.results import score_annotations
    from scoring.model import Convention

    annotations, topics = stale_work()
    mismatches = []
    for convention in Convention:
        fresh = score_annotations(PeerAnnotation.objects.all(), convention)
        for score in AnnotationScore.objects.filter(convention=convention.value):
            if score.values != json.loads(json.dumps(fresh[score.annotation_id].as_dict())):
                mismatches.append([score.annotation_id, convention.value])
    return {
        "stale_annotations": annotations,
        "stale_topics": topics,
        "stale_dashboards": stale_datasets(),
        "mismatches": mismatches,
        "annotations": PeerAnnotation.objects.count(),
        "matches": sum(a.matches.count() for a in PeerAnnotation.objects.all()),
    }


def token(username: str) -> dict:
    from django.contrib.auth.models import User
    from rest_framework.authtoken.models import Token

    return {"token": Token.objects.get_or_create(user=User.objects.get(username=username))[0].key}


def ids() -> dict:
    from annotation.peers.models import PeerAnnotation
    from annotation.pyramids.models import SCU

    annotations = {
        f"{a.annotator.username}:{a.peer.external_id}": a.pk
        for a in PeerAnnotation.objects.select_related("annotator", "peer")
    }
    scus = {s.uid: s.pk for s in SCU.objects.all()}
    pyramid = SCU.objects.first().pyramid
    references = {r.external_id: r.pk for r in pyramid.references.all()}
    return {
        "annotations": annotations,
        "scus": scus,
        "pyramid": pyramid.pk,
        "references": references,
        "dataset": pyramid.topic.dataset_id,
    }


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    print(json.dumps({"state": state, "token": token, "ids": ids}[command](*args)))
