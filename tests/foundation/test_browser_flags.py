"""The suite's Chromium runs with the flags tests/conftest.py gives it: the headless features it turns
off are off, and Playwright's own list of disabled features still is (Chromium reads only the last
--disable-features of its command line, so ours must repeat Playwright's)."""

import os
from pathlib import Path

import pytest

from bench._chromium import UNUSED_HEADLESS_FEATURES


def _descendants_command_lines(root: int) -> list[list[str]]:
    """The command lines of every process under ``root`` (this xdist worker: its own browser)."""
    parents, lines = {}, {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            lines[int(entry.name)] = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        parents[int(entry.name)] = int(stat[1])

    def under_root(pid: int) -> bool:
        while pid > 1:
            if pid == root:
                return True
            pid = parents.get(pid, 1)
        return False

    return [[part.decode(errors="replace") for part in line if part] for pid, line in lines.items() if under_root(pid)]


@pytest.mark.browser
def test_the_browser_runs_without_the_unused_headless_features(chromium):
    context = chromium.new_context()
    try:
        context.new_page().set_content("<p>a page</p>")
        browsers = [
            line
            for line in _descendants_command_lines(os.getpid())
            if any(arg.startswith("--remote-debugging-pipe") for arg in line)
            and not any(arg.startswith("--type=") for arg in line)
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
