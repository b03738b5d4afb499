"""Every editing action answers with what it changed (``delta``) and the revision it produced, so an
editor that applies the delta to its copy of the document has exactly what a reload would give
(docs/editing-api.md, "Deltas"). Each write here sends the ETag of the previous answer as If-Match:
the answer's revision is the one the write produced."""

import pytest

from tests.api.world import client_for


class Editor:
    """A client keeping its own copy of a ``full`` document, patched only from answers."""

    def __init__(self, user, url):
        self.client, self.url = client_for(user, if_match=None), url
        response = self.client.get(url)
        self.doc, self.etag = response.json(), response["ETag"]

    def write(self, method, path, body=None, expect=(200, 201)):
        response = getattr(self.client, method)(f"/api/{path}", body or {}, format="json", HTTP_IF_MATCH=self.etag)
        assert response.status_code in expect, response.content
        self.etag = response["ETag"]
        return response.json() if response.status_code != 204 else None

    def reload(self):
        return self.client.get(self.url).json()


def apply_pyramid_delta(doc, delta):
    assert delta["document"] == "pyramid" and delta["id"] == doc["id"]
    gone = set(delta["removed_scus"]) | {s["uid"] for s in delta["scus"]}
    doc["scus"] = sorted([s for s in doc["scus"] if s["uid"] not in gone] + delta["scus"], key=lambda s: s["uid"])
    doc["revision"] = delta["revision"]


def test_pyramid_actions_answer_with_deltas_that_equal_a_reload(world):
    p = world.pyramid
    ed = Editor(world.users["alice"], f"/api/pyramids/{p.pk}/full/")
    a, b = world.refs["A"].pk, world.refs["B"].pk
    steps = [
        ("post", "scus/", {"pyramid": p.pk, "label": "Gamma", "reference": a, "parts": [{"start": 11, "end": 16}]}),
        ("post", "contributors/", {"scu": world.scu1.pk, "reference": b, "parts": [{"start": 0, "end": 5}]}),
        ("post", f"contributors/{world.contributor.pk}/parts/", {"start": 6, "end": 10}),
        ("patch", f"scus/{world.scu2.pk}/", {"label": "Zeta!"}),
        ("post", f"contributors/{world.zeta.pk}/split/", None),  # refused: the only contributor (400 below)
    ]
    for method, path, body in steps[:-1]:
        answer = ed.write(method, path, body)
        assert answer["revision"] == int(ed.etag.strip('"'))
        apply_pyramid_delta(ed.doc, answer["delta"])
        assert ed.doc["scus"] == ed.reload()["scus"], path
    # Merge SCU 3 ("Gamma", from A) into SCU 2 ("Zeta", from B): SCU 3 is removed.
    gamma = next(s for s in ed.doc["scus"] if s["label"] == "Gamma")
    answer = ed.write("post", f"scus/{world.scu2.pk}/merge/", {"sources": [gamma["id"]]})
    assert answer["delta"]["removed_scus"] == [gamma["uid"]]
    apply_pyramid_delta(ed.doc, answer["delta"])
    assert ed.doc["scus"] == ed.reload()["scus"]
    for action in ("undo", "redo", "undo"):  # recreates SCU 3 with new ids: replaced by uid
        answer = ed.write("post", f"pyramids/{p.pk}/{action}/")
        apply_pyramid_delta(ed.doc, answer["delta"])
        fresh = ed.reload()
        assert ed.doc["scus"] == fresh["scus"] and ed.doc["revision"] == fresh["revision"], action
    weights = {s["uid"]: s["weight"] for s in ed.doc["scus"]}
    assert weights == {1: 2, 2: 1, 3: 1}


def test_a_refused_action_changes_nothing_and_keeps_the_revision(world):
    ed = Editor(world.users["alice"], f"/api/pyramids/{world.pyramid.pk}/full/")
    before = ed.etag
    response = ed.client.post(f"/api/contributors/{world.zeta.pk}/split/", {}, format="json", HTTP_IF_MATCH=before)
    assert response.status_code == 400 and "delta" not in response.json()
    assert ed.reload() == ed.doc


def test_match_actions_answer_with_the_annotations_matches(world):
    an = world.annotation
    type(world.match).objects.filter(pk=world.match.pk).update(review_note="Imported: its label was found nowhere.")
    ed = Editor(world.users["alice"], f"/api/annotations/{an.pk}/full/")
    created = ed.write(
        "post", "matches/", {"annotation": an.pk, "scu": world.scu2.pk, "parts": [{"start": 14, "end": 18}]}
    )
    assert created["id"] and created["delta"] == {
        "document": "annotation",
        "id": an.pk,
        "revision": created["revision"],
        "matches": ed.reload()["matches"],
    }
    # A non-matching unit of two parts, given out of order: the delta orders them as ``full`` does.
    unmatched = ed.write(
        "post",
        "matches/",
        {"annotation": an.pk, "scu": None, "parts": [{"start": 19, "end": 22}, {"start": 6, "end": 8}]},
    )
    assert unmatched["delta"]["matches"] == ed.reload()["matches"]
    assert [([p["start"] for p in m["parts"]], m["review_note"] != "") for m in unmatched["delta"]["matches"]] == [
        ([0], True),
        ([14], False),
        ([6, 19], False),
    ]
    assert created["id"] in [m["id"] for m in created["delta"]["matches"]]
    moved = ed.write("patch", f"matches/{created['id']}/", {"scu": None})
    assert moved["delta"]["matches"] == ed.reload()["matches"]
    undone = ed.write("post", f"annotations/{an.pk}/undo/")
    fresh = ed.reload()
    assert undone["delta"]["matches"] == fresh["matches"] and undone["revision"] == fresh["revision"]
    ed.write("delete", f"matches/{fresh['matches'][-1]['id']}/", expect=(204,))  # undo recreated the matches: new ids
    assert int(ed.etag.strip('"')) == ed.reload()["revision"]


@pytest.mark.parametrize("path", ["scus", "contributors"])
def test_deletes_answer_204_with_the_revision_they_produced(world, path):
    ed = Editor(world.users["alice"], f"/api/pyramids/{world.pyramid.pk}/full/")
    pk = world.scu2.pk if path == "scus" else world.zeta.pk
    ed.write("delete", f"{path}/{pk}/", expect=(204,))
    fresh = ed.reload()
    assert int(ed.etag.strip('"')) == fresh["revision"] and [s["uid"] for s in fresh["scus"]] == [1]
