"""The suite's Chromium runs with the flags tests/conftest.py gives it: the headless features it turns
off are off, and Playwright's own list of disabled features still is (Chromium reads only the last
--disable-features of its command line, so ours must repeat Playwright's); and it saves the tests'
screenshots only when asked."""

import os

import pytest

from bench._chromium import UNUSED_HEADLESS_FEATURES

from tests.conftest import screenshots_wanted
from tests.faults.cleanup import command_line
from tests.outcomes import descendants


def executable(pid: int) -> str:
    try:
        return os.path.basename(os.readlink(f"/proc/{pid}/exe"))
    except OSError:
        return ""


@pytest.mark.browser
def test_the_browser_runs_without_the_unused_headless_features(chromium):
    context = chromium.new_context()
    try:
        context.new_page().set_content("<p>a page</p>")
        # this worker's browser: the process without --type= running the program its renderers run
        # (Debian's launcher of the headless shell is a script whose process has the same command line)
        lines = {pid: command_line(pid).split() for pid in descendants(os.getpid())}
        children = {pid for pid, line in lines.items() if any(arg.startswith("--type=") for arg in line)}
        programs = {executable(pid) for pid in children}
        browsers = [
            line
            for pid, line in lines.items()
            if pid not in children and "--remote-debugging-pipe" in line and executable(pid) in programs
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


@pytest.mark.browser
def test_screenshots_into_the_artifacts_are_taken_only_when_asked(chromium, artifacts, tmp_path):
    """SCREENSHOTS=1 (tests/conftest.py): a page's, an element's and a locator's screenshot into
    test-artifacts/ saved; without it none is, and a screenshot elsewhere or as bytes is taken as always."""
    context = chromium.new_context()
    page = context.new_page()
    page.set_content("<p>a page</p>")
    names = [f"screenshot-gate-{kind}-{os.getpid()}.png" for kind in ("page", "element", "locator")]
    for name in names:
        (artifacts / name).unlink(missing_ok=True)
    try:
        page.screenshot(path=str(artifacts / names[0]), full_page=True)
        page.query_selector("p").screenshot(path=artifacts / names[1])
        page.locator("p").screenshot(path=str(artifacts / names[2]))
        saved = [(artifacts / name).exists() for name in names]
        assert saved == [screenshots_wanted()] * 3
        page.screenshot(path=str(tmp_path / "elsewhere.png"))
        assert (tmp_path / "elsewhere.png").read_bytes().startswith(b"\x89PNG")
        assert page.locator("p").screenshot().startswith(b"\x89PNG")
    finally:
        for name in names:
            (artifacts / name).unlink(missing_ok=True)
