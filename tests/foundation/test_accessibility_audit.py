"""The axe-core audit that every browser test runs (tests/accessibility.py) really reports violations:
without this, a broken injection would pass every page."""

import pytest

from tests import accessibility


@pytest.mark.browser
def test_the_audit_reports_a_violation_and_passes_a_clean_page(chromium):
    page = chromium.new_page()
    documents = {
        "bad": '<html lang="en"><head><title>Bad</title></head><body><main><img src="data:,"><select></select>'
        '<label for="id_file">One</label><input type="file" id="id_file" aria-describedby="id_file_helptext">'
        '<label for="id_file">Two</label><input type="file" id="id_file"></main></body></html>',
        "good": '<html lang="en"><head><title>Good</title></head><body><main><img src="data:," alt="a dot">'
        "<label>Task <select><option>one</option></select></label></main></body></html>",
    }
    page.route(
        "http://audit.test/**",
        lambda route: route.fulfill(body=documents[route.request.url.rsplit("/", 1)[1]], content_type="text/html"),
    )
    try:
        page.goto("http://audit.test/bad")  # the load-time run, as on every page of the suite
        page.wait_for_function("window.__axeRunning === null")
        accessibility.check(page)
        found, accessibility.FINDINGS.lines[:] = list(accessibility.FINDINGS.lines), []
        assert any("image-alt" in line for line in found), found
        assert any("select-name" in line for line in found), found
        assert any("duplicate-id" in line and "#id_file" in line for line in found), found
        assert any("missing-idref" in line and 'aria-describedby="id_file_helptext"' in line for line in found), found

        page.goto("http://audit.test/good")
        accessibility.check(page)
        assert accessibility.FINDINGS.lines == []
    finally:
        accessibility.FINDINGS.lines.clear()
        page.context.close()


@pytest.mark.browser
def test_a_document_audited_before_is_reported_again_not_audited_again(chromium):
    """The run's memo of audited documents (tests/accessibility.py): an identical document, loaded
    again in another context, counts its violations for the test that loads it, without a second
    audit; a document differing in one attribute, or the same one at another width, is audited."""
    bad = '<html lang="en"><head><title>Bad</title></head><body><main><img src="data:,">%s</main></body></html>'
    documents = {"one": bad % "", "changed": bad % '<p class="x">a</p>', "token": bad % ""}

    def load(name, width=800):
        context = chromium.new_context(viewport={"width": width, "height": 600})
        page = context.new_page()
        page.route(
            "http://audit.test/**",
            lambda route: route.fulfill(body=documents[route.request.url.rsplit("/", 1)[1]], content_type="text/html"),
        )
        page.goto(f"http://audit.test/{name}")
        accessibility.check(page)
        found, accessibility.FINDINGS.lines[:] = list(accessibility.FINDINGS.lines), []
        loaded.append(page.evaluate("typeof axe !== 'undefined'"))  # axe evaluated in this document?
        context.close()
        return found

    loaded = []
    try:
        first = load("one")
        assert any("image-alt" in line for line in first), first
        audits = accessibility.FINDINGS.audits
        again = load("one")
        assert again == first and accessibility.FINDINGS.audits == audits  # reported again, not audited again
        assert any("image-alt" in line for line in load("changed")) and accessibility.FINDINGS.audits == audits + 1
        assert load("one", width=390) and accessibility.FINDINGS.audits == audits + 2
        assert load("token") and accessibility.FINDINGS.audits == audits + 2  # the same markup at another URL
        # axe's half megabyte evaluated only in the documents audited
        assert loaded == [True, False, True, True, False]
    finally:
        accessibility.FINDINGS.lines.clear()
