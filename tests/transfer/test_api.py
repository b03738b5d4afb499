"""Moving data in and out: DUCView uploads, SacreROUGE JSON lines, the dataset archive.

The SacreROUGE files are read back with ``SacreRouge`` below, a small reader that follows
SacreROUGE's own code field by field (``sacrerouge/data/pyramid.py`` and
``sacrerouge/metrics/pyramid_score.py`` of github.com/danieldeutsch/sacrerouge), and its scores are
compared with ``scoring.scores`` under ``Convention.SACREROUGE``.
"""

import inspect
import io
import json
import math
import re
import zipfile
from collections import Counter
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from annotation.api import renderers
from annotation.corpus.models import Dataset, PeerSummary, Topic
from annotation.peers import results
from annotation.peers.demo import load_demo
from annotation.peers.models import PeerAnnotation, PeerMatch, PeerMatchPart
from annotation.peers.scoring_inputs import load_annotations
from annotation.pyramids.models import SCU, Contributor, ContributorPart, Pyramid
from annotation.pyramids.scoring_inputs import load_pyramids
from annotation.transfer import api, sacrerouge_export, uploads
from annotation.transfer.archive import annotator_numbers
from scoring.model import Convention
from scoring.scores import reference_annotation, score_peer, score_reference

from tests.api.world import client_for
from tests.conftest import shared_data

FIXTURES = Path(__file__).resolve().parent.parent / "formats" / "fixtures"
PYR = (FIXTURES / "event.pyr").read_bytes()
PAN = (FIXTURES / "event.pan").read_bytes()
PYR_NAME, PAN_NAME = "D0999.pyr", "1.D0999.M.100.A.1.pan"  # the fixtures' own names are not NIST names


def upload(name: str, data: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data)


def zipped(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()


def import_url(dataset) -> str:
    return f"/api/datasets/{dataset.pk}/import/"


def post_files(client, dataset, *files):
    return client.post(import_url(dataset), {"files": list(files)}, format="multipart")


def counts() -> tuple[int, ...]:
    return tuple(
        model.objects.count() for model in (Topic, Pyramid, SCU, Contributor, PeerSummary, PeerAnnotation, PeerMatch)
    )


# --- Imports by upload ------------------------------------------------------------------------


def test_upload_imports_the_files_and_reports(world, as_user):
    response = post_files(as_user("coord"), world.d1, upload(PYR_NAME, PYR), upload(PAN_NAME, PAN))
    assert response.status_code == 200, response.content
    report = response.json()
    assert (
        report["files"],
        report["topics"],
        report["pyramids_created"],
        report["scus"],
        report["annotations_created"],
    ) == (2, 1, 1, 6, 1)
    assert report["rejected"] == [] and report["ignored"] == []
    topic = Topic.objects.get(dataset=world.d1, external_id="D0999")
    pyramid = topic.pyramids.get()
    assert sorted(pyramid.scus.values_list("uid", flat=True)) == [3, 4, 7, 11, 25, 30]
    annotation = PeerAnnotation.objects.get(pyramid=pyramid)
    assert (annotation.peer.external_id, annotation.annotator.username) == ("1", "1")
    assert annotation.matches.filter(scu__isnull=True).count() == 1  # the non-matching unit


def test_reupload_adds_nothing(world, as_user):
    client = as_user("coord")
    post_files(client, world.d1, upload(PYR_NAME, PYR), upload(PAN_NAME, PAN))
    before = counts()
    report = post_files(client, world.d1, upload(PAN_NAME, PAN), upload(PYR_NAME, PYR)).json()
    assert (
        report["pyramids_created"],
        report["pyramids_reused"],
        report["annotations_created"],
        report["annotations_existing"],
    ) == (0, 1, 0, 1)
    assert counts() == before


def test_zip_upload_ignores_other_members(world, as_user):
    data = zipped(
        {
            f"duc/pyramids/{PYR_NAME}": PYR,
            f"duc/pans/{PAN_NAME}": PAN,
            "duc/scores.csv": b"a,b\n",
            "__MACOSX/duc/._D0999.pyr": b"\0",
        }
    )
    report = post_files(as_user("admin"), world.d1, upload("duc.zip", data)).json()
    assert (report["files"], report["pyramids_created"], report["annotations_created"], report["rejected"]) == (
        2,
        1,
        1,
        [],
    )
    assert report["ignored"] == [
        "duc.zip/duc/scores.csv: not a .pyr or .pan file",
        "duc.zip/__MACOSX/duc/._D0999.pyr: macOS metadata",
    ]


def test_hostile_file_is_rejected_and_writes_nothing(world, as_user):
    before = counts()
    hostile = (FIXTURES / "hostile_billion_laughs.pyr").read_bytes()
    response = post_files(
        as_user("coord"),
        world.d1,
        upload("D0998.pyr", hostile),
        upload("D0997.pyr", (FIXTURES / "hostile_xxe.pyr").read_bytes()),
    )
    assert response.status_code == 400
    report = response.json()
    assert len(report["rejected"]) == 2 and report["rejected"][0].startswith("D0997.pyr: ")
    assert report["detail"] == "2 of 2 files were rejected (see 'rejected'); each of the others was imported whole."
    assert counts() == before


def test_some_files_rejected_is_a_400_listing_every_files_fate(world, as_user):
    bad_uid = PYR.replace(b'uid="4"', b'uid="2147483648"', 1)
    response = post_files(
        as_user("coord"), world.d1, upload(PYR_NAME, PYR), upload("D0998.pyr", bad_uid), upload(PAN_NAME, PAN)
    )
    assert response.status_code == 400, response.content
    report = response.json()
    fates = {o["file"]: (o["status"], o["reason"]) for o in report["outcomes"]}
    assert fates[PYR_NAME] == ("imported", "") and fates[PAN_NAME] == ("imported", "")
    assert fates["D0998.pyr"][0] == "rejected" and "uid 2147483648 is out of range" in fates["D0998.pyr"][1]
    assert report["detail"].startswith("1 of 3 files was rejected")
    assert not Topic.objects.filter(external_id="D0998").exists()
    assert PeerAnnotation.objects.filter(pyramid__topic__external_id="D0999").count() == 1


def test_any_file_name_imports_with_names_from_the_content_and_the_stem(world, as_user):
    response = post_files(as_user("coord"), world.d1, upload("event_2006.pyr", PYR), upload("my peer.pan", PAN))
    assert response.status_code == 200, response.content
    report = response.json()
    assert [
        (o["file"], o["status"], o["topic"], o["topic_from"], o["peer"], o["peer_from"]) for o in report["outcomes"]
    ] == [
        ("event_2006.pyr", "imported", "T0001", "content", None, None),
        ("my peer.pan", "imported", "T0001", "content", "my peer", "file stem"),
    ]
    annotation = PeerAnnotation.objects.get(pyramid__topic__external_id="T0001")
    assert (annotation.peer.topic.external_id, annotation.peer.external_id, annotation.annotator) == (
        "T0001",
        "my peer",
        None,
    )


def refused(response, fragment: str) -> None:
    assert response.status_code == 400, response.content
    message = response.json()["files"][0]
    assert fragment in message and "nothing was imported" in message, message


@pytest.mark.parametrize("member", ["../D0999.pyr", "/tmp/D0999.pyr", "a/../../D0999.pyr", "C:\\temp\\D0999.pyr"])
def test_path_traversal_is_refused(world, as_user, member):
    before = counts()
    # The unsafe member comes last: nothing before it may be imported either.
    data = zipped({PYR_NAME: PYR, member: PYR})
    refused(post_files(as_user("coord"), world.d1, upload("bad.zip", data)), "not allowed in an archive")
    assert counts() == before


def test_zip_bomb_is_refused(world, as_user, settings):
    settings.IMPORT_MAX_BYTES = 256 * 1024
    bomb = zipped({PYR_NAME: PYR, "D0998.pyr": b"<" + b" " * (10 * 1024 * 1024)})  # 10 MiB of blanks: ~10 KiB zipped
    assert len(bomb) < 64 * 1024
    before = counts()
    refused(
        post_files(as_user("coord"), world.d1, upload("bomb.zip", bomb)),
        "larger than the 0.2 MiB a DUCView file may have",
    )
    assert counts() == before


def test_zip_bomb_with_a_lying_size_is_refused(world, as_user, settings):
    """The sizes a zip declares are not trusted (zipfile stops at the declared size, then the CRC fails)."""
    settings.IMPORT_MAX_BYTES = 64 * 1024
    data = bytearray(zipped({"D0998.pyr": b" " * (1024 * 1024)}))
    honest = (1024 * 1024).to_bytes(4, "little")
    data = bytes(data).replace(honest, (100).to_bytes(4, "little"))  # local header and central directory say 100 bytes
    assert zipfile.ZipFile(io.BytesIO(data)).getinfo("D0998.pyr").file_size == 100
    before = counts()
    refused(post_files(as_user("coord"), world.d1, upload("liar.zip", data)), "Bad CRC-32")
    assert counts() == before


def test_too_many_members_and_too_much_in_total_are_refused(world, as_user, settings):
    settings.IMPORT_MAX_ARCHIVE_MEMBERS = 3
    refused(
        post_files(as_user("coord"), world.d1, upload("many.zip", zipped({f"x{i}.txt": b"" for i in range(4)}))),
        "more than 3 entries",
    )
    settings.IMPORT_MAX_ARCHIVE_MEMBERS = 100
    settings.IMPORT_MAX_ARCHIVE_BYTES = 3 * len(PYR)
    members = {f"{i}/D09{i:02d}.pyr": PYR for i in range(4)}
    refused(post_files(as_user("coord"), world.d1, upload("big.zip", zipped(members))), "decompresses to more than")
    assert not Topic.objects.filter(external_id__startswith="D09").exists()


@pytest.mark.parametrize(
    "files,fragment",
    [
        ([("bad.zip", b"this is not a zip")], "not a valid zip archive"),
        ([("notes.txt", b"hello")], "only .pyr and .pan files"),
        ([("nested.zip", zipped({"inner.zip": zipped({PYR_NAME: PYR})}))], "archives inside archives"),
    ],
)
def test_bad_uploads_are_refused_with_a_message(world, as_user, files, fragment):
    before = counts()
    refused(post_files(as_user("coord"), world.d1, upload(PYR_NAME, PYR), *(upload(n, d) for n, d in files)), fragment)
    assert counts() == before


def test_no_files(world, as_user):
    response = as_user("coord").post(import_url(world.d1), {}, format="multipart")
    assert response.status_code == 400 and "No file" in response.json()["files"][0]
    response = as_user("coord").post(import_url(world.d1), {"files": "D0999.pyr"}, format="json")
    assert response.status_code == 415


def test_request_larger_than_the_limit_is_413(world, as_user, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    response = post_files(as_user("coord"), world.d1, upload(PYR_NAME, PYR))
    assert response.status_code == 413 and "DATA_UPLOAD_MAX_MEMORY_SIZE" in response.json()["detail"]
    assert not Topic.objects.filter(external_id="D0999").exists()


@pytest.mark.parametrize(
    "role,code", [("anon", 401), ("alice", 403), ("carol", 403), ("bob", 403), ("other_coord", 404)]
)
def test_only_coordinators_import(world, as_user, role, code):
    before = counts()
    assert post_files(as_user(role), world.d1, upload(PYR_NAME, PYR)).status_code == code
    assert counts() == before


def test_upload_with_a_session_needs_csrf(world):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    client.force_login(world.users["coord"])
    assert client.post(import_url(world.d1), {"files": [upload(PYR_NAME, PYR)]}).status_code == 403
    assert not Topic.objects.filter(external_id="D0999").exists()


# --- SacreROUGE ---------------------------------------------------------------------------------


class SacreRouge:
    """SacreROUGE's pyramid classes, as ``JsonlReader(path, cls)`` (``jsons.loads``) builds them
    from a line: every constructor argument from the key of the same name, nothing else."""

    class Part:
        def __init__(self, text: str, start: int, end: int):
            self.text, self.start, self.end = text, start, end

    class Contributor:
        def __init__(self, summary_index: int, label: str, parts: list):
            self.summary_index, self.label, self.parts = summary_index, label, parts

    class ContributorAnnotation:
        def __init__(self, label: str, parts: list):
            self.label, self.parts = label, parts

    class SCU:
        def __init__(self, scu_id: int, label: str, contributors: list):
            self.scu_id, self.label, self.contributors = scu_id, label, contributors

        def get_weight(self) -> int:
            return len(set(contributor.summary_index for contributor in self.contributors))

    class SCUAnnotation:
        def __init__(self, scu_id: int, label: str, contributors: list):
            self.scu_id, self.label, self.contributors = scu_id, label, contributors

    class Pyramid:
        def __init__(self, instance_id: str, summaries: list, summarizer_ids: list, scus: list):
            self.instance_id, self.summaries, self.summarizer_ids, self.scus = (
                instance_id,
                summaries,
                summarizer_ids,
                scus,
            )

        def remove_summary(self, index: int):
            scus = []
            for scu in self.scus:
                contributors = [
                    SacreRouge.Contributor(c.summary_index - (c.summary_index > index), c.label, c.parts)
                    for c in scu.contributors
                    if c.summary_index != index
                ]
                if contributors:
                    scus.append(SacreRouge.SCU(scu.scu_id, scu.label, contributors))
            return SacreRouge.Pyramid(
                self.instance_id,
                self.summaries[:index] + self.summaries[index + 1 :],
                self.summarizer_ids[:index] + self.summarizer_ids[index + 1 :],
                scus,
            )

        def get_annotation(self, index: int):
            scus = []
            for scu in self.scus:
                contributors = [
                    SacreRouge.ContributorAnnotation(c.label, c.parts)
                    for c in scu.contributors
                    if c.summary_index == index
                ]
                if contributors:
                    scus.append(SacreRouge.SCUAnnotation(scu.scu_id, scu.label, contributors))
            return SacreRouge.PyramidAnnotation(
                self.instance_id, self.summarizer_ids[index], "reference", self.summaries[index], scus
            )

        def get_scu_id_set(self, index: int) -> set:
            return {scu.scu_id for scu in self.scus for c in scu.contributors if c.summary_index == index}

    class PyramidAnnotation:
        def __init__(self, instance_id: str, summarizer_id: str, summarizer_type: str, summary: str, scus: list):
            self.instance_id, self.summarizer_id, self.summarizer_type = instance_id, summarizer_id, summarizer_type
            self.summary, self.scus = summary, scus

    NESTED = {
        "Pyramid": {"scus": "SCU"},
        "SCU": {"contributors": "Contributor"},
        "Contributor": {"parts": "Part"},
        "PyramidAnnotation": {"scus": "SCUAnnotation"},
        "SCUAnnotation": {"contributors": "ContributorAnnotation"},
        "ContributorAnnotation": {"parts": "Part"},
        "Part": {},
    }
    TYPES = {"str": str, "int": int, "list": list}

    @classmethod
    def load(cls, data: dict, name: str):
        klass = getattr(cls, name)
        parameters = list(inspect.signature(klass.__init__).parameters.values())[1:]
        assert list(data) == [p.name for p in parameters], f"{name}: fields {list(data)}"
        arguments = {}
        for p in parameters:
            value = data[p.name]
            assert isinstance(
                value, cls.TYPES[p.annotation if isinstance(p.annotation, str) else p.annotation.__name__]
            ), (name, p.name, value)
            if p.name in cls.NESTED[name]:
                value = [cls.load(item, cls.NESTED[name][p.name]) for item in value]
            arguments[p.name] = value
        return klass(**arguments)

    @classmethod
    def read(cls, jsonl: str, name: str) -> list:
        assert jsonl.endswith("\n")
        return [cls.load(json.loads(line), name) for line in jsonl.splitlines()]

    @staticmethod
    def score(annotation, pyramid) -> float:
        """``PyramidScore.score`` (the ``modified_pyramid_score``)."""
        scu_id_to_weight, weight_to_num_scus = {}, Counter()
        for scu in pyramid.scus:
            weight = scu.get_weight()
            scu_id_to_weight[scu.scu_id] = weight
            weight_to_num_scus[weight] += 1
        total_weight = sum(scu_id_to_weight[scu.scu_id] for scu in annotation.scus if scu.scu_id in scu_id_to_weight)
        total_scus = sum(len(pyramid.get_scu_id_set(i)) for i in range(len(pyramid.summarizer_ids)))
        average_num_scus = total_scus / len(pyramid.summarizer_ids)
        ideal_weight, scus_remaining = 0, int(math.ceil(average_num_scus))
        for weight in sorted(weight_to_num_scus.keys(), reverse=True):
            if scus_remaining <= 0:
                break
            taken = min(scus_remaining, weight_to_num_scus[weight])
            ideal_weight += taken * weight
            scus_remaining -= taken
        return total_weight / ideal_weight

    @classmethod
    def score_jk(cls, annotation, pyramid) -> float:
        """The jackknife of a peer: the mean over the pyramids with one summary removed."""
        n = len(pyramid.summarizer_ids)
        return sum(cls.score(annotation, pyramid.remove_summary(i)) for i in range(n)) / n


def check_parts(summary: str, parts) -> None:
    for part in parts:
        assert summary[part.start : part.end] == part.text and part.text == part.text.strip() and part.text


def check_against_scoring(pyramid: Pyramid) -> int:
    """Export ``pyramid`` and its annotations, read them as SacreROUGE does and compare every score."""
    sr_pyramid = SacreRouge.read(sacrerouge_export.pyramid_jsonl(pyramid), "Pyramid")[0]
    for summary, scu in [(sr_pyramid.summaries[c.summary_index], c) for s in sr_pyramid.scus for c in s.contributors]:
        check_parts(summary, scu.parts)
    ours = load_pyramids([pyramid.pk])[pyramid.pk]
    assert {s.scu_id: s.get_weight() for s in sr_pyramid.scus} == ours.weights(Convention.SACREROUGE)
    assert sr_pyramid.summarizer_ids == list(ours.references)
    for i, ref in enumerate(sr_pyramid.summarizer_ids):  # references against the pyramid of the others
        expected = score_reference(
            ours, ref, reference_annotation(ours, ref, Convention.SACREROUGE), Convention.SACREROUGE
        )
        assert SacreRouge.score(sr_pyramid.get_annotation(i), sr_pyramid.remove_summary(i)) == pytest.approx(
            expected.modified, abs=1e-12
        )
    annotations = list(pyramid.annotations.all())
    inputs = load_annotations(a.pk for a in annotations)
    for annotation in annotations:
        (sr_annotation,) = SacreRouge.read(sacrerouge_export.annotation_jsonl(annotation), "PyramidAnnotation")
        assert sr_annotation.instance_id == sr_pyramid.instance_id, "pyramid-based readers join on instance_id"
        assert sr_annotation.summary == re.sub(r"\s+", " ", annotation.peer.text).strip()
        for scu in sr_annotation.scus:
            assert scu.contributors
            for contributor in scu.contributors:
                check_parts(sr_annotation.summary, contributor.parts)
        expected = score_peer(ours, inputs[annotation.pk], Convention.SACREROUGE)
        assert SacreRouge.score(sr_annotation, sr_pyramid) == pytest.approx(expected.modified, abs=1e-12)
        assert SacreRouge.score_jk(sr_annotation, sr_pyramid) == pytest.approx(expected.modified_jk, abs=1e-12)
    return len(annotations)


def test_sacrerouge_records_have_exactly_sacrerouges_fields(world):
    uploads.import_files([(PYR_NAME, PYR), (PAN_NAME, PAN)], world.d1)
    annotation = PeerAnnotation.objects.get(peer__topic__external_id="D0999")
    pyramid = json.loads(sacrerouge_export.pyramid_jsonl(annotation.pyramid))
    assert list(pyramid) == ["instance_id", "summaries", "summarizer_ids", "scus"]
    assert (pyramid["instance_id"], pyramid["summarizer_ids"]) == ("d0999", ["A", "B", "C"])
    assert pyramid["summaries"][1] == (
        "Heavy wind on Saturday destroyed the fair's main stage in Harrowgate. Organisers said no one was "
        'injured. The fair, which began Friday, draws lanterns & crafts from "all over" the valley.'
    )
    scu25 = next(s for s in pyramid["scus"] if s["scu_id"] == 25)
    assert scu25 == {
        "scu_id": 25,
        "label": "The fair opened on Friday",
        "contributors": [
            {
                "summary_index": 0,
                "label": "The Harrowgate Lantern Fair opened on Friday",
                "parts": [{"text": "The Harrowgate Lantern Fair opened on Friday", "start": 0, "end": 44}],
            },
            {
                "summary_index": 1,
                "label": "The fair...began Friday",
                "parts": [
                    {"text": "The fair", "start": 106, "end": 114},
                    {"text": "began Friday", "start": 122, "end": 134},
                ],
            },
        ],
    }
    record = json.loads(sacrerouge_export.annotation_jsonl(annotation))
    assert list(record) == ["instance_id", "summarizer_id", "summarizer_type", "summary", "scus"]
    assert (record["instance_id"], record["summarizer_id"], record["summarizer_type"]) == ("d0999", "1", "peer")
    assert [(s["scu_id"], len(s["contributors"])) for s in record["scus"]] == [(4, 1), (11, 2), (25, 1)], (
        "repetitions; no non-matching"
    )
    assert record["scus"][1]["label"] == "A storm destroyed the main stage"
    assert check_against_scoring(annotation.pyramid) == 1


def test_sacrerouge_drops_legacy_content_as_its_reader_does(world):
    """SCU 50 has a contributor in two references, SCU 60 two contributors from one: SacreROUGE skips both."""
    report = uploads.import_files([("D0998.pyr", (FIXTURES / "event_repairs.pyr").read_bytes())], world.d1)
    assert report.legacy and not report.rejected
    pyramid = Pyramid.objects.get(topic__external_id="D0998")
    text = "The fair  opened\non Friday in Harrowgate.\n  Wind hit.  "
    peer = PeerSummary.objects.create(topic=pyramid.topic, external_id="7", text=text)

    def span(phrase):
        return text.index(phrase), text.index(phrase) + len(phrase)

    for username in ("x", "y"):
        annotation = PeerAnnotation.objects.create(
            peer=peer, pyramid=pyramid, annotator=User.objects.create_user(username)
        )
        matches = [
            (25, span("The fair  opened\non Friday")),
            (50, span("Harrowgate")),
            (60, span("opened\non Friday")),
            (None, span("Wind hit.")),
        ]
        for uid, (start, end) in matches + ([(25, span("fair"))] if username == "x" else []):
            match = PeerMatch.objects.create(annotation=annotation, scu=pyramid.scus.get(uid=uid) if uid else None)
            PeerMatchPart.objects.create(match=match, start=start, end=end)
    record = json.loads(sacrerouge_export.pyramid_jsonl(pyramid))
    uids = {s["scu_id"] for s in record["scus"]}
    assert 50 not in uids and 60 not in uids and {3, 4, 7, 25}.issubset(uids)
    annotation = json.loads(sacrerouge_export.annotation_jsonl(PeerAnnotation.objects.get(annotator__username="x")))
    assert annotation["summary"] == "The fair opened on Friday in Harrowgate. Wind hit."
    assert [(s["scu_id"], [c["parts"] for c in s["contributors"]]) for s in annotation["scus"]] == [
        (
            25,
            [[{"text": "The fair opened on Friday", "start": 0, "end": 25}], [{"text": "fair", "start": 4, "end": 8}]],
        ),
    ]
    assert check_against_scoring(pyramid) == 2


def test_sacrerouge_matches_scoring_on_the_demo(db):
    load_demo()
    assert check_against_scoring(Pyramid.objects.get(topic__dataset__name="Demo")) == 4


def test_normalisation_maps_spans():
    text = "  A  b\n\tc d  "
    summary = sacrerouge_export.peer_summary(text)
    assert summary.text == "A b c d"
    assert summary.span(0, 3) == (0, 1) and summary.span(2, 6) == (0, 3) and summary.span(3, 5) is None
    assert summary.span(5, 13) == (2, 7)
    reference = sacrerouge_export.reference_summary(" x\ny \n")
    assert reference.text == "x y" and reference.span(1, 4) == (0, 3) and reference.span(4, 6) is None
    assert (
        sacrerouge_export.instance_id("D0801-A") == "d0801-A" and sacrerouge_export.clean_label("Fair (2.1)") == "Fair"
    )


def sacrerouge_wired(kind: str) -> bool:
    viewset = api.PyramidExport if kind == "pyramids" else api.AnnotationExport
    return renderers.SacreRougeRenderer in viewset.export.kwargs.get("renderer_classes", ())


@pytest.mark.parametrize("kind", ["pyramids", "annotations"])
def test_sacrerouge_export_endpoint(world, as_user, kind):
    if not sacrerouge_wired(kind):
        pytest.skip(
            "transfer/api.py does not offer ?format=sacrerouge on this export action yet "
            "(two lines; see sacrerouge_export)"
        )
    obj = world.pyramid if kind == "pyramids" else world.annotation
    response = as_user("alice").get(f"/api/{kind}/{obj.pk}/export/", {"format": "sacrerouge"})
    assert response.status_code == 200 and response["Content-Type"].startswith("application/jsonl")
    expected = sacrerouge_export.pyramid_jsonl(obj) if kind == "pyramids" else sacrerouge_export.annotation_jsonl(obj)
    assert response.content.decode() == expected
    assert response["Content-Disposition"].endswith('.jsonl"')
    assert as_user("bob").get(f"/api/{kind}/{obj.pk}/export/", {"format": "sacrerouge"}).status_code == 404


# --- The dataset archive --------------------------------------------------------------------------


def archive_of(client, dataset, **query):
    response = client.get(f"/api/datasets/{dataset.pk}/archive/", query)
    assert response.status_code == 200, response.json()
    assert response["Content-Type"] == "application/zip" and "attachment" in response["Content-Disposition"]
    assert int(response["Content-Length"]) > 0
    return b"".join(response.streaming_content)


def comparable(rows: list[dict]) -> list[tuple]:
    """Score rows without the dataset's name."""
    return sorted(
        (
            row["topic"],
            row["summary"],
            row["kind"],
            row["annotator"],
            row["modified"],
            row["modified_jk"],
            row["original"],
            row["matched_scus"],
            row["repetitions"],
            row["non_matching"],
            row["observed_weight"],
        )
        for row in rows
    )


def reimport(dataset, data: bytes, coordinator) -> Dataset:
    """The archive uploaded into a new dataset of the same installation, its coordinator attributing
    each name of the archive to the account of that name (``identities``)."""
    from tests.transfer.test_archive_round_trip import own_names

    copy = Dataset.objects.create(name=f"{dataset.name} (copy)")
    copy.coordinators.add(coordinator)
    body = {"files": [upload("archive.zip", data)], "users": "\n".join(own_names(data))}
    response = client_for(coordinator).post(import_url(copy), body, format="multipart")
    assert response.status_code == 200, response.content
    report = response.json()
    assert report["rejected"] == [] and report["ignored"] == [
        "archive.zip/scores.csv: not a .pyr or .pan file",
        "archive.zip/agreement.csv: not a .pyr or .pan file",
    ]
    return copy


def test_archive_holds_the_dataset_and_reimports_to_the_same_scores(db):
    load_demo()
    demo = Dataset.objects.get(name="Demo")
    data = archive_of(client_for(User.objects.get(username="coordinator")), demo)
    archive = zipfile.ZipFile(io.BytesIO(data))
    names = archive.namelist()
    assert names == [
        "pyramids/T01.pyr",  # then alice's (1001) and bob's (1002) annotations, named with the peers' lengths in words
        "pans/1001.T01.M.45.X.1.pan",
        "pans/1002.T01.M.45.X.1.pan",
        "pans/1001.T01.M.22.X.2.pan",
        "pans/1002.T01.M.22.X.2.pan",
        "scores.csv",
        "agreement.csv",
        "manifest.json",
    ]
    manifest = json.loads(archive.read("manifest.json"))
    assert manifest["annotators"] == {"1001": "alice", "1002": "bob"} and manifest["skipped"] == []
    out = io.StringIO()
    call_command("export_scores", "--dataset", "Demo", "--format", "csv", stdout=out)
    assert archive.read("scores.csv").decode() == out.getvalue()
    out = io.StringIO()
    call_command("export_agreement", "--dataset", "Demo", "--format", "csv", stdout=out)
    assert archive.read("agreement.csv").decode() == out.getvalue()

    copy = reimport(demo, data, User.objects.get(username="coordinator"))
    for convention in Convention:
        assert comparable(results.score_rows(copy.topics.all(), convention)) == comparable(
            results.score_rows(demo.topics.all(), convention)
        ), "annotators and pyramid creators keep their names"
        original, again = (
            results.agreement_rows(demo.topics.all(), convention),
            results.agreement_rows(copy.topics.all(), convention),
        )
        keys = (
            "topic",
            "peers",
            "alpha_dice_mean",
            "alpha_dice_pooled",
            "alpha_dice_by_peer",
            "pearson_modified",
            "mean_abs_diff_modified",
        )
        assert [{k: r[k] for k in keys} for r in again] == [{k: r[k] for k in keys} for r in original] and original
    # and the copy's archive holds the same files again (names kept from the imported files)
    again = zipfile.ZipFile(io.BytesIO(archive_of(client_for(User.objects.get(username="coordinator")), copy)))
    assert again.namelist()[:5] == names[:5]
    assert [again.read(n) for n in names[:5]] == [archive.read(n) for n in names[:5]]


def test_archive_of_a_topic_with_several_pyramids(world, as_user):
    second = Pyramid.objects.create(topic=world.t1, creator=world.users["bob"])
    scu = SCU.objects.create(pyramid=second, uid=1, label="Alpha again")
    contributor = Contributor.objects.create(scu=scu, reference=world.refs["A"])
    ContributorPart.objects.create(contributor=contributor, reference=world.refs["A"], start=0, end=5)
    empty = Pyramid.objects.create(topic=world.t1, creator=world.users["bob"])  # no SCU yet: still a valid .pyr
    broken = Pyramid.objects.create(topic=world.t1)
    SCU.objects.create(pyramid=broken, uid=1, label="No contributor")  # DUCView cannot write it
    for pyramid in (second, empty, broken):
        pyramid.references.set(world.refs.values())
    archive = zipfile.ZipFile(io.BytesIO(archive_of(as_user("coord"), world.d1, convention="sacrerouge")))
    manifest = json.loads(archive.read("manifest.json"))
    assert [f["name"] for f in manifest["files"]] == [
        f"pyramids/pyramid-{world.pyramid.pk}/T1.pyr",
        f"pyramids/pyramid-{second.pk}/T1.pyr",
        f"pyramids/pyramid-{empty.pk}/T1.pyr",
        f"pans/pyramid-{world.pyramid.pk}/1001.T1.M.5.X.1.pan",
    ]
    assert [{k: entry[k] for k in ("kind", "id", "topic", "status", "reason")} for entry in manifest["skipped"]] == [
        {
            "kind": "pyramid",
            "id": broken.pk,
            "topic": "T1",
            "status": "draft",
            "reason": "SCU 1: no contributor (DUCView needs at least one)",
        }
    ]
    assert manifest["convention"] == "sacrerouge" and "sacrerouge" in archive.read("scores.csv").decode()


@pytest.mark.parametrize("role,code", [("anon", 401), ("alice", 403), ("other_coord", 404), ("admin", 200)])
def test_only_coordinators_download_the_archive(world, as_user, role, code):
    assert as_user(role).get(f"/api/datasets/{world.d1.pk}/archive/").status_code == code


def test_archive_bad_convention(world, as_user):
    response = as_user("coord").get(f"/api/datasets/{world.d1.pk}/archive/", {"convention": "duc"})
    assert response.status_code == 400 and "convention" in response.json()


def test_annotator_numbers():
    assert annotator_numbers(["114", "alice", "1001", "bob", "115"]) == {
        "114": "114",
        "115": "115",
        "1001": "1001",
        "alice": "1002",
        "bob": "1003",
    }


@pytest.mark.realdata
def test_duc_topic_round_trip_and_sacrerouge(db):
    """D0631 (DUC 2006): 44 annotations by two annotators and SCU 237's cross-reference contributor."""
    d2006 = shared_data("duc2006")
    files = [d2006 / "allpyramids" / "D0631.pyr", *sorted((d2006 / "allpans").glob("*.D0631.*.pan"))]
    coordinator = User.objects.create_user("chief")
    dataset = Dataset.objects.create(name="DUC 2006 D0631")
    dataset.coordinators.add(coordinator)
    client = client_for(coordinator)
    report = post_files(
        client, dataset, upload("d0631.zip", zipped({f"D0631/{p.name}": p.read_bytes() for p in files}))
    ).json()
    assert (report["annotations_created"], report["rejected"]) == (44, []) and report["legacy"]
    pyramid = Pyramid.objects.get(topic__dataset=dataset)
    assert check_against_scoring(pyramid) == 44
    data = archive_of(client, dataset)
    names = zipfile.ZipFile(io.BytesIO(data)).namelist()
    assert "pans/114.D0631.M.250.D.10.pan" in names, "original NIST names are kept"
    copy = reimport(dataset, data, coordinator)
    assert comparable(results.score_rows(copy.topics.all())) == comparable(results.score_rows(dataset.topics.all()))
