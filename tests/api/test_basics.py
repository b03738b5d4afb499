"""Authentication (tokens, sessions with CSRF), the OpenAPI schema and docs, pagination, filters."""

import pytest
from django.contrib.auth.models import User
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.pyramids.models import SCU


def test_token_create_use_and_revoke(world):
    alice = world.users["alice"]
    alice.set_password("s3cret-pw")
    alice.save()
    client = APIClient()
    assert client.post("/api/auth/token/", {"username": "alice", "password": "wrong"}, format="json").status_code == 400
    created = client.post("/api/auth/token/", {"username": "alice", "password": "s3cret-pw"}, format="json")
    assert created.status_code == 201
    key = created.json()["token"]
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get(f"/api/pyramids/{world.pyramid.pk}/").status_code == 200
    again = client.post("/api/auth/token/")
    assert again.status_code == 200 and again.json()["token"] == key, "authenticated: the same token back"
    assert client.delete("/api/auth/token/").status_code == 204
    assert not Token.objects.filter(user=alice).exists()
    assert client.get(f"/api/pyramids/{world.pyramid.pk}/").status_code == 401, "a revoked token no longer works"


def test_token_revoke_needs_authentication(db):
    assert APIClient().delete("/api/auth/token/").status_code == 401


def test_anonymous_is_told_how_to_authenticate(db):
    response = APIClient().get("/api/datasets/")
    assert response.status_code == 401 and response["WWW-Authenticate"] == "Token"


def test_session_writes_need_csrf(world):
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(world.users["alice"])
    url = f"/api/scus/{world.scu1.pk}/"
    read = client.get(url)
    assert read.status_code == 200
    etag = read["ETag"]  # the pyramid's revision: writes must name it
    refused = client.patch(url, {"label": "no token"}, format="json", HTTP_IF_MATCH=etag)
    assert refused.status_code == 403 and "CSRF" in refused.json()["detail"]
    token = client.get("/accounts/login/").cookies["csrftoken"].value
    assert (
        client.patch(
            url, {"label": "with token"}, format="json", HTTP_X_CSRFTOKEN=token, HTTP_IF_MATCH=etag
        ).status_code
        == 200
    )
    assert SCU.objects.get(pk=world.scu1.pk).label == "with token"


def test_schema_and_docs(world, as_user):
    schema = APIClient().get("/api/schema/", {"format": "json"})
    assert schema.status_code == 200
    paths = schema.json()["paths"]
    for path in [
        "/api/pyramids/{id}/full/",
        "/api/annotations/{id}/export/",
        "/api/datasets/{id}/scores/",
        "/api/auth/token/",
        "/api/contributors/",
    ]:
        assert path in paths, path
    assert APIClient().get("/api/docs/").status_code == 200


def test_pagination(world, as_user):
    SCU.objects.bulk_create(SCU(pyramid=world.pyramid, uid=uid, label=f"{uid}") for uid in range(3, 153))
    page = as_user("alice").get("/api/scus/").json()
    assert page["count"] == 152 and len(page["results"]) == 100 and page["next"].endswith("page=2")
    assert len(as_user("alice").get("/api/scus/", {"page": 2}).json()["results"]) == 52


@pytest.mark.parametrize(
    "endpoint,query,expected",
    [
        ("topics", {"dataset": "D2"}, 0),
        ("topics", {"dataset": "D1"}, 1),
        ("references", {"topic": "t1"}, 2),
        ("pyramids", {"annotator": "alice", "status": "done"}, 1),
        ("pyramids", {"annotator": "bob"}, 0),
        ("annotations", {"annotator": "alice", "dataset": "D1", "status": "done"}, 1),
        ("annotations", {"status": "draft"}, 0),
        ("matches", {"annotator": "alice", "topic": "t1"}, 1),
        ("assignments", {"annotator": "bob", "dataset": "D1"}, 1),
        ("assignments", {"task": "annotate_peers"}, 2),
        ("contributors", {"pyramid": "pyramid"}, 2),
        ("contributors", {"pyramid": "pyramid", "reference": "ref_b"}, 1),
    ],
)
def test_filters(world, as_user, endpoint, query, expected):
    objects = {
        **world.users,
        "D1": world.d1,
        "D2": world.d2,
        "t1": world.t1,
        "pyramid": world.pyramid,
        "ref_b": world.refs["B"],
    }
    params = {key: objects[value].pk if value in objects else value for key, value in query.items()}
    assert as_user("admin").get(f"/api/{endpoint}/", params).json()["count"] == expected


def test_invalid_filter_value_is_400(world, as_user):
    assert as_user("admin").get("/api/topics/", {"dataset": "x"}).status_code == 400


def test_users_without_role_see_no_dataset(db):
    client = APIClient()
    client.force_authenticate(User.objects.create_user("nobody"))
    assert client.get("/api/datasets/").json()["count"] == 0


def test_schema_is_valid_and_complete(db, tmp_path):
    """No endpoint the generator cannot describe (it warns, and the docs would be wrong)."""
    from django.core.management import call_command

    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yml"))


def test_token_endpoint_slows_password_guessing(world):
    """The 10th failure locks the account out (django-axes; tests/security/test_login_attacks.py)."""
    client = APIClient()
    answers = [
        client.post("/api/auth/token/", {"username": "alice", "password": f"guess-{i}"}, format="json").status_code
        for i in range(11)
    ]
    assert answers[:9] == [400] * 9 and answers[9:] == [429, 429]


def test_api_docs_are_served_without_a_cdn(world, as_user):
    page = as_user("alice").get("/api/docs/").content.decode()
    assert "cdn.jsdelivr" not in page and "/static/drf_spectacular_sidecar/" in page
