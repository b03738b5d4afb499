"""The suite's Chromium runs with the flags tests/conftest.py gives it: the headless features it turns
off are off, and Playwright's own list of disabled features still is (Chromium reads only the last
--disable-features of its command line, so ours must repeat Playwright's)."""

import os

import pytest

from bench._chromium import UNUSED_HEADLESS_FEATURES

from tests.faults.cleanup import command_line
from tests.outcomes import descendants


@pytest.mark.browser
def test_the_browser_runs_without_the_unused_headless_features(chromium):
    context = chromium.new_context()
    try:
        context.new_page().set_content("<p>a page</p>")
        lines = [command_line(pid).split() for pid in descendants(os.getpid())]  # this worker's browser
        browsers = [
            line
            for line in lines
            if "--remote-debugging-pipe" in line and not any(arg.startswith("--type=") for arg in line)
        ]
        assert len(browsers) == 1, browsers
        disabled = [arg.split("=", 1)[1].split(",") for arg in browsers[0] if arg.startswith("--disable-features=")]
        assert len(disabled) >= 2, "Playwright's --disable-features, then ours"
        playwrights, ours = set(disabled[0]), set(disabled[-1])
        assert playwrights - ours == set(), "Playwright disables features our --disable-features would enable again"
        assert set(UNUSED_HEADLESS_FEATURES) <= ours

        session = chromium.new_browser_cdp_session()
        targets = session.send("Target.getTargets")["targetInfos"]
        assert [t["url"] for t in targets if t["type"] == "browser_ui"] == [], "the omnibox WebUI was started"
    finally:
        context.close()
