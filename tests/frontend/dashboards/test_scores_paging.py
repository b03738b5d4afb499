"""The scores page's per-topic table comes a page at a time (its HTML stays small on a real
dataset: DUC 2006 has 546 rows), keeping the sort order and the topic filter; downloads stay whole."""

import csv
import io
import re
from html import unescape

import pytest
from django.urls import reverse

from annotation.dashboards.figures import score_dashboard
from frontend.dashboards import views

from tests.dashboards.helpers import build_toy, make_users
from tests.frontend.dashboards.test_views import _cells, client_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def toy():
    dataset = build_toy()
    return dataset, client_for(make_users(dataset)["coord"])


def _table(page: str) -> list[list[str]]:
    body = page.split('class="per-topic"')[1].split("</table>")[0]
    return [_cells(r) for r in re.findall(r'<tr class="(?:peer|reference)">(.*?)</tr>', body, re.S)]


def _pager(page: str) -> str:
    match = re.search(r'<nav class="pager"(.*?)</nav>', page, re.S)
    return match.group(1) if match else ""


def _href(html: str, marker: str) -> str:
    return unescape(re.search(rf'<a href="([^"]+)"[^>]*{marker}', html).group(1))


def test_pages_hold_every_row_once_in_the_sorted_order(toy, monkeypatch):
    dataset, coord = toy
    monkeypatch.setattr(views, "TOPIC_PAGE_SIZE", 2)
    board = score_dashboard("Toy", "nist", include_references=True)
    total = len(board["per_topic"])
    assert total > 4  # several pages
    url = reverse("dashboards:scores", args=[dataset.pk]) + "?references=1&tsort=-modified"
    whole = []
    page = coord.get(url).content.decode()
    pages = -(-total // 2)
    for number in range(1, pages + 1):
        rows = _table(page)
        assert len(rows) == (2 if number < pages else total - 2 * (pages - 1)), number
        assert f"Rows {2 * number - 1}–{2 * number - 2 + len(rows)} of {total}" in page
        assert re.search(
            rf'aria-current="page" class="on"><span class="visually-hidden">Page </span>{number}</a>', _pager(page)
        )
        whole += rows
        if number < pages:
            nxt = _href(_pager(page), "data-page-next")
            assert (
                "tsort=-modified" in nxt
                and "references=1" in nxt
                and f"tpage={number + 1}" in nxt
                and nxt.endswith("#per-topic")
            )
            page = coord.get(reverse("dashboards:scores", args=[dataset.pk]) + nxt.split("#")[0]).content.decode()
    assert "data-page-next" not in _pager(page) and "data-page-previous" in _pager(page)
    # Every row once, in the order asked for (descending modified, missing values last).
    expected = sorted((r for r in board["per_topic"] if r["modified"] is not None), key=lambda r: -r["modified"])
    modified = [float(r[5]) for r in whole if r[5] != "—"]
    assert modified == sorted(modified, reverse=True) and len(modified) == len(expected)
    assert sorted((r[0], r[1], r[3]) for r in whole) == sorted(
        (r["topic"], r["summary"], r["annotator"] or "—") for r in board["per_topic"]
    )
    # The download holds every row whatever page is shown.
    download = coord.get(
        reverse("dashboards:scores_export", args=[dataset.pk, "csv"]) + "?references=1&table=topics&tpage=2"
    )
    assert len(list(csv.DictReader(io.StringIO(download.content.decode())))) == total


def test_sorting_and_filtering_start_on_page_one_and_bad_pages_are_clamped(toy, monkeypatch):
    dataset, coord = toy
    monkeypatch.setattr(views, "TOPIC_PAGE_SIZE", 2)
    url = reverse("dashboards:scores", args=[dataset.pk])
    page = coord.get(url + "?references=1&tpage=2").content.decode()
    headers = page.split('class="per-topic"')[1].split("</thead>")[0]
    links = [unescape(h) for h in re.findall(r'<a href="([^"]+)"', headers)]
    assert links and all("tpage" not in h and "references=1" in h for h in links)
    form = page.split('id="per-topic"')[1].split("</form>")[0]
    assert 'name="references"' in form and 'name="tpage"' not in form
    total = len(score_dashboard("Toy", "nist", include_references=True)["per_topic"])
    last = -(-total // 2)
    for bad, shown in (("999", last), ("0", 1), ("x", 1), ("-1", 1)):
        html = coord.get(url + f"?references=1&tpage={bad}").content.decode()
        assert re.search(
            rf'aria-current="page" class="on"><span class="visually-hidden">Page </span>{shown}</a>', html
        ), bad
    # A topic filter keeps the page's size; its rows fit one page here: no pager.
    one = coord.get(url + "?topic=T1").content.decode()
    assert all(r[0] == "T1" for r in _table(one)) and _table(one)
    assert len(_table(one)) > 2 or "data-pager" in one


def test_default_page_size_keeps_small_tables_whole(toy):
    dataset, coord = toy
    page = coord.get(reverse("dashboards:scores", args=[dataset.pk]) + "?references=1").content.decode()
    assert "data-pager" not in page
    assert len(_table(page)) == len(score_dashboard("Toy", "nist", include_references=True)["per_topic"])


def test_page_window_marks_gaps():
    from django.test import RequestFactory

    request = RequestFactory().get("/x", {"tpage": "6", "tsort": "topic"})
    page = views._page(request, "tpage", list(range(546)), 50)
    assert [link and link["number"] for link in page["links"]] == [1, None, 4, 5, 6, 7, 8, None, 11]
    assert page["rows"] == list(range(250, 300)) and (page["first"], page["last"], page["pages"]) == (251, 300, 11)
    assert "tsort=topic" in page["previous"] and "tpage=5" in page["previous"] and "tpage=7" in page["next"]
    first = views._page(RequestFactory().get("/x", {"tpage": "2"}), "tpage", list(range(546)), 50)["links"][0]
    assert first["url"] == "?" and first["number"] == 1  # page 1 drops the parameter
    empty = views._page(RequestFactory().get("/x"), "tpage", [], 50)
    assert (empty["rows"], empty["first"], empty["last"], empty["pages"], empty["next"]) == ([], 0, 0, 1, None)
