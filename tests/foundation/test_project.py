"""The project as a whole: migrations complete, admin browsable, demo data, pages, settings."""

import json
import os
import subprocess
import sys
from io import StringIO

import pytest
from django.contrib import admin
from django.contrib.auth.models import User
from django.core.management import call_command
from django.urls import reverse

from annotation.corpus.models import Dataset, Topic
from annotation.peers.demo import load_demo
from annotation.peers.models import AnnotationScore, PeerAnnotation, TopicAgreement
from annotation.peers.recompute import recompute_annotations, recompute_topics

from tests.conftest import REPO


def test_migrations_are_complete(db):
    out = StringIO()
    call_command("makemigrations", "--check", "--dry-run", stdout=out)
    assert "No changes detected" in out.getvalue()


@pytest.fixture
def demo(db, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        load_demo()
    # With REDIS_URL set a worker would do this; the worker tests cover that path.
    recompute_annotations(PeerAnnotation.objects.values_list("id", flat=True))
    recompute_topics(Topic.objects.values_list("id", flat=True))
    return User.objects.get(username="admin")


def test_demo_loads_once_with_scores_and_agreement(demo):
    out = StringIO()
    call_command("load_demo", stdout=out)  # second time: nothing duplicated
    assert "already present" in out.getvalue() and "coordinator" in out.getvalue()
    assert Dataset.objects.filter(name="Demo").count() == 1
    topic = Topic.objects.get(external_id="T01")
    assert topic.referencesummarys.count() == 4 and topic.peersummarys.count() == 2
    assert PeerAnnotation.objects.count() == 4
    # Weights 4,3,3,3,2,1,1,1,1: sum 19 over 4 references -> Xa = round(4.75) = 5, MaxWeight(5) = 15.
    alice_1 = AnnotationScore.objects.get(
        annotation__annotator__username="alice", annotation__peer__external_id="1", convention="nist"
    )
    assert alice_1.is_current
    assert alice_1.values["modified"] == pytest.approx(15 / 15)
    # X = 5 distinct + 1 repetition + 1 non-matching = 7 -> MaxWeight(7) = 17.
    assert alice_1.values["original"] == pytest.approx(15 / 17)
    assert TopicAgreement.objects.get(topic=topic).is_current


def test_every_admin_page_loads(client, demo):
    client.force_login(demo)
    for model in admin.site._registry:
        opts = model._meta
        changelist = reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist")
        assert client.get(changelist).status_code == 200, changelist
        assert client.get(changelist, {"q": "bridge"}).status_code == 200, changelist
        obj = model.objects.first()
        if obj is not None:
            change = reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[obj.pk])
            assert client.get(change).status_code == 200, change


def test_scu_admin_shows_derived_weight(client, demo):
    client.force_login(demo)
    page = client.get(reverse("admin:annotation_scu_changelist"), {"o": "-3"}).content.decode()
    assert "The harbour bridge has reopened" in page
    assert '<td class="field-weight">4</td>' in page


def test_pages_require_login_and_escape_user_text(client, demo):
    response = client.get("/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    alice = User.objects.get(username="alice")
    Dataset.objects.filter(name="Demo").update(name="<script>alert(1)</script>")
    client.force_login(alice)
    page = client.get("/").content.decode()
    assert "Build pyramid" in page and "Annotate peers" in page
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;" in page


def test_healthz_is_public(client, db):
    assert client.get("/healthz").json() == {"status": "ok"}


def _settings_in_subprocess(env: dict, expression: str):
    """Import settings in a fresh interpreter with exactly this environment (settings are read at import)."""
    base = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DEBUG", "SECRET_KEY", "DATABASE_URL", "REDIS_URL", "ALLOWED_HOSTS"}
    }
    code = f"import json, pyramid_app.settings as s; print(json.dumps({expression}))"
    return subprocess.run([sys.executable, "-c", code], env={**base, **env}, cwd=REPO, capture_output=True, text=True)


def test_settings_embedded_defaults():
    result = _settings_in_subprocess(
        {"DEBUG": "1"},
        "[s.DEBUG, s.DATABASES['default']['ENGINE'], s.DATABASES['default']['NAME'], "
        "s.CELERY_TASK_ALWAYS_EAGER, s.CACHES['default']['BACKEND']]",
    )
    debug, engine, name, eager, cache = json.loads(result.stdout)
    assert debug is True and engine == "django.db.backends.sqlite3" and name.endswith("db.sqlite3")
    assert eager is True and cache.endswith("LocMemCache")


def test_settings_production_shape():
    env = {
        "DEBUG": "0",
        "SECRET_KEY": "x" * 50,
        "DATABASE_URL": "postgres://u:p@db:5432/pyr",
        "REDIS_URL": "redis://r:6379/2",
        "ALLOWED_HOSTS": "a.example, b.example",
    }
    result = _settings_in_subprocess(
        env,
        "[s.DEBUG, s.DATABASES['default']['ENGINE'], s.DATABASES['default']['NAME'], "
        "s.CELERY_TASK_ALWAYS_EAGER, s.CELERY_BROKER_URL, s.CACHES['default']['BACKEND'], s.ALLOWED_HOSTS, "
        "s.SESSION_COOKIE_SECURE]",
    )
    assert result.returncode == 0, result.stderr
    debug, engine, name, eager, broker, cache, hosts, secure = json.loads(result.stdout)
    assert (debug, engine, name, eager, broker) == (
        False,
        "django.db.backends.postgresql",
        "pyr",
        False,
        "redis://r:6379/2",
    )
    assert cache.endswith("RedisCache") and hosts == ["a.example", "b.example"] and secure is True


def test_settings_refuse_dev_secret_key_without_debug():
    result = _settings_in_subprocess({"DEBUG": "0"}, "1")
    assert result.returncode != 0 and "SECRET_KEY is not set" in result.stderr


def test_settings_reject_malformed_booleans():
    result = _settings_in_subprocess({"DEBUG": "maybe"}, "1")
    assert result.returncode != 0 and "DEBUG='maybe' is not a boolean" in result.stderr


def test_docker_compose_runs_the_production_shape():
    """No Docker engine runs where the tests do, so the file is checked for what `docker compose up`
    needs: the services, health checks, restart policies, and the app configured for PostgreSQL, Redis and workers."""
    import yaml

    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    services = compose["services"]
    assert set(services) == {"db", "redis", "migrate", "web", "worker", "dashboards", "beat", "proxy"}
    long_running = {
        name: service for name, service in services.items() if name != "migrate"
    }  # migrate: a one-off (tests/scale)
    # The proxy health-checks the replicas itself.
    assert all("healthcheck" in service for name, service in long_running.items() if name != "proxy")
    assert all(
        service["restart"] == "unless-stopped" for service in long_running.values()
    )  # nothing waits for a person
    for name in ("migrate", "web", "worker", "dashboards", "beat"):
        env = services[name]["environment"]
        assert env["DATABASE_URL"].startswith("postgres://") and env["REDIS_URL"].startswith("redis://")
        assert env["DEBUG"] == "0" and "SECRET_KEY" in env
        assert {"db": {"condition": "service_healthy"}, "redis": {"condition": "service_healthy"}}.items() <= services[
            name
        ]["depends_on"].items()
    assert (
        services["web"]["command"].startswith("gunicorn pyramid_app.wsgi ")
        and "migrate" in services["migrate"]["command"]
    )
    # Scores and dashboards on queues of their own; beat alone, so scaling workers never adds a beat.
    assert services["worker"]["command"].startswith("celery -A pyramid_app worker -Q celery ")
    assert services["dashboards"]["command"].startswith("celery -A pyramid_app worker -Q dashboards ")
    assert services["beat"]["command"].startswith("celery -A pyramid_app beat ")
    assert not any(
        "--beat" in service.get("command", "") or " -B" in service.get("command", "") for service in services.values()
    )


def test_make_worker_consumes_both_queues_and_beat_runs_alone():
    """`make worker` may be started on several machines: it must never start a beat of its own."""
    makefile = (REPO / "Makefile").read_text()
    worker = makefile.split("\nworker:", 1)[1].split("\n\n", 1)[0]
    beat = makefile.split("\nbeat:", 1)[1].split("\n\n", 1)[0]
    assert "worker -Q celery " in worker and "worker -Q dashboards " in worker
    assert "--beat" not in worker and " -B" not in worker and " beat " not in worker
    assert "celery -A pyramid_app beat " in beat
