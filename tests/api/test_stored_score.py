"""``annotations/{id}/score/``: the stored scores of both conventions while current, for editors to
poll cheaply after a write; stale scores say why when they cannot be recomputed now."""

import pytest

from annotation.jobs import queue
from annotation.peers.recompute import recompute_annotations


def test_score_is_current_until_a_write_and_hidden_from_others(world, as_user):
    recompute_annotations([world.annotation.pk])
    url = f"/api/annotations/{world.annotation.pk}/score/"
    body = as_user("alice").get(url).json()
    assert body["current"] is True and set(body["scores"]) == {"nist", "sacrerouge"} and body["delayed"] is None
    # SCU 1 (weight 1) of a pyramid with weights 1, 1 over 2 references: Xa = 1, modified = 1.
    assert body["scores"]["nist"]["modified"] == pytest.approx(1.0)
    world.annotation.refresh_from_db()
    assert body["revision"] == world.annotation.revision
    created = as_user("alice").post(
        "/api/matches/",
        {"annotation": world.annotation.pk, "scu": world.scu2.pk, "parts": [{"start": 14, "end": 18}]},
        format="json",
    )
    assert created.status_code == 201
    body = as_user("alice").get(url).json()  # no commit hook runs inside this test's transaction: stays stale
    assert body["current"] is False and body["scores"] is None and body["revision"] == created.json()["revision"]
    assert as_user("carol").get(url).status_code == 404 and as_user("bob").get(url).status_code == 404


def test_stale_scores_say_why_when_redis_is_unreachable(world, as_user, settings, monkeypatch):
    monkeypatch.setattr(queue, "in_process", lambda: False)
    # A health record of its own: the "unreachable" it leaves must not reach the next test's pages.
    monkeypatch.setattr(queue, "_health", {"checked": float("-inf"), "reason": None})
    settings.REDIS_URL = "redis://127.0.0.1:6395/0"  # nothing listens there (the fault tests' port range)
    body = as_user("alice").get(f"/api/annotations/{world.annotation.pk}/full/").json()
    assert body["score"]["current"] is False and "unreachable" in body["score"]["delayed"]
    pyramid = as_user("alice").get(f"/api/pyramids/{world.pyramid.pk}/full/").json()
    assert "unreachable" in pyramid["scores_delayed"]
