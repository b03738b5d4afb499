"""What every Django process pays when it starts: the fault and scale stacks start dozens (workers,
beat, web workers, commands), each importing the URL configuration and the tasks."""

import subprocess
import sys

from tests.conftest import REPO

SCRIPT = """
import os, sys
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pyramid_app.settings")
from pyramid_app.celery import app
app.loader.import_default_modules()          # a worker's or beat's start: every task module
from django.urls import get_resolver
get_resolver().url_patterns                  # a web worker's first request, a command's system checks
print("after start:", "scipy.stats" in sys.modules, "sklearn" in sys.modules)
from pyramid_app import gunicorn_conf
gunicorn_conf.post_worker_init(None)         # a web worker of production, before its first request
print("after the web worker's warm-up:", "scipy.stats" in sys.modules, "sklearn" in sys.modules)
from annotation.pyramids import suggestion_model
print("the suggestions model kept:", suggestion_model.load() is not None)
from scoring.intervals import mean_interval
print("an interval:", mean_interval([0.25, 0.5, 0.75], resamples=99).low is not None)
"""


def test_scipy_stats_is_imported_by_the_processes_that_compute_with_it_only(tmp_path):
    """scipy.stats takes 1-2 s of CPU to import: a worker, beat or command that computes no interval
    or test must not pay it at start; a production web worker warms it before its first visitor, and
    an interval still computes with it. The same for the trained suggestions model (scikit-learn and
    the unpickling: 1.2 CPU-s), read by the web worker's warm-up when its file exists."""
    from sklearn.dummy import DummyClassifier

    from annotation.pyramids import suggestion_model

    model = suggestion_model.Model(DummyClassifier().fit([[0], [1]], [0, 1]), threshold=0.5, trained_on="a test")
    path = suggestion_model.save(model, tmp_path / "suggestions.joblib")
    env = {"PATH": "/usr/bin:/bin", "DEBUG": "1", "DATABASE_URL": "sqlite:///:memory:", "SUGGESTIONS_MODEL": str(path)}
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], cwd=REPO, env=env, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out == [
        "after start: False False",
        "after the web worker's warm-up: True True",
        "the suggestions model kept: True",
        "an interval: True",
    ]
