"""The production path for real: PostgreSQL, a Celery worker consuming from Redis, Debian's Chromium."""

import time

import pytest
from django.contrib.auth.models import User
from django.db import connection

from annotation.peers.demo import load_demo
from annotation.peers.models import AnnotationScore


@pytest.mark.postgres
def test_runs_on_postgresql_with_integrity_triggers(db):
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'contributor_%' OR tgname LIKE 'peer_%'")
        assert cursor.fetchone()[0] >= 5


@pytest.mark.worker
def test_worker_on_redis_computes_scores(celery_worker, settings):
    assert settings.CELERY_TASK_ALWAYS_EAGER is False
    load_demo()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        scores = AnnotationScore.objects.filter(convention="nist")
        if scores.count() == 4 and all(s.is_current for s in scores):
            break
        time.sleep(0.2)
    scores = {
        s.annotation.annotator.username + s.annotation.peer.external_id: s.values["modified"]
        for s in AnnotationScore.objects.filter(convention="nist")
    }
    assert scores == pytest.approx({"alice1": 1.0, "bob1": 12 / 15, "alice2": 8 / 15, "bob2": 5 / 15})


@pytest.mark.browser
def test_browser_logs_in_and_sees_assignments(chromium, live_server, transactional_db, artifacts):
    load_demo()
    page = chromium.new_page(viewport={"width": 1280, "height": 800})
    page.goto(f"{live_server.url}/")
    assert "/accounts/login/" in page.url
    page.fill("#id_username", "alice")
    page.fill("#id_password", "demo-alice")
    page.click("button[type=submit]")
    page.goto(f"{live_server.url}/")
    page.wait_for_selector("text=Your assignments")
    rows = page.locator("tbody tr")
    assert rows.count() == 2
    assert "Build pyramid" in page.content()
    page.screenshot(path=str(artifacts / "home-alice.png"), full_page=True)
    page.close()
    assert User.objects.filter(username="alice").exists()
