"""The meta-evaluation upload takes a file covering more topics than the dataset: in Chromium on
the dashboard's page (rows of other topics skipped and counted), and on the real DUC 2006 table
against a dataset holding one of its topics."""
from io import StringIO

import pytest
from django.core.management import call_command

from annotation.models import Dataset, Judgment
from annotation.dashboards.judgments import import_duc_table

from tests.conftest import shared_data
from tests.dashboards import toy
from tests.browser.setup.browser import open_as


@pytest.mark.browser
def test_upload_a_table_of_a_whole_year_in_the_page(chromium, live_server, people, transactional_db, artifacts, tmp_path):
    dataset = toy.build()
    dataset.coordinators.add(people.coord)
    table = tmp_path / "judged-2007.csv"
    table.write_text("topic,summary,metric,value\nT1,1,content,3\nT2,2,content,4\n"
                     + "".join(f"D07{t:02d},{s},content,2\n" for t in range(1, 46) for s in range(1, 53)))
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


@pytest.mark.realdata
def test_duc_2006_table_against_a_dataset_of_one_topic(db, tmp_path):
    root = shared_data("duc2006")
    call_command("import_ducview", str(root / "allpyramids" / "D0631.pyr"), *map(str, (root / "allpans").glob("*.D0631.*.pan")),
                 "--dataset", "one topic", stdout=StringIO())
    table = root / "scoring" / "2006_modified_scores.txt"
    lines = [line.split("\t") for line in table.read_text(errors="replace").splitlines() if line.strip()]
    other_lines = sum(1 for cells in lines if cells[0] != "D0631" and cells[12].strip())  # D0647 has empty cells: no judgment
    d0631_peers = {cells[1] for cells in lines if cells[0] == "D0631" and cells[12].strip()}
    result = import_duc_table(Dataset.objects.get(name="one topic"), table)
    assert result.skipped_rows == other_lines and len(result.skipped_topics) == 19
    assert result.created == len(d0631_peers) and result.duplicates == len(d0631_peers)  # D0631 is in the table twice
