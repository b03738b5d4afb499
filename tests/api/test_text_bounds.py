"""Labels and comments are bounded on every path that writes one (issue 24: a 2,000,000-character
SCU label made every reader's ``/full/`` document 2.4 MB): the API (serializers and the services
behind the editors' actions), the DUCView import and the archive import (the same import, from a
zip). The bounds are settings (``LABEL_MAX_LENGTH``, ``COMMENT_MAX_LENGTH``)."""

import pytest
from django.core.exceptions import ValidationError

from annotation.pyramids import actions
from annotation.pyramids.editing import add_contributor
from annotation.pyramids.models import SCU, Contributor

from tests.transfer.test_api import PYR, PYR_NAME, counts, post_files, upload, zipped

LABEL, COMMENT = 2000, 10000  # the defaults: real DUC labels have at most 268 characters, comments 97


@pytest.fixture
def draft(world):
    """alice's pyramid, open for editing."""
    world.pyramid.status = world.pyramid.Status.IN_PROGRESS
    world.pyramid.save(update_fields=["status"])
    return world


def _rejected(response, field, length, limit):
    assert response.status_code == 400, response.content
    assert response.json()[field] == [f"The {field} has {length:,} characters; at most {limit:,} are allowed."]


def test_the_api_refuses_a_label_or_comment_past_the_bound(draft, as_user):
    alice, world = as_user("alice"), draft
    before = (
        list(SCU.objects.values_list("label", "comment")),
        list(Contributor.objects.values_list("comment", "scu")),
    )
    scu = {"pyramid": world.pyramid.pk, "reference": world.refs["A"].pk, "parts": [{"start": 6, "end": 10}]}
    _rejected(alice.post("/api/scus/", {**scu, "label": "x" * (LABEL + 1)}, format="json"), "label", LABEL + 1, LABEL)
    _rejected(
        alice.patch(f"/api/scus/{world.scu1.pk}/", {"label": "x" * 2_000_000}, format="json"), "label", 2_000_000, LABEL
    )
    _rejected(
        alice.patch(f"/api/scus/{world.scu1.pk}/", {"comment": "c" * (COMMENT + 1)}, format="json"),
        "comment",
        COMMENT + 1,
        COMMENT,
    )
    contributor = {"scu": world.scu2.pk, "reference": world.refs["A"].pk, "parts": [{"start": 6, "end": 10}]}
    _rejected(
        alice.post("/api/contributors/", {**contributor, "comment": "c" * (COMMENT + 1)}, format="json"),
        "comment",
        COMMENT + 1,
        COMMENT,
    )
    _rejected(
        alice.patch(f"/api/contributors/{world.contributor.pk}/", {"comment": "c" * (COMMENT + 1)}, format="json"),
        "comment",
        COMMENT + 1,
        COMMENT,
    )
    second = add_contributor(world.scu1, world.refs["B"], [(0, 5)])
    _rejected(
        alice.post(f"/api/contributors/{second.pk}/split/", {"label": "x" * (LABEL + 1)}, format="json"),
        "label",
        LABEL + 1,
        LABEL,
    )
    after = (list(SCU.objects.values_list("label", "comment")), list(Contributor.objects.values_list("comment", "scu")))
    assert after[0] == before[0] and sorted(after[1]) == sorted(before[1] + [("", world.scu1.pk)])
    # at the bound: accepted
    assert (
        alice.patch(
            f"/api/scus/{world.scu1.pk}/", {"label": "x" * LABEL, "comment": "c" * COMMENT}, format="json"
        ).status_code
        == 200
    )
    assert SCU.objects.get(pk=world.scu1.pk).label == "x" * LABEL


def test_the_bounds_are_settings(draft, as_user, settings):
    settings.LABEL_MAX_LENGTH, settings.COMMENT_MAX_LENGTH = 10, 5
    alice = as_user("alice")
    _rejected(alice.patch(f"/api/scus/{draft.scu1.pk}/", {"label": "x" * 11}, format="json"), "label", 11, 10)
    _rejected(
        alice.patch(f"/api/contributors/{draft.contributor.pk}/", {"comment": "c" * 6}, format="json"), "comment", 6, 5
    )
    assert alice.patch(f"/api/scus/{draft.scu1.pk}/", {"label": "x" * 10}, format="json").status_code == 200


def test_the_services_refuse_them_too(draft):
    """The services behind every page and action check the bounds themselves, not only the serializers."""
    alice = draft.users["alice"]
    with pytest.raises(ValidationError, match="at most 10,000"):
        actions.update_scu(draft.scu1, alice, comment="c" * (COMMENT + 1))
    with pytest.raises(ValidationError, match="at most 10,000"):
        actions.update_contributor(draft.contributor, alice, comment="c" * (COMMENT + 1))
    with pytest.raises(ValidationError, match="at most 2,000"):
        actions.create_scu(draft.pyramid, alice, label="x" * (LABEL + 1), reference=draft.refs["A"], spans=[(6, 10)])
    with pytest.raises(ValidationError, match="at most 10,000"):
        actions.add_contributor_to(
            draft.scu2, alice, reference=draft.refs["A"], spans=[(6, 10)], comment="c" * (COMMENT + 1)
        )
    assert SCU.objects.get(pk=draft.scu1.pk).comment == "" and SCU.objects.count() == 2


def _with_long_text(attribute: bytes, length: int) -> bytes:
    """The fixture pyramid with its first SCU's ``attribute`` (label or comment) ``length`` characters long."""
    start = PYR.index(b"<scu ")
    end = PYR.index(b">", start)
    tag = PYR[start:end]
    if attribute + b'="' in tag:
        i = tag.index(attribute + b'="') + len(attribute) + 2
        tag = tag[:i] + b"y" * length + tag[tag.index(b'"', i) :]
    else:
        tag += b" " + attribute + b'="' + b"y" * length + b'"'
    return PYR[:start] + tag + PYR[end:]


@pytest.mark.parametrize("attribute,length,limit", [(b"label", LABEL + 1, LABEL), (b"comment", COMMENT + 1, COMMENT)])
def test_the_ducview_and_archive_imports_refuse_them(world, as_user, attribute, length, limit):
    before = counts()
    data = _with_long_text(attribute, length)
    for file in (upload(PYR_NAME, data), upload("archive.zip", zipped({f"pyramids/{PYR_NAME}": data}))):
        response = post_files(as_user("coord"), world.d1, file)
        assert response.status_code == 400, response.content
        [reason] = [o["reason"] for o in response.json()["outcomes"]]
        assert reason.endswith(f"the {attribute.decode()} has {length:,} characters; at most {limit:,} are allowed.")
        assert reason.startswith("SCU ")
        assert counts() == before
    assert (
        post_files(as_user("coord"), world.d1, upload(PYR_NAME, _with_long_text(attribute, limit))).status_code == 200
    )
