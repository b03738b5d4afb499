"""``Idempotency-Key`` on the API's POSTs (issue 24: under ``pg_terminate_backend`` 2 of 58 requests
that answered 500 had committed, and a client that retried made a duplicate)."""

import threading
import time
import uuid

import pytest
from django.db import connection, transaction
from django.utils import timezone

from annotation.api import idempotency_keys
from annotation.api.models import IdempotentRequest
from annotation.pyramids import actions, deltas
from annotation.pyramids.models import SCU

from tests.api.world import client_for


@pytest.fixture
def draft(world):
    world.pyramid.status = world.pyramid.Status.IN_PROGRESS
    world.pyramid.save(update_fields=["status"])
    return world


def new_scu(world, label="Gamma", start=6, end=10):
    return {
        "pyramid": world.pyramid.pk,
        "label": label,
        "reference": world.refs["A"].pk,
        "parts": [{"start": start, "end": end}],
    }


def post(client, url, body, key):
    return client.post(url, body, format="json", headers={"Idempotency-Key": key} if key else {})


def test_a_retry_gets_the_first_answer_and_creates_nothing_more(draft, as_user):
    alice, key = as_user("alice"), str(uuid.uuid4())
    first = post(alice, "/api/scus/", new_scu(draft), key)
    assert first.status_code == 201, first.content
    again = post(alice, "/api/scus/", new_scu(draft), key)
    assert again.status_code == 201 and again.json() == first.json() and again["ETag"] == first["ETag"]
    assert again["Idempotent-Replayed"] == "true" and not first.has_header("Idempotent-Replayed")
    assert SCU.objects.filter(pyramid=draft.pyramid, label="Gamma").count() == 1
    # without a key, a second POST is a second SCU (nothing changes for clients that send none)
    assert post(alice, "/api/scus/", new_scu(draft), None).status_code == 201
    assert SCU.objects.filter(pyramid=draft.pyramid, label="Gamma").count() == 2


def test_the_same_key_with_another_body_is_422(draft, as_user):
    alice, key = as_user("alice"), str(uuid.uuid4())
    assert post(alice, "/api/scus/", new_scu(draft), key).status_code == 201
    other = post(alice, "/api/scus/", new_scu(draft, label="Other"), key)
    assert other.status_code == 422 and "another request body" in other.json()["detail"]
    assert not SCU.objects.filter(label="Other").exists()


def test_keys_are_per_user_and_endpoint(draft, as_user):
    key = str(uuid.uuid4())
    assert post(as_user("alice"), "/api/scus/", new_scu(draft), key).status_code == 201
    split = post(
        as_user("alice"), f"/api/contributors/{draft.zeta.pk}/split/", {}, key
    )  # another endpoint: its own answer
    assert split.status_code in (200, 400) and not split.has_header("Idempotent-Replayed")
    coord = post(as_user("coord"), "/api/topics/", {"dataset": draft.d1.pk, "external_id": "T9"}, key)
    assert coord.status_code == 201 and not coord.has_header("Idempotent-Replayed")


def test_a_request_that_fails_after_writing_commits_nothing_so_its_retry_creates_one(draft, as_user, monkeypatch):
    """The answer is stored in the write's transaction: a request that wrote and then failed (a
    500 after the write) leaves neither, and the retry creates the object once."""
    alice, key = as_user("alice"), str(uuid.uuid4())
    real, calls = deltas.delta, []

    def fails_once(outcome):
        calls.append(outcome)
        if len(calls) == 1:
            raise RuntimeError("connection lost after the write")
        return real(outcome)

    monkeypatch.setattr(deltas, "delta", fails_once)
    with pytest.raises(RuntimeError):
        post(alice, "/api/scus/", new_scu(draft), key)
    assert post(alice, "/api/scus/", new_scu(draft), key).status_code == 201
    assert SCU.objects.filter(pyramid=draft.pyramid, label="Gamma").count() == 1


def test_a_refused_request_is_not_remembered(draft, as_user):
    alice, key = as_user("alice"), str(uuid.uuid4())
    assert post(alice, "/api/scus/", new_scu(draft, start=6, end=999), key).status_code == 400
    assert post(alice, "/api/scus/", new_scu(draft), key).status_code == 201
    assert IdempotentRequest.objects.filter(key=key).count() == 1


def test_bad_keys_and_anonymous_requests(draft, as_user):
    assert post(as_user("alice"), "/api/scus/", new_scu(draft), "x" * 256).status_code == 400
    assert post(as_user("alice"), "/api/scus/", new_scu(draft), "not ascii é").status_code == 400
    assert post(as_user("anon"), "/api/scus/", new_scu(draft), "k").status_code in (401, 403)
    assert not SCU.objects.filter(label="Gamma").exists() and not IdempotentRequest.objects.exists()


def test_answers_expire(draft, as_user, settings):
    alice, key = as_user("alice"), str(uuid.uuid4())
    assert post(alice, "/api/scus/", new_scu(draft), key).status_code == 201
    IdempotentRequest.objects.update(
        created_at=timezone.now() - timezone.timedelta(seconds=settings.IDEMPOTENCY_KEY_SECONDS + 1)
    )
    again = post(alice, "/api/scus/", new_scu(draft), key)  # expired: a new request
    assert again.status_code == 201 and not again.has_header("Idempotent-Replayed")
    assert SCU.objects.filter(label="Gamma").count() == 2
    IdempotentRequest.objects.update(
        created_at=timezone.now() - timezone.timedelta(seconds=settings.IDEMPOTENCY_KEY_SECONDS + 1)
    )
    assert idempotency_keys.forget_expired() == 1 and not IdempotentRequest.objects.exists()


def test_the_schema_documents_the_header(world, as_user):
    schema = as_user("alice").get("/api/schema/?format=json").json()
    parameters = schema["paths"]["/api/scus/"]["post"].get("parameters", [])
    assert any(p["name"] == "Idempotency-Key" and p["in"] == "header" for p in parameters)
    assert not any(p["name"] == "Idempotency-Key" for p in schema["paths"]["/api/scus/"]["get"].get("parameters", []))


@pytest.mark.postgres  # concurrent writers
def test_concurrent_identical_requests_create_once(draft, transactional_db, monkeypatch):
    """Two threads send the same create with the same key at once: one creates, the other waits
    for it and gets its answer (or 409 to retry), never a second SCU."""
    key, answers = str(uuid.uuid4()), []
    real = actions.create_scu

    def slow_create(*args, **kwargs):
        time.sleep(0.5)  # the first holds its key while the second arrives
        return real(*args, **kwargs)

    monkeypatch.setattr(actions, "create_scu", slow_create)
    alice = draft.users["alice"]

    def send():
        try:
            answers.append(post(client_for(alice), "/api/scus/", new_scu(draft), key))
        finally:
            connection.close()

    threads = [threading.Thread(target=send) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(answers) == 2
    assert SCU.objects.filter(pyramid=draft.pyramid, label="Gamma").count() == 1
    created = [a for a in answers if a.status_code == 201]
    assert created and all(a.status_code in (201, 409) for a in answers)
    assert len({a.json()["id"] for a in created}) == 1


@pytest.mark.postgres  # lock waits
def test_a_key_held_too_long_answers_409_to_retry(draft, transactional_db, monkeypatch):
    """While the first request with a key runs, the second waits at most WAIT_SECONDS, then 409."""
    monkeypatch.setattr(idempotency_keys, "WAIT_SECONDS", 0.5)
    key, held, done = str(uuid.uuid4()), threading.Event(), threading.Event()
    alice = draft.users["alice"]

    def first_request_still_running():
        try:
            with transaction.atomic():
                IdempotentRequest.objects.create(user=alice, endpoint="POST /api/scus/", key=key, body_hash="0" * 64)
                held.set()
                done.wait(30)
        finally:
            connection.close()

    thread = threading.Thread(target=first_request_still_running)
    thread.start()
    try:
        assert held.wait(30)
        started = time.monotonic()
        answer = post(client_for(alice), "/api/scus/", new_scu(draft), key)
        waited = time.monotonic() - started
        still_held = thread.is_alive()  # the answer came while the first request held its key
    finally:
        done.set()
        thread.join(30)
    assert (
        answer.status_code == 409
        and answer.json()["code"] == "idempotency_in_progress"
        and answer["Retry-After"] == "1"
    )
    # It waited (a loaded machine only lengthens the wait measured), and not until the key was released.
    assert waited > 0.4 and still_held and not SCU.objects.filter(label="Gamma").exists()
