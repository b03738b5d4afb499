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
