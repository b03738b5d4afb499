"""What makes an imported file "the same again" (``formats.same_again``): the same content from
the same origin (the annotator or creator when something names one, else the file's name).

Importing the same files again adds nothing, whatever annotator table comes with them, in every
shape (``.pan`` files, a zip of them, a dataset archive) and through every path (``import_ducview``,
the *Import DUCView* page, ``POST /api/datasets/{id}/import/``); two annotators' identical pyramids
stay two, and their construction agreement is 1."""

import io
import zipfile
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotation.corpus.models import Dataset, Topic
from annotation.formats import Origin, origin, same_again, same_origin
from annotation.peers.models import PeerAnnotation
from annotation.pyramids.construction import compute
from annotation.pyramids.models import Pyramid
from annotation.transfer.archive import build_archive
from annotation.transfer.pyramid_sets import import_pyramid_set

from tests.api.world import client_for

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parent.parent / "formats" / "fixtures"
PYR = (FIXTURES / "event.pyr").read_bytes()
PAN = (FIXTURES / "event.pan").read_bytes()
PEERS = ("1", "2", "3")
# DUC 2007's names: no annotator in them; the table says who annotated the topic's peers.
FILES = {"D0999.pyr": PYR, **{f"D0999.M.100.A.{peer}.pan": PAN for peer in PEERS}}
TABLE = b"D0999\t201\n"


def test_the_rule():
    alice, bob = Origin("alice", "a.pan"), Origin("bob", "a.pan")
    assert not same_origin(alice, bob), "two annotators' files are two, whatever their names"
    assert same_origin(alice, Origin("alice", "b.pan")), "one annotator's file renamed"
    assert same_origin(alice, Origin(None, "a.pan")) and same_origin(Origin(None, "a.pan"), alice), "the table left out"
    assert not same_origin(alice, Origin(None, "b.pan")) and not same_origin(
        Origin(None, "a.pyr"), Origin(None, "b.pyr")
    )
    assert not same_origin(Origin(None, ""), Origin(None, "a.pyr")), "made here is no file"
    assert same_origin(Origin(None, None), Origin("carol", "x.pyr")), (
        "a .pan's copy of its pyramid has no file of its own"
    )
    assert same_again(alice, (1,), Origin(None, "a.pan"), (1,)) and not same_again(
        alice, (1,), Origin(None, "a.pan"), (2,)
    )
    # within one import (one root), a file's folders tell two files of one name apart; across
    # imports the same file comes under other folders (a zip's, a set's root, an archive's layout)
    alice_set, bob_set = origin(None, "alice/D0601.pyr"), origin(None, "set\\bob/./D0601.pyr")
    assert bob_set == Origin(None, "set/bob/D0601.pyr")
    assert not same_origin(alice_set, bob_set, one_import=True) and same_origin(alice_set, alice_set, one_import=True)
    assert same_origin(alice_set, bob_set) and same_origin(origin(None, "pans/a.pan"), origin(None, "duc/a.pan"))


# --- the three paths, each importing (name, bytes) files with or without the table -----------


def coordinator(dataset: Dataset) -> User:
    user = User.objects.get_or_create(username="coord")[0]
    dataset.coordinators.add(user)
    return user


def zipped(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()


def by_command(dataset, files, table, tmp_path):
    folder = tmp_path / f"run{len(list(tmp_path.iterdir()))}"
    folder.mkdir()
    for name, data in files.items():
        (folder / name).write_bytes(data)
    options = {"dataset": dataset.name}
    if table:
        (folder / "table.txt").write_bytes(table)
        options["annotators"] = str(folder / "table.txt")
    zips = [name for name in files if name.endswith(".zip")]
    call_command(
        "import_ducview",
        *([str(folder / zips[0])] if zips else [str(folder / name) for name in files]),
        stdout=io.StringIO(),
        **options,
    )


def by_page(dataset, files, table, tmp_path):
    client = Client()
    client.force_login(coordinator(dataset))
    data = {"files": [SimpleUploadedFile(name, content) for name, content in files.items()]}
    if table:
        data["annotators"] = SimpleUploadedFile("annotator-table.txt", table)
    response = client.post(reverse("setup:ducview", args=[dataset.pk]), data)
    assert response.status_code == 200, response.content.decode()[:2000]


def by_api(dataset, files, table, tmp_path):
    data = {"files": [SimpleUploadedFile(name, content) for name, content in files.items()]}
    if table:
        data["annotators"] = SimpleUploadedFile("annotator-table.txt", table)
    response = client_for(coordinator(dataset)).post(f"/api/datasets/{dataset.pk}/import/", data, format="multipart")
    assert response.status_code == 200, response.content


PATHS = {"command": by_command, "page": by_page, "api": by_api}


def shaped(shape: str, source_annotator: str | None) -> dict[str, bytes]:
    """The files in ``shape``: one by one, one zip, or the dataset archive of a dataset holding them
    (its annotations by ``source_annotator``)."""
    if shape == "pan":
        return dict(FILES)
    if shape == "zip":
        return {"duc.zip": zipped({f"duc/{name}": data for name, data in FILES.items()})}
    source = Dataset.objects.create(name=f"source-{source_annotator}")
    by_api(source, FILES, TABLE if source_annotator else None, None)
    spool, _ = build_archive(
        source,
        Pyramid.objects.filter(topic__dataset=source),
        PeerAnnotation.objects.filter(pyramid__topic__dataset=source),
    )
    return {"source-archive.zip": spool.read()}


def annotations(dataset) -> list[tuple[str, str | None]]:
    return sorted(
        (a.peer.external_id, a.annotator.username if a.annotator else None)
        for a in PeerAnnotation.objects.filter(pyramid__topic__dataset=dataset).select_related("peer", "annotator")
    )


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("shape", ["pan", "zip", "archive"])
@pytest.mark.parametrize("table_first", [True, False], ids=["table-then-none", "none-then-table"])
def test_importing_the_same_files_again_adds_nothing_whatever_table_comes_with_them(path, shape, table_first, tmp_path):
    dataset = Dataset.objects.create(name="target")
    files = shaped(shape, "201")
    PATHS[path](dataset, files, TABLE if table_first else None, tmp_path)
    first = annotations(dataset)
    # An archive says its annotators itself (its manifest); the others, the table or nobody.
    expected = "201" if table_first or shape == "archive" else None
    assert first == [(peer, expected) for peer in PEERS]
    pyramids = list(Pyramid.objects.filter(topic__dataset=dataset).values_list("pk", flat=True))
    PATHS[path](dataset, files, None if table_first else TABLE, tmp_path)
    assert annotations(dataset) == first, "every peer once, by the annotator of the first import"
    assert list(Pyramid.objects.filter(topic__dataset=dataset).values_list("pk", flat=True)) == pyramids == pyramids[:1]


@pytest.mark.parametrize("path", PATHS)
def test_an_archive_and_the_files_it_holds_are_the_same_again_in_any_order(path, tmp_path):
    """The archive of a dataset whose annotators nobody named, over the zip imported with the
    table (the archive's .pan files keep their NIST names: the same files); and the other way round."""
    for order, dataset in enumerate(Dataset.objects.create(name=f"target{i}") for i in range(2)):
        steps = [(shaped("zip", None), TABLE), (shaped("archive", None), None)]
        for files, table in steps if order == 0 else steps[::-1]:
            PATHS[path](dataset, files, table, tmp_path)
        expected = "201" if order == 0 else None  # who the first import said
        assert annotations(dataset) == [(peer, expected) for peer in PEERS]
        Dataset.objects.filter(name__startswith="source").delete()


def test_the_same_file_with_other_matches_is_refused_with_or_without_the_table():
    """Same origin (the file's name, the annotator unknown on one side), other content: two
    versions are never merged, nor stored side by side."""
    dataset = Dataset.objects.create(name="target")
    by_api(dataset, FILES, TABLE, None)
    other = PAN.replace(
        b"""  <contributor label="a storm also flattened tents" comment="same storm, second mention">
   <part label="a storm also flattened tents" start="89" end="117"/>
  </contributor>
""",
        b"",
    )  # the repetition left out
    assert other != PAN
    response = client_for(coordinator(dataset)).post(
        f"/api/datasets/{dataset.pk}/import/",
        {"files": [SimpleUploadedFile("D0999.M.100.A.1.pan", other)]},
        format="multipart",
    )
    assert (
        response.status_code == 400 and "already has an annotation by annotator 201" in response.json()["rejected"][0]
    )
    assert annotations(dataset) == [(peer, "201") for peer in PEERS]


# --- pyramids --------------------------------------------------------------------------------


@pytest.mark.parametrize("path", PATHS)
def test_two_annotators_identical_pyramids_are_two_and_agree_fully(path, tmp_path):
    dataset = Dataset.objects.create(name="matter")
    PATHS[path](dataset, {"alice_EVENT.pyr": PYR, "bob_EVENT.pyr": PYR}, None, tmp_path)
    topic = Topic.objects.get(dataset=dataset)  # T0001, from the reference headers
    assert sorted(topic.pyramids.values_list("source", flat=True)) == ["alice_EVENT.pyr", "bob_EVENT.pyr"]
    PATHS[path](dataset, {"alice_EVENT.pyr": PYR, "bob_EVENT.pyr": PYR}, TABLE, tmp_path)
    assert topic.pyramids.count() == 2, "each file again is its own pyramid again"
    values, _ = compute(topic)
    (pair,) = values["pairs"]
    scus = topic.pyramids.first().scus.count()
    assert (pair["pairwise_f1"], pair["bcubed_f1"], pair["scus_identical"], pair["scus_a"], pair["scus_b"]) == (
        1.0,
        1.0,
        scus,
        scus,
        scus,
    )
    assert pair["mean_dice"] == 1.0 and pair["weight_equal_share"] == 1.0


@pytest.mark.parametrize("path", PATHS)
def test_two_identical_pyramids_stay_two_through_a_dataset_archive(path, tmp_path):
    """Each kept its own source in the archive's manifest (``pyramids/pyramid-N/``): the archive
    imported into another dataset, then again, gives the two pyramids once each."""
    source = Dataset.objects.create(name="source")
    by_api(source, {"alice_EVENT.pyr": PYR, "bob_EVENT.pyr": PYR}, None, None)
    spool, _ = build_archive(source, Pyramid.objects.filter(topic__dataset=source), PeerAnnotation.objects.none())
    archive = {"source-archive.zip": spool.read()}
    copy = Dataset.objects.create(name="copy")
    for _ in range(2):
        PATHS[path](copy, archive, None, tmp_path)
        assert sorted(Pyramid.objects.filter(topic__dataset=copy).values_list("source", flat=True)) == [
            "alice_EVENT.pyr",
            "bob_EVENT.pyr",
        ]


@pytest.mark.parametrize("path", PATHS)
def test_annotations_stay_on_the_identical_pyramid_they_were_made_against_through_an_archive(path, tmp_path):
    """Alice's and Bob's identical pyramids of one topic, each with its own annotator's annotation
    of peer 1 (201 against Alice's, 202 against Bob's): the dataset archive imported gives each
    annotation on the copy of its own pyramid, by its own annotator; imported again, nothing more."""
    from annotation.peers.editing import add_match
    from annotation.pyramids.models import SCU

    source = Dataset.objects.create(name="source")
    by_api(source, {"alice_EVENT.pyr": PYR, "bob_EVENT.pyr": PYR, "201.T0001.M.100.A.1.pan": PAN}, None, None)
    alice, bob = Pyramid.objects.filter(topic__dataset=source).order_by("source")
    Pyramid.objects.filter(pk=alice.pk).update(creator=User.objects.create_user("alice"))
    Pyramid.objects.filter(pk=bob.pk).update(creator=User.objects.create_user("bob"))
    first = PeerAnnotation.objects.get(pyramid__topic__dataset=source)
    assert first.pyramid == alice
    second = PeerAnnotation.objects.create(
        peer=first.peer, pyramid=bob, annotator=User.objects.create_user("202"), status="done"
    )
    add_match(second, SCU.objects.filter(pyramid=bob).order_by("uid").last(), [(0, 5)])
    spool, _ = build_archive(
        source,
        Pyramid.objects.filter(topic__dataset=source),
        PeerAnnotation.objects.filter(pyramid__topic__dataset=source),
    )
    archive = {"source-archive.zip": spool.read()}
    copy = Dataset.objects.create(name="copy")

    def made_against() -> list[tuple[str, str, int]]:
        """(annotator, creator of its pyramid, matches) of each annotation, as the archive named them."""
        return sorted(
            (a.annotator.username.split("@")[0], a.pyramid.creator.username.split("@")[0], a.matches.count())
            for a in PeerAnnotation.objects.filter(pyramid__topic__dataset=copy).select_related(
                "annotator", "pyramid__creator"
            )
        )

    PATHS[path](copy, archive, None, tmp_path)
    assert Pyramid.objects.filter(topic__dataset=copy).count() == 2
    expected = [("201", "alice", first.matches.count()), ("202", "bob", 1)]
    assert made_against() == expected
    PATHS[path](copy, archive, None, tmp_path)
    assert Pyramid.objects.filter(topic__dataset=copy).count() == 2 and made_against() == expected, (
        "again: nothing more"
    )


def test_a_pan_attaches_to_an_identical_pyramid_whatever_its_file():
    """A .pan's copy of its pyramid is the pyramid it was annotated on, not a pyramid file: it goes
    onto the topic's identical pyramid (the first stored) and never makes a third."""
    dataset = Dataset.objects.create(name="matter")
    by_api(dataset, {"alice_EVENT.pyr": PYR, "bob_EVENT.pyr": PYR}, None, None)
    by_api(dataset, {"1.T0001.M.100.A.1.pan": PAN}, None, None)
    assert Pyramid.objects.filter(topic__dataset=dataset).count() == 2
    assert PeerAnnotation.objects.get(pyramid__topic__dataset=dataset).pyramid.source == "alice_EVENT.pyr"
    # and the other way round: a pyramid stored from a .pan's copy is claimed by its file
    other = Dataset.objects.create(name="other")
    by_api(other, {"1.T0001.M.100.A.1.pan": PAN}, None, None)
    by_api(other, {"T0001.pyr": PYR}, None, None)
    assert Pyramid.objects.filter(topic__dataset=other).count() == 1


# --- pyramid sets: a file's origin is its path in the set -----------------------------------


def test_a_sets_pyramids_of_one_name_in_two_folders_are_two(tmp_path):
    """``alice/D0601.pyr`` and ``bob/D0601.pyr`` (identical), ``carol/`` and ``dave/`` (identical,
    other than alice's), no annotator named: four pyramids, through the command and the page (a
    zip keeps the folders). The same set again adds nothing, from the set's folder, from one file
    of it (its path ends theirs) or from a zip that puts the set in a folder of its own."""
    from tests.frontend.setup.test_pyramid_set import other_annotator, post

    members = {
        "alice/D0601.pyr": PYR,
        "bob/D0601.pyr": PYR,
        "carol/D0601.pyr": other_annotator(),
        "dave/D0601.pyr": other_annotator(),
    }
    dataset = Dataset.objects.create(name="sets")
    root = tmp_path / "set"
    for name, data in members.items():
        (root / name).parent.mkdir(parents=True)
        (root / name).write_bytes(data)
    out = io.StringIO()
    call_command("import_pyramid_set", str(root), dataset=dataset.name, topic="EVENT", stdout=out)
    topic = Topic.objects.get(dataset=dataset, external_id="EVENT")
    assert sorted(topic.pyramids.values_list("source", flat=True)) == sorted(members)
    stored = sorted(topic.pyramids.values_list("pk", flat=True))
    again = import_pyramid_set([root], dataset.name, "EVENT")
    assert {o["file"]: o["pyramid"] for o in again.outcomes} == {p.source: p.pk for p in topic.pyramids.all()}, (
        "each file is its own pyramid again"
    )
    call_command("import_pyramid_set", str(root / "bob" / "D0601.pyr"), dataset=dataset.name, topic="EVENT", stdout=out)
    client = Client()
    client.force_login(coordinator(dataset))
    response = post(client, dataset, {"set.zip": zipped({f"MATTER/{name}": data for name, data in members.items()})})
    assert response.status_code == 200, response.content.decode()
    assert sorted(topic.pyramids.values_list("pk", flat=True)) == stored, "the same set again adds nothing"
    # the page, into another dataset: the zip's folders tell the files apart
    other = Dataset.objects.create(name="other")
    coordinator(other)
    assert post(client, other, {"set.zip": zipped(members)}).status_code == 200
    assert sorted(Pyramid.objects.filter(topic__dataset=other).values_list("source", flat=True)) == sorted(members)


@pytest.mark.realdata
def test_duc_2007_zip_with_its_table_then_without_adds_nothing(tmp_path):
    """The report's case: three DUC 2007 topics zipped (their pyramids and .pan files), imported with
    ``annotator-table.txt``, then the same zip without it: no new annotation, every peer once."""
    from tests.conftest import shared_data

    root = shared_data("duc2007-main")
    topics = ("D0701", "D0703", "D0704")
    members = {
        f"duc2007/allpyramids/{p.name}": p.read_bytes()
        for p in sorted((root / "allpyramids").glob("*.pyr"))
        if p.name.startswith(topics)
    }
    members |= {
        f"duc2007/allpans/{p.name}": p.read_bytes()
        for p in sorted((root / "allpans").glob("*.pan"))
        if p.name.startswith(topics)
    }
    table = (root / "annotator-table.txt").read_bytes()
    dataset = Dataset.objects.create(name="duc2007")
    client = client_for(coordinator(dataset))

    def upload(with_table: bool) -> dict:
        data = {"files": [SimpleUploadedFile("duc2007.zip", zipped(members))]}
        if with_table:
            data["annotators"] = SimpleUploadedFile("annotator-table.txt", table)
        response = client.post(f"/api/datasets/{dataset.pk}/import/", data, format="multipart")
        assert response.status_code == 200, response.json().get("rejected")
        return response.json()

    first = upload(True)
    pans = sum(name.endswith(".pan") for name in members)
    assert first["annotations_created"] == pans > 30
    stored = annotations(dataset)
    assert len(stored) == pans and all(who is not None for _, who in stored), "the table names every annotator"
    again = upload(False)
    assert (again["annotations_created"], again["annotations_existing"], again["pyramids_created"]) == (0, pans, 0)
    assert annotations(dataset) == stored
