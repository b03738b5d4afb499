"""*Import a pyramid set* (``/setup/{id}/pyramid-set/``): several pyramids of the same texts, one
per annotator, uploaded as one set into one topic (the service of ``import_pyramid_set``), for the
dataset's coordinators only, bounded, the whole set or nothing, errors saying what is wrong."""

import dataclasses
import io
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from annotation import formats
from annotation.corpus.models import ReferenceSummary, Topic
from annotation.peers.models import PeerAnnotation
from annotation.pyramids.models import Pyramid, PyramidAgreement

FIXTURES = Path(__file__).resolve().parents[2] / "formats" / "fixtures"
PYR = (FIXTURES / "event.pyr").read_bytes()
PAN = (FIXTURES / "event.pan").read_bytes()


def _client(user=None, csrf=False) -> Client:
    client = Client(enforce_csrf_checks=csrf)
    if user is not None:
        client.force_login(user)
    return client


def other_annotator() -> bytes:
    """The fixture's pyramid as another annotator built it: its texts copied with other line breaks
    and reference ids, one SCU fewer (its contributors left out)."""
    pyramid, _ = formats.parse_pyramid(PYR)
    kept = [scu for scu in pyramid.scus if scu.uid != pyramid.scus[0].uid]
    return formats.write_pyramid(dataclasses.replace(pyramid, scus=kept))


def two_texts() -> bytes:
    """A pyramid of two of the three texts: not the same set."""
    pyramid, _ = formats.parse_pyramid(PYR)
    first = pyramid.references[0].id
    keep = [scu for scu in pyramid.scus if all(p.reference != first for c in scu.contributors for p in c.parts)]
    return formats.write_pyramid(dataclasses.replace(pyramid, references=pyramid.references[1:], scus=keep))


def post(client, dataset, files: dict[str, bytes], topic="EVENT"):
    return client.post(
        f"/setup/{dataset.pk}/pyramid-set/",
        {"topic": topic, "files": [SimpleUploadedFile(name, data) for name, data in files.items()]},
    )


def state() -> tuple:
    return (
        Topic.objects.count(),
        Pyramid.objects.count(),
        ReferenceSummary.objects.count(),
        PeerAnnotation.objects.count(),
    )


@pytest.mark.parametrize("shape", ["files", "zip"])
def test_a_coordinator_uploads_a_set_and_gets_its_construction_agreement(people, in_process_jobs, shape):
    files = {"alice.pyr": PYR, "bob.pyr": PYR, "carol.pyr": other_annotator()}
    if shape == "zip":
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as archive:
            for name, data in files.items():
                archive.writestr(f"set/{name}", data)
        files = {"set.zip": out.getvalue()}
    response = post(_client(people.coord), people.dataset, files)
    assert response.status_code == 200, response.content.decode()
    topic = Topic.objects.get(dataset=people.dataset, external_id="EVENT")
    assert sorted(p.source.rsplit("/", 1)[-1] for p in topic.pyramids.all()) == ["alice.pyr", "bob.pyr", "carol.pyr"]
    link = f"/datasets/{people.dataset.pk}/pyramid-agreement/EVENT/"
    assert f'href="{link}"' in response.content.decode()
    files_of = {p.pk: p.source.rsplit("/", 1)[-1] for p in topic.pyramids.all()}
    pairs = {
        frozenset((files_of[p["a"]], files_of[p["b"]])): p
        for p in PyramidAgreement.objects.get(topic=topic).values["pairs"]
    }
    scus = len(formats.parse_pyramid(PYR)[0].scus)
    identical = pairs.pop(frozenset(("alice.pyr", "bob.pyr")))
    assert (identical["pairwise_f1"], identical["scus_identical"]) == (1.0, scus), (
        "two annotators' identical pyramids agree fully"
    )
    assert len(pairs) == 2 and all(p["scus_identical"] == scus - 1 for p in pairs.values())
    page = _client(people.coord).get(link)
    assert page.status_code == 200 and "alice.pyr" in page.content.decode()
    before = state()
    again = post(_client(people.coord), people.dataset, files)
    assert again.status_code == 200 and state() == before, "the same set again adds nothing"


@pytest.mark.parametrize(
    ("files", "topic", "message"),
    [
        ({"alice.pyr": PYR, "other.pyr": two_texts()}, "EVENT", "other.pyr: 2 references, the first pyramid has 3"),
        ({"alice.pyr": PYR, "1.T0001.M.100.A.1.pan": PAN}, "EVENT", "a set holds pyramids (.pyr) only"),
        ({"alice.pyr": PYR}, "EVENT", "two or more pyramids"),
        ({"alice.pyr": PYR, "broken.pyr": PYR[:300]}, "EVENT", "broken.pyr"),
        ({"alice.pyr": PYR, "bob.pyr": PYR}, "", "Name the topic"),
        ({"alice.pyr": PYR, "bob.pyr": PYR}, "x" * 101, "at most 100 characters"),
        ({"alice.pyr": PYR, "notes.txt": b"hello"}, "EVENT", "only .pyr and .pan files"),
    ],
)
def test_a_bad_set_writes_nothing_and_says_what_is_wrong(people, files, topic, message):
    before = state()
    response = post(_client(people.coord), people.dataset, files, topic)
    assert response.status_code == 400
    assert message in response.content.decode().replace("&#x27;", "'"), response.content.decode()[-3000:]
    assert state() == before


def test_a_file_the_import_itself_rejects_takes_the_whole_set_back(people, settings):
    """A file that reads and lies on the first file's texts, but that the import refuses (a label
    over LABEL_MAX_LENGTH), after the files before it were written: none of them stays."""
    settings.LABEL_MAX_LENGTH = 60
    pyramid, _ = formats.parse_pyramid(PYR)
    long = formats.write_pyramid(
        dataclasses.replace(pyramid, scus=[dataclasses.replace(pyramid.scus[0], label="x" * 61), *pyramid.scus[1:]])
    )
    before = state()
    response = post(_client(people.coord), people.dataset, {"alice.pyr": PYR, "bob.pyr": PYR, "zed.pyr": long})
    assert response.status_code == 400 and "zed.pyr" in response.content.decode(), response.content.decode()[-2000:]
    assert "Nothing of the set was imported" in response.content.decode()
    assert state() == before


def test_only_the_datasets_coordinators_import_a_set(people, settings):
    files = {"alice.pyr": PYR, "bob.pyr": PYR}
    assert post(_client(), people.dataset, files).status_code == 302
    assert post(_client(people.ann), people.dataset, files).status_code == 403
    assert post(_client(people.other), people.dataset, files).status_code == 404
    assert post(_client(people.coord, csrf=True), people.dataset, files).status_code == 403, "CSRF"
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    assert post(_client(people.coord), people.dataset, files).status_code == 413
    assert not Topic.objects.filter(external_id="EVENT").exists()
