"""Importing judgments: CSV and DUC score tables, every bad row reported, all or nothing."""

import pytest
from django.contrib import admin
from django.test import override_settings
from django.urls import path, reverse

from annotation.corpus.models import PeerSummary
from annotation.dashboards.judgments import (
    JudgmentImportError,
    import_duc_table,
    parse_duc_table,
    read_duc_header,
)
from annotation.dashboards.models import Judgment

from tests.dashboards import toy
from tests.dashboards.judged import import_judgments_csv

pytestmark = pytest.mark.django_db


@pytest.fixture
def dataset():
    return toy.build()


def stored():
    return {(j.topic.external_id, j.summary, j.metric): j.value for j in Judgment.objects.select_related("topic")}


def test_csv_import_and_reimport(dataset):
    text = "topic,summary,metric,value\nT1,1,content,3\nT1,A,content,5\nT2,01,content,2.5\nT2,3,rouge_2,0.08\n"
    result = import_judgments_csv(dataset, text, source="judged.csv")
    assert (result.created, result.updated, result.unchanged) == (4, 0, 0)
    assert result.metrics == ("content", "rouge_2")
    # "01" names peer "1" (ids compared as numbers) and is stored as the peer's own id; A is a reference.
    assert stored() == {
        ("T1", "1", "content"): 3,
        ("T1", "A", "content"): 5,
        ("T2", "1", "content"): 2.5,
        ("T2", "3", "rouge_2"): 0.08,
    }
    assert set(Judgment.objects.values_list("source", flat=True)) == {"judged.csv"}
    again = import_judgments_csv(
        dataset, "value,metric,summary,topic,note\n4,content,1,T1,x\n5,content,A,T1,\n", "judged.csv"
    )
    assert (again.created, again.updated, again.unchanged) == (0, 1, 1)
    assert stored()[("T1", "1", "content")] == 4 and Judgment.objects.count() == 4


def test_every_bad_row_is_reported_and_nothing_is_written(dataset):
    text = (
        "topic,summary,metric,value\n"
        "T1,1,content,3\n"  # 2 fine
        "T9,1,content,3\n"  # 3 a topic of another dataset: skipped, not an error
        "T1,7,content,3\n"  # 4 unknown summary: cannot be placed, not malformed
        "T1,2,,abc\n"  # 5 empty metric and bad value
        "T1,2,content,nan\n"  # 6 not finite
        "T1,2\n"  # 7 too few fields
        "\n"  # 8 blank: ignored
        "T1,01,content,2\n"  # 9 conflicts with line 2 (01 = 1)
        "T1,3,content,1\n"  # 10 fine
        "T1,3,content,1\n"  # 11 same value again: accepted once
    )
    with pytest.raises(JudgmentImportError) as error:
        import_judgments_csv(dataset, text)
    lines = [e.split(":")[0] for e in error.value.errors]
    assert lines == ["line 5", "line 6", "line 7", "line 9"]  # a malformed file is refused whole
    messages = "\n".join(error.value.errors)
    assert "T9" not in messages and "'7'" not in messages
    assert "metric is empty; value 'abc' is not a finite number" in messages
    assert "but line 2 gives 3" in messages
    assert "4 problems, nothing imported" in str(error.value)
    assert Judgment.objects.count() == 0


def test_rows_that_cannot_be_placed_are_left_and_the_rest_imported(dataset):
    PeerSummary.objects.create(topic=dataset.topics.get(external_id="T1"), external_id="A", text="peer A")
    text = (
        "topic,summary,metric,value\n"
        "T1,1,content,3\n"  # 2 placed
        "T1,7,content,3\n"  # 3 T1 has no summary 7
        "T1,A,content,3\n"  # 4 A is a peer and a reference of T1
        "T9,1,content,3\n"  # 5 not a topic of the dataset
        "T1,7,rouge,0.1\n"  # 6 T1 has no summary 7
        "T2,3,content,2\n"
    )  # 7 placed
    result = import_judgments_csv(dataset, text, "partial.csv")
    assert stored() == {("T1", "1", "content"): 3, ("T2", "3", "content"): 2}
    assert (result.created, result.left_rows, result.skipped_rows, result.skipped_topics) == (2, 3, 1, ("T9",))
    assert result.left == (
        "lines 3, 6: topic T1 has no peer or reference summary '7'",
        "line 4: 'A' names both a peer and a reference of topic T1",
    )
    assert result.left_text.startswith("3 rows not placed: lines 3, 6: topic T1 has no peer or reference summary '7'; ")


def test_csv_header_is_required(dataset):
    with pytest.raises(JudgmentImportError, match="missing: metric"):
        import_judgments_csv(dataset, "topic,summary,score,value\nT1,1,content,3\n")
    with pytest.raises(JudgmentImportError, match="missing"):
        import_judgments_csv(dataset, "")
    with pytest.raises(JudgmentImportError, match="no dataset named 'Nope'"):
        import_judgments_csv("Nope", "topic,summary,metric,value\nT1,1,content,3\n")


def test_a_file_of_ambiguous_summary_ids_only_is_refused(dataset):
    PeerSummary.objects.create(topic=dataset.topics.get(external_id="T1"), external_id="A", text="peer A")
    with pytest.raises(JudgmentImportError, match="names both a peer and a reference"):
        import_judgments_csv(dataset.name, "topic,summary,metric,value\nT1,A,content,3\n")
    assert not Judgment.objects.exists()


HEADER_2006 = (
    "setid     peerid     modifiedscore     numSCUs     numrepetitions     annotatorid     pyramidcreator     "
    "lingqual1     lingqual2     lingqual3     lingqual4     lingqual5     content\r\n\r\n"
)
TABLE_2006 = (
    "T1\t1\t0.8\t2\t0\t100\tV\t4\t4\t5\t5\t4\t3\t\n"
    "T1\t1\t0.6\t1\t0\t101\tV\t4\t4\t5\t5\t4\t3\t\n"  # second annotator: same judgments
    "T1\t2\t0.4\t1\t0\t100\tV\t3\t3\t3\t3\t3\t2\t\n"
    "T2\t03\t0.2\t1\t0\t100\tV\t\t\t\t\t\t\t\n"  # no judgments at all (as DUC 2006 D0647)
)
HEADER_2007 = (
    "setid     peerid     modifiedscore     numSCUs     numrepetitions     lingqual1     lingqual2     "
    "lingqual3     lingqual4     lingqual5     content\n"
)


def test_duc_2006_table(dataset, tmp_path):
    (tmp_path / "2006-header.txt").write_text(HEADER_2006)
    table = tmp_path / "2006_modified_scores.txt"
    table.write_text(TABLE_2006)
    result = import_duc_table(dataset, table)
    assert (result.created, result.duplicates, result.empty, result.source) == (2, 1, 1, "2006_modified_scores.txt")
    assert stored() == {("T1", "1", "content_responsiveness"): 3, ("T1", "2", "content_responsiveness"): 2}
    with_quality = import_duc_table(dataset, table, linguistic=True)
    assert with_quality.metrics == ("content_responsiveness", *(f"linguistic_quality_{i}" for i in range(1, 6)))
    assert (with_quality.created, with_quality.unchanged, with_quality.empty) == (10, 2, 6)
    assert stored()[("T1", "1", "linguistic_quality_3")] == 5


def test_duc_2007_table_has_no_annotator_column(dataset, tmp_path):
    header = tmp_path / "2007-header.txt"
    header.write_text(HEADER_2007)
    table = tmp_path / "2007_modified_scores.txt"
    table.write_text("T2\t2\t0.8\t2\t0\t4\t5\t5\t4\t4\t4\nT2\t3\t0.2\t1\t0\t2\t3\t4\t5\t3\t1\n")
    import_duc_table(dataset, table, header, linguistic=True)
    assert stored()[("T2", "2", "content_responsiveness")] == 4
    assert stored()[("T2", "3", "linguistic_quality_1")] == 2


def test_duc_table_errors():
    columns = read_duc_header(HEADER_2007)
    assert columns[:3] == ["setid", "peerid", "modifiedscore"] and columns[-1] == "content"
    parsed = parse_duc_table("T1\t1\t0.5\nT1\t2\t0.1\t1\t0\t4\t5\t5\t4\t4\tgood\n", columns)
    assert parsed.errors == ["line 1: 3 cell(s), expected at least 11", "line 2: value 'good' is not a finite number"]
    assert parse_duc_table("T1 1 0.5", ["setid", "peerid"]).errors[0].startswith("header: no column named content")


urlpatterns = [path("admin/", admin.site.urls)]  # the admin alone, whatever the site's other pages do


@override_settings(ROOT_URLCONF=__name__)
def test_admin_lists_filters_and_searches_judgments(dataset, client, django_user_model):
    import_judgments_csv(dataset, "topic,summary,metric,value\nT1,1,content,3\nT2,B,rouge_2,0.25\n", "j.csv")
    client.force_login(django_user_model.objects.create_superuser("boss", "boss@example.org", "pw"))
    url = reverse("admin:annotation_judgment_changelist")
    page = client.get(url).content.decode()
    assert "content" in page and "rouge_2" in page and "j.csv" in page
    assert client.get(url, {"metric": "content"}).context["cl"].result_count == 1
    assert list(client.get(url, {"q": "T2"}).context["cl"].result_list) == [Judgment.objects.get(metric="rouge_2")]
    judgment = Judgment.objects.get(metric="rouge_2")
    assert client.get(reverse("admin:annotation_judgment_change", args=[judgment.pk])).status_code == 200


def test_rows_of_other_topics_are_skipped_and_counted(dataset):
    text = "topic,summary,metric,value\nT1,1,content,3\n" + "".join(
        f"D07{t:02d},{s},content,2\n" for t in range(1, 46) for s in range(1, 53)
    )
    result = import_judgments_csv(dataset, text, source="duc2007.csv")
    assert (result.created, result.skipped_rows, len(result.skipped_topics)) == (1, 45 * 52, 45)
    assert (
        result.skipped_text
        == "2340 rows of 45 topics not in this dataset skipped (D0701, D0702, D0703, D0704, D0705, …)"
    )
    assert stored() == {("T1", "1", "content"): 3}


def test_a_file_with_no_topic_of_the_dataset_is_refused(dataset):
    with pytest.raises(JudgmentImportError) as error:
        import_judgments_csv(dataset, "topic,summary,metric,value\nD0701,1,content,3\nD0702,1,content,3\n")
    assert error.value.errors == ["none of the file's 2 topics (D0701, D0702) is a topic of dataset 'Toy'"]
    assert not Judgment.objects.exists()


def test_each_problem_is_listed_once_with_its_lines(dataset):
    text = "topic,summary,metric,value\n" + "".join(f"T1,9,m{i},1\n" for i in range(14))
    with pytest.raises(JudgmentImportError) as error:  # nothing can be placed: refused, with the reasons
        import_judgments_csv(dataset, text + "T7,1,content,1\n")
    assert error.value.errors == [
        "1 row of 1 topic not in dataset 'Toy'",
        "lines 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 and 4 more: topic T1 has no peer or reference summary '9'",
    ]
    with pytest.raises(JudgmentImportError) as error:  # malformed: only what is malformed is listed
        import_judgments_csv(dataset, text + "T1,1,content,x\n")
    assert error.value.errors == ["line 16: value 'x' is not a finite number"]
    # a DUC table line gives one row per metric: its problem is still listed once
    columns = read_duc_header(HEADER_2007)
    with pytest.raises(JudgmentImportError) as error:
        from annotation.dashboards.judgments import save_judgments

        save_judgments(dataset, parse_duc_table("T1\t9\t0.8\t2\t0\t4\t5\t5\t4\t4\t4\n", columns, linguistic=True))
    assert error.value.errors == ["line 1: topic T1 has no peer or reference summary '9'"]


def test_a_header_only_file_is_refused(dataset):
    with pytest.raises(JudgmentImportError, match="the file holds no judgment"):
        import_judgments_csv(dataset, "topic,summary,metric,value\n")


def test_nist_table_of_a_year_against_topics_holding_some_of_their_peers(dataset, tmp_path):
    """NIST's table lists every peer of every topic of the year; a dataset's topic may hold only
    some of them (T1 and T2 here hold peers 1-3 and references A-C): what the dataset holds is
    imported, the other peers of its topics are left with their reason, other topics skipped."""
    (tmp_path / "2006-header.txt").write_text(HEADER_2006)
    table = tmp_path / "2006_modified_scores.txt"
    peers = [str(p) for p in range(1, 36)]
    lines = [(topic, peer, str(int(peer) % 5 + 1)) for topic in ("T1", "T2", "D0601") for peer in peers]
    table.write_text("".join(f"{t}\t{p}\t0.5\t2\t0\t100\tV\t4\t4\t5\t5\t4\t{c}\t\n" for t, p, c in lines))
    result = import_duc_table(dataset, table)
    held = {
        (t.external_id, p) for t in dataset.topics.all() for p in t.peersummarys.values_list("external_id", flat=True)
    }
    expected = {(t, p, "content_responsiveness"): float(c) for t, p, c in lines if (t, p) in held}
    assert len(expected) == 6 and stored() == expected
    left_lines = [n for n, (t, p, _) in enumerate(lines, start=1) if t != "D0601" and (t, p) not in held]
    assert (result.created, result.left_rows) == (6, len(left_lines))
    assert (result.skipped_rows, result.skipped_topics) == (35, ("D0601",))
    assert len(left_lines) == 64 and len(result.left) == 64  # each (topic, peer) the dataset lacks, once
    assert result.left[0] == "line 4: topic T1 has no peer or reference summary '4'"
    assert result.left[-1] == "line 70: topic T2 has no peer or reference summary '35'"
