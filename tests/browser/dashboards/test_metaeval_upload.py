"""The meta-evaluation upload takes a file covering more topics and peers than the dataset: in
Chromium on the dashboard's page (rows of other topics skipped and counted, rows of peers a topic
does not hold left and reported), and on the real DUC 2006 table against a dataset holding one of
its topics, whole or with only some of its peers."""

from io import StringIO

import pytest
from django.core.management import call_command

from annotation.corpus.models import Dataset
from annotation.dashboards.judgments import import_duc_table
from annotation.dashboards.models import Judgment

from tests.browser.setup.browser import open_as
from tests.conftest import shared_data
from tests.dashboards import toy


@pytest.mark.browser
def test_upload_a_table_of_a_whole_year_in_the_page(
    chromium, live_server, people, transactional_db, artifacts, tmp_path
):
    dataset = toy.build()
    dataset.coordinators.add(people.coord)
    table = tmp_path / "judged-2007.csv"
    table.write_text(
        "topic,summary,metric,value\nT1,1,content,3\nT2,2,content,4\n"
        + "".join(f"D07{t:02d},{s},content,2\n" for t in range(1, 46) for s in range(1, 53))
    )
    page, errors = open_as(chromium, live_server, "coord")
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/metaeval/")
    page.set_input_files("input[type=file][name=file]", str(table))
    page.locator("form:has(input[name=file]) button[type=submit]").click()
    page.wait_for_selector(".msg.success")
    message = page.inner_text(".messages")
    assert "Imported content from judged-2007.csv: 2 new" in message
    assert "2340 rows of 45 topics not in this dataset skipped (D0701, D0702, D0703, D0704, D0705, …)" in message
    assert Judgment.objects.filter(topic__dataset=dataset).count() == 2
    page.screenshot(path=str(artifacts / "setup-metaeval-upload.png"))
    assert errors == []


HEADER_2006 = (
    "setid\tpeerid\tmodifiedscore\tnumSCUs\tnumrepetitions\tannotatorid\tpyramidcreator\t"
    "lingqual1\tlingqual2\tlingqual3\tlingqual4\tlingqual5\tcontent\n"
)


@pytest.mark.browser
def test_upload_a_nist_table_of_more_peers_than_the_topics_hold(
    chromium, live_server, people, transactional_db, artifacts, tmp_path
):
    dataset = toy.build()  # T1 and T2 hold peers 1-3
    dataset.coordinators.add(people.coord)
    (tmp_path / "2006-header.txt").write_text(HEADER_2006)
    table = tmp_path / "2006_modified_scores.txt"
    rows = [(t, p) for t in ("T1", "T2", "D0601") for p in (1, 2, 3, 24)]
    table.write_text("".join(f"{t}\t{p}\t0.5\t2\t0\t100\tV\t4\t4\t5\t5\t4\t{p % 5 + 1}\n" for t, p in rows))
    page, errors = open_as(chromium, live_server, "coord")
    page.goto(f"{live_server.url}/datasets/{dataset.pk}/metaeval/")
    page.check("input[name=format][value=duc]")
    page.set_input_files("input[type=file][name=file]", str(table))
    page.set_input_files("input[type=file][name=header]", str(tmp_path / "2006-header.txt"))
    page.locator("form:has(input[name=file]) button[type=submit]").click()
    page.wait_for_selector(".msg.warning")
    message = page.inner_text(".messages")
    assert "Imported content_responsiveness from 2006_modified_scores.txt: 6 new" in message
    assert "4 rows of 1 topic not in this dataset skipped (D0601)" in message
    assert (
        "2 rows not placed: line 4: topic T1 has no peer or reference summary '24'; "
        "line 8: topic T2 has no peer or reference summary '24'."
    ) in page.inner_text(".msg.warning")
    assert not page.locator("[data-import-errors]").count()
    stored = {
        (j.topic.external_id, j.summary): j.value
        for j in Judgment.objects.filter(topic__dataset=dataset).select_related("topic")
    }
    assert stored == {(t, str(p)): p % 5 + 1 for t, p in rows if t != "D0601" and p != 24}
    page.screenshot(path=str(artifacts / "dashboards-metaeval-left-rows.png"), full_page=True)
    assert errors == []


@pytest.mark.realdata
def test_duc_2006_table_against_a_topic_holding_some_of_its_peers(db):
    root = shared_data("duc2006")
    pans = sorted((root / "allpans").glob("*.D0631.*.pan"))
    kept = pans[: len(pans) // 3]
    call_command(
        "import_ducview",
        str(root / "allpyramids" / "D0631.pyr"),
        *map(str, kept),
        "--dataset",
        "some peers",
        stdout=StringIO(),
    )
    dataset = Dataset.objects.get(name="some peers")
    held = set(dataset.topics.get().peersummarys.values_list("external_id", flat=True))
    table = root / "scoring" / "2006_modified_scores.txt"
    lines = [line.split("\t") for line in table.read_text(errors="replace").splitlines() if line.strip()]
    judged = {cells[1] for cells in lines if cells[0] == "D0631" and cells[12].strip()}
    assert held and judged - held
    result = import_duc_table(dataset, table)
    assert result.created == len(judged & held)
    assert result.left_rows == sum(
        1 for cells in lines if cells[0] == "D0631" and cells[12].strip() and cells[1] not in held
    )
    assert set(Judgment.objects.filter(topic__dataset=dataset).values_list("summary", flat=True)) == judged & held


@pytest.mark.realdata
def test_duc_2006_table_against_a_dataset_of_one_topic(db, tmp_path):
    root = shared_data("duc2006")
    call_command(
        "import_ducview",
        str(root / "allpyramids" / "D0631.pyr"),
        *map(str, (root / "allpans").glob("*.D0631.*.pan")),
        "--dataset",
        "one topic",
        stdout=StringIO(),
    )
    table = root / "scoring" / "2006_modified_scores.txt"
    lines = [line.split("\t") for line in table.read_text(errors="replace").splitlines() if line.strip()]
    other_lines = sum(
        1 for cells in lines if cells[0] != "D0631" and cells[12].strip()
    )  # D0647 has empty cells: no judgment
    d0631_peers = {cells[1] for cells in lines if cells[0] == "D0631" and cells[12].strip()}
    result = import_duc_table(Dataset.objects.get(name="one topic"), table)
    assert result.skipped_rows == other_lines and len(result.skipped_topics) == 19
    assert result.created == len(d0631_peers) and result.duplicates == len(d0631_peers)  # D0631 is in the table twice
