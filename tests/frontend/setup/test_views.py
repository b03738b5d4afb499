"""The set-up pages' access rule, CSRF and bounds, without a browser (the flows: test_browser.py)."""

import pytest
from django.test import Client

from annotation.corpus.models import Dataset, Topic

PAGES = [
    "/setup/{d}/",
    "/setup/{d}/topics/add/",
    "/setup/{d}/topics/zip/",
    "/setup/{d}/import/",
    "/setup/{d}/pyramid-set/",
    "/setup/{d}/people/",
    "/setup/{d}/export/",
]


def _client(user=None, csrf=False) -> Client:
    client = Client(enforce_csrf_checks=csrf)
    if user is not None:
        client.force_login(user)
    return client


@pytest.mark.parametrize("page", PAGES)
def test_each_dataset_page_follows_the_access_rule(people, page):
    url = page.format(d=people.dataset.pk)
    assert _client().get(url).status_code == 302  # to the login page
    assert _client(people.coord).get(url).status_code == 200
    assert _client(people.ann).get(url).status_code == 403  # sees the dataset, may not change it
    assert _client(people.other).get(url).status_code == 404  # another dataset's coordinator
    assert _client(people.nobody).get(url).status_code == 404


def test_who_may_create_a_dataset(people):
    assert _client(people.ann).get("/setup/datasets/new/").status_code == 403
    assert _client(people.nobody).post("/setup/datasets/new/", {"name": "X"}).status_code == 403
    response = _client(people.coord).post("/setup/datasets/new/", {"name": "  Spring study ", "description": "Pilot"})
    dataset = Dataset.objects.get(name="Spring study")
    assert response.status_code == 302 and response["Location"] == f"/setup/{dataset.pk}/"
    assert list(dataset.coordinators.all()) == [people.coord]
    again = _client(people.coord).post("/setup/datasets/new/", {"name": "spring STUDY"})
    assert again.status_code == 400 and "exists already" in again.content.decode()


def test_csrf_is_checked_on_every_form(people):
    client = _client(people.coord, csrf=True)
    assert client.post("/setup/datasets/new/", {"name": "No token"}).status_code == 403
    url = f"/setup/{people.dataset.pk}/topics/add/"
    assert client.post(url, {"topic": "T", "peers_text": "---\n1\n---\nx", "action": "save"}).status_code == 403
    assert not Dataset.objects.filter(name="No token").exists() and not Topic.objects.filter(external_id="T").exists()


def test_a_request_over_the_limit_is_refused_before_it_is_read(people, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    url = f"/setup/{people.dataset.pk}/topics/add/"
    response = _client(people.coord).post(url, {"topic": "T", "peers_text": "x" * 5000, "action": "save"})
    assert response.status_code == 413 and "too large" in response.content.decode()
    assert not Topic.objects.filter(external_id="T").exists()


def test_save_without_a_valid_preview_writes_nothing_and_shows_why(people):
    url = f"/setup/{people.dataset.pk}/topics/add/"
    response = _client(people.coord).post(
        url, {"topic": "D0602", "peers_text": "no header here", "action": "save", "header_pattern": r"^== \d+ ==$"}
    )
    assert response.status_code == 400
    assert "peer summaries: the header pattern matches no header in the text" in response.content.decode()
    assert not Topic.objects.filter(external_id="D0602").exists()


def test_the_preview_fragment_alone(people):
    url = f"/setup/{people.dataset.pk}/topics/add/"
    response = _client(people.coord).post(
        url,
        {
            "topic": "D0602",
            "peers_text": "== 1 ==\nPeer <b>one</b>.",
            "action": "preview",
            "header_pattern": r"^== \d+ ==$",
        },
        headers={"X-Preview": "fragment"},
    )
    body = response.content.decode()
    assert response.status_code == 200 and body.lstrip().startswith("<section") and 'data-ok="1"' in body
    assert "Peer &lt;b&gt;one&lt;/b&gt;." in body  # user text escaped
    assert not Topic.objects.filter(external_id="D0602").exists()


def test_invitation_links_only_for_invited_people_of_the_dataset(people):
    from annotation.corpus import people as accounts
    from annotation.corpus.models import Assignment

    url = f"/setup/{people.dataset.pk}/people/"
    coord = _client(people.coord)
    # ann has a password (joined): no link can be made for her account
    response = coord.post(url, {"form": "link", "user": people.ann.pk}, follow=True)
    assert (
        "No invitation to renew" in response.content.decode() and "/accounts/invite/" not in response.content.decode()
    )
    # an invited person of another dataset: not this coordinator's to renew
    stranger = accounts.create_annotator("stranger")
    response = coord.post(url, {"form": "link", "user": stranger.pk}, follow=True)
    assert "/accounts/invite/" not in response.content.decode()
    Assignment.objects.create(topic=people.topic, annotator=stranger, task="annotate_peers")
    response = coord.post(url, {"form": "link", "user": stranger.pk})
    assert response.status_code == 200 and "/accounts/invite/" in response.content.decode()
    with pytest.raises(accounts.AccountError):
        accounts.invitation_path(people.coord)
    # the annotator may not create accounts in a dataset she only sees
    assert (
        _client(people.ann)
        .post(url, {"form": "new", "new-username": "x", "new-access": "invite", "new-task": "annotate_peers"})
        .status_code
        == 403
    )
    assert not accounts.User.objects.filter(username="x").exists()


def _invitation_link(response) -> str:
    import re

    return re.search(r'value="https?://[^/"]+(/accounts/invite/[^"]+)"', response.content.decode()).group(1)


def test_a_renewed_invitation_revokes_the_earlier_links(people):
    """Issue 24: renewing a link (one went astray) left the old one working for its whole lifetime."""
    from annotation.corpus import people as accounts
    from annotation.corpus.models import Assignment

    zoe = accounts.create_annotator("zoe")
    Assignment.objects.create(topic=people.topic, annotator=zoe, task="annotate_peers")
    url = f"/setup/{people.dataset.pk}/people/"
    coord = _client(people.coord)
    first = _invitation_link(coord.post(url, {"form": "link", "user": zoe.pk}))
    renewed = coord.post(url, {"form": "link", "user": zoe.pk})
    second = _invitation_link(renewed)
    assert first != second
    assert "This link no longer works" in Client().get(first, follow=True).content.decode()
    page = Client().get(second, follow=True).content.decode()
    assert "Choose a password to log in as <strong>zoe</strong>" in page
    assert "Earlier links for zoe no longer work" in renewed.content.decode()
