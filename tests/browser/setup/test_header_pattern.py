"""DUCView parity on the set-up side: references loaded as DUCView loads them, one file and its
document header pattern. A coordinator pastes a DUC 2007 pyramid's whole text in Chromium, edits
the header pattern (the file's own startDocumentRegEx, then one that splits otherwise), previews
how the references split each time, and saves: the texts are the ones the DUCView importer reads
from the same file. Screenshot: test-artifacts/setup-header-pattern.png."""

import re
from html import unescape

import pytest

from annotation.corpus.models import Dataset, Topic
from annotation.formats import parse_pyramid

from tests.browser.setup.browser import open_as
from tests.conftest import shared_data

pytestmark = [pytest.mark.browser, pytest.mark.realdata]


def pyramid_text_and_regex(path) -> tuple[str, str]:
    data = path.read_text(encoding="utf-8", errors="replace")
    regex = re.search(r"<startDocumentRegEx><!\[CDATA\[(.*?)\]\]>", data, re.S).group(1)
    text = "\n".join(unescape(line) for line in re.findall(r"<line>(.*?)</line>", data, re.S))
    return text, regex


def preview(page):
    """Click Preview and wait for the new preview (the one shown meanwhile is marked)."""
    page.evaluate("() => document.querySelectorAll('[data-plan]').forEach(p => { p.dataset.old = '1'; })")
    page.click("[data-preview-button]")
    page.wait_for_selector("[data-plan]:not([data-old])")
    return {
        row.get_attribute("data-summary"): row.locator("td.source").inner_text()
        for row in page.locator("[data-summary]").all()
    }


def test_references_split_by_an_edited_header_pattern(chromium, live_server, people, transactional_db, artifacts):
    path = shared_data("duc2007-main", "allpyramids", "D0720-ABCE.pyr")
    text, regex = pyramid_text_and_regex(path)
    imported = {r.id: r.text for r in parse_pyramid(path.read_bytes())[0].references}
    dataset = Dataset.objects.create(name="Parity")
    dataset.coordinators.add(people.coord)
    page, errors = open_as(chromium, live_server, "coord")
    page.goto(f"{live_server.url}/setup/{dataset.pk}/topics/add/")
    page.click("#id_topic")
    page.keyboard.type("D0720")
    page.fill("#id_references_text", text)
    page.click("details.advanced summary")

    # The file's own pattern: DUCView's four references, each under its header line.
    page.fill("#id_header_pattern", regex)
    split = preview(page)
    assert split == {f"reference:{r}": f"D0720.M.250.E.{r}" for r in "ABCE"}
    assert "text before the first header is not part of any summary: '#4'" in page.inner_text("[data-notes]")

    # A pattern that finds only reference E's header: one reference, holding everything after it.
    page.fill("#id_header_pattern", r"^-+\n D0720\.M\.250\.E\.E\n-+$")
    assert list(preview(page)) == ["reference:E"]
    assert page.is_disabled("[data-save-button]") is False

    # Back to the file's pattern, saved: the texts DUCView's importer reads from the same file.
    page.fill("#id_header_pattern", regex)
    preview(page)
    page.screenshot(path=str(artifacts / "setup-header-pattern.png"), full_page=True)
    page.click("[data-save-button]")
    page.wait_for_selector(".msg.success")
    stored = dict(
        Topic.objects.get(dataset=dataset, external_id="D0720").referencesummarys.values_list("external_id", "text")
    )
    assert stored == imported
    assert errors == []
