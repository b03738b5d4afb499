"""Run as a script against the database named by DATABASE_URL (the fault tests' own copy): prints
JSON saying what is stale and whether every stored score equals a fresh computation.

    python tests/faults/probe.py state | token USERNAME | ids
    python tests/faults/probe.py serve   (one command a line on stdin, JSON: see ``serve``)
"""

import json
import os
import sys
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pyramid_app.settings")

import django  # noqa: E402  (the repository on sys.path and the settings module set first)

django.setup()

# What the commands use, imported once (``serve``'s children inherit them): nothing here touches the database.
from django.contrib.auth.models import User  # noqa: E402
from django.db import connections  # noqa: E402
from rest_framework.authtoken.models import Token  # noqa: E402

from annotation.dashboards.snapshots import stale_datasets  # noqa: E402
from annotation.peers.models import AnnotationScore, PeerAnnotation  # noqa: E402
from annotation.peers.recompute import stale_work  # noqa: E402
from annotation.peers.results import score_annotations  # noqa: E402
from annotation.pyramids.models import SCU  # noqa: E402
from scoring.model import Convention  # noqa: E402


def state() -> dict:
    """What is stale, and which stored scores differ from the same annotations scored afresh here
    (a new process: no prepared pyramid kept). Not from ``export_scores``: it reads the stored
    scores whenever their revisions are current, so it would compare them with themselves."""
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
    return {"token": Token.objects.get_or_create(user=User.objects.get(username=username))[0].key}


def ids() -> dict:
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


COMMANDS = {"state": state, "token": token, "ids": ids}


def serve():
    """Each line of stdin a command (a JSON list: name, arguments) answered by a child forked for it
    (``{"answer": ...}`` or ``{"error": traceback}``, a line on stdout): a new process each time, as a
    probe run alone (no prepared pyramid, cache or connection kept from another), with Django
    started once. This process itself never opens a connection, so none is shared with a child."""
    connections.close_all()
    for line in sys.stdin:
        pid = os.fork()
        if pid == 0:
            try:
                command, *args = json.loads(line)
                answer = {"answer": COMMANDS[command](*args)}
            except BaseException:
                answer = {"error": traceback.format_exc()}
            finally:
                connections.close_all()
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()
            os._exit(0)
        os.waitpid(pid, 0)


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    if command == "serve":
        serve()
    else:
        print(json.dumps(COMMANDS[command](*args)))
