"""The documentation says only what is true of this repository.

README.md and docs/**/*.md (the results files too) name files, headings, management commands, make
targets, URL paths and environment variables; each is checked against the thing itself, so a rename
or a removal that forgets the docs fails here instead of misleading a reader.
"""

import ast
import re
from pathlib import Path

import pytest
from django.core.management import get_commands
from django.urls import Resolver404, get_resolver, resolve

REPO = Path(__file__).resolve().parent.parent.parent
README = REPO / "README.md"
DOCS = [README, *sorted((REPO / "docs").rglob("*.md"))]
README_MAX_LINES = 200

FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
CODE_SPAN = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"!?\[[^\]\n]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)
MANAGE = re.compile(r"manage\.py\s+([a-z][a-z0-9_]*)")
MAKE = re.compile(r"(?<![\w-])make[ \t]+([a-z][a-z0-9-]*)")
LOCAL_ORIGIN = re.compile(r"(?:https?://(?:127\.0\.0\.1|localhost)(?::\d+)?|\$BASE)(?=/)")
URL_PATH = re.compile(r"(?<![\w.$/~-])(/[A-Za-z0-9_\-./<>{}%]*)")
PLACEHOLDER = re.compile(r"<[^<>/]+>|\{[^{}/]+\}")
SETTINGS_READERS = {"get_bool", "get_int", "get_list", "get_str"}


def text_of(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def prose(text: str) -> str:
    """The text without fenced code blocks (links and headings live outside them)."""
    return FENCE.sub("", text)


def code(text: str) -> str:
    """Fenced blocks and inline code spans: where commands are written."""
    return "\n".join([m.group(0) for m in FENCE.finditer(text)] + CODE_SPAN.findall(prose(text)))


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading: markup dropped, lower case, punctuation removed except
    ``-`` and ``_``, spaces turned into hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = text.replace("`", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading's anchor; a repeated heading gets -1, -2, ... as on GitHub."""
    seen: dict[str, int] = {}
    result = set()
    for heading in HEADING.findall(prose(text_of(path))):
        slug = github_slug(heading)
        count = seen.get(slug, 0)
        result.add(slug if count == 0 else f"{slug}-{count}")
        seen[slug] = count + 1
    return result


def broken_links(path: Path, text: str) -> list[str]:
    """Relative links of ``text`` (written in ``path``) whose file or heading does not exist."""
    problems = []
    for target in LINK.findall(prose(text)):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        if not linked.exists():
            problems.append(f"{target}: no file {linked.relative_to(REPO) if linked.is_relative_to(REPO) else linked}")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            problems.append(f"{target}: no heading with the anchor #{anchor} in {linked.name}")
    return problems


def url_prefixes() -> set[str]:
    """First path segments the site serves (``api``, ``setup``, ``healthz``...): a path in the docs
    starting with one of them is meant as a URL of this site."""
    prefixes = set()
    for pattern in get_resolver().url_patterns:
        first = str(pattern.pattern).lstrip("^").split("/")[0]
        if first:
            prefixes.add(first)
        else:  # include("frontend.urls") at the root: its own first segments
            prefixes.update(str(p.pattern).split("/")[0] for p in getattr(pattern, "url_patterns", []))
    prefixes.discard("")
    return {re.sub(r"[<(].*", "", p) for p in prefixes} - {""}


def url_paths(text: str) -> list[str]:
    """The site's URL paths named in ``text``, placeholders (``<id>``, ``{id}``) made ``1``."""
    prefixes = url_prefixes()
    found = []
    for raw in URL_PATH.findall(LOCAL_ORIGIN.sub(" ", text)):
        path = PLACEHOLDER.sub("1", raw).rstrip(".")
        first = path.lstrip("/").split("/")[0]
        if first in prefixes and "<" not in path and "{" not in path:
            found.append(path)
    return found


def api_table_paths(text: str) -> list[str]:
    """The paths in the first column of the API guide's tables, written relative to ``/api/``."""
    found = []
    for line in text.splitlines():
        if line.startswith("| `"):
            first_cell = re.split(r"(?<!\\)\|", line)[1]
            found += ["/api/" + PLACEHOLDER.sub("1", span).split("?")[0] for span in CODE_SPAN.findall(first_cell)]
    return found


def settings_reads(source: str) -> set[str]:
    """Environment variables a module reads: ``get_*("NAME", ...)``, ``os.environ.get("NAME")``,
    ``os.environ["NAME"]``, ``os.getenv("NAME")``."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            called = getattr(func, "id", None) or getattr(func, "attr", None)
            on_environ = isinstance(func, ast.Attribute) and getattr(func.value, "attr", None) == "environ"
            if called in SETTINGS_READERS or (called == "get" and on_environ) or called == "getenv":
                names.add(node.args[0].value)
        elif (
            isinstance(node, ast.Subscript)
            and getattr(node.value, "attr", None) == "environ"
            and isinstance(node.slice, ast.Constant)
        ):
            names.add(node.slice.value)
    return names


def section(text: str, heading: str) -> str:
    """The body of the ``## heading`` section (up to the next heading of level 2)."""
    match = re.search(rf"^## {re.escape(heading)}\s*$(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, f"no section '## {heading}'"
    return match.group(1)


def table_variables(text: str) -> set[str]:
    return set(re.findall(r"^\| `([A-Z][A-Z0-9_]*)` \|", text, re.M))


def makefile_targets() -> set[str]:
    return set(re.findall(r"^([A-Za-z0-9][\w.-]*):(?!=)", text_of(REPO / "Makefile"), re.M))


# --- the checkers catch what they are for -------------------------------------------------------


@pytest.mark.parametrize(
    "heading, slug",
    [
        (
            "Which differences are real (significance, intervals, stability)",
            "which-differences-are-real-significance-intervals-stability",
        ),
        ("DUCView `.pyr` and `.pan`", "ducview-pyr-and-pan"),
        ("1. Create a dataset", "1-create-a-dataset"),
        ("Who may do what (the blind rule)", "who-may-do-what-the-blind-rule"),
        ("Plain-text summaries (set-up pages)", "plain-text-summaries-set-up-pages"),
    ],
)
def test_github_slugs(heading, slug):
    """Slugs as GitHub renders them (checked by hand on github.com for these shapes)."""
    assert github_slug(heading) == slug


def test_the_link_checker_finds_missing_files_and_anchors():
    text = (
        "[ok](docs/api.md) [gone](docs/nowhere.md) [bad anchor](docs/api.md#no-such-heading) "
        "[good anchor](docs/api.md#tokens) [web](https://example.org/x.md)\n```\n[in code](missing.md)\n```\n"
    )
    assert broken_links(README, text) == [
        "docs/nowhere.md: no file docs/nowhere.md",
        "docs/api.md#no-such-heading: no heading with the anchor #no-such-heading in api.md",
    ]


def test_url_paths_are_found_with_placeholders_filled_and_files_left_alone():
    text = (
        "see `/setup/{id}/people/`, http://127.0.0.1:8000/api/auth/token/ and /datasets/<id>/scores.csv?x=1, "
        "not frontend/static/x.js nor /work/elsewhere nor https://app.prolific.com/submissions/complete"
    )
    assert url_paths(text) == ["/setup/1/people/", "/api/auth/token/", "/datasets/1/scores.csv"]


def test_settings_reads_sees_every_way_of_reading_the_environment():
    source = (
        'import os\nA = get_int("A", 1)\nB = os.environ.get("B")\nC = os.environ["C"]\nD = os.getenv("D")\nE = '
        'other("E")\n'
    )
    assert settings_reads(source) == {"A", "B", "C", "D"}


# --- the documentation ---------------------------------------------------------------------------


def test_readme_is_a_front_page():
    lines = text_of(README).splitlines()
    assert len(lines) <= README_MAX_LINES, (
        f"README.md has {len(lines)} lines (at most {README_MAX_LINES}): move detail to docs/"
    )
    assert "## Layout" in lines


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_relative_links_point_to_existing_files_and_headings(path):
    assert broken_links(path, text_of(path)) == []


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_management_commands_exist(path):
    commands = get_commands()
    named = set(MANAGE.findall(text_of(path)))
    assert named - set(commands) == set(), f"not management commands: {sorted(named - set(commands))}"


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_make_targets_exist(path):
    named = set(MAKE.findall(code(text_of(path))))
    assert named - makefile_targets() == set(), f"not Makefile targets: {sorted(named - makefile_targets())}"


# architecture.md is generated from the URL resolver itself (tests/foundation/test_architecture.py).
@pytest.mark.parametrize("path", [p for p in DOCS if p.name != "architecture.md"], ids=lambda p: p.name)
def test_url_paths_resolve(path):
    text = text_of(path)
    unresolved = []
    for url in url_paths(text) + (api_table_paths(text) if path.name == "api.md" else []):
        try:
            resolve(url.split("?")[0])
        except Resolver404:
            unresolved.append(url)
    assert unresolved == []


def test_every_setting_read_from_the_environment_is_documented_and_only_those():
    configuration = text_of(REPO / "docs" / "configuration.md")
    for heading, module in [("Settings", "settings.py"), ("gunicorn", "gunicorn_conf.py")]:
        read = settings_reads(text_of(REPO / "pyramid_app" / module))
        documented = table_variables(section(configuration, heading))
        assert read == documented, (
            f"pyramid_app/{module}: read, not documented {sorted(read - documented)}; "
            f"documented, not read {sorted(documented - read)}"
        )


def test_screenshots_are_small_and_each_is_shown_somewhere():
    """Screenshots live in the repository forever (every clone downloads them): each under
    200 KB, and none left behind when a guide stops showing it."""
    images = sorted((REPO / "docs" / "images").glob("*.png"))
    assert images
    shown = {(path.parent / target).resolve() for path in DOCS for target in LINK.findall(prose(text_of(path)))}
    assert [image.name for image in images if image.stat().st_size >= 200 * 1024] == []
    assert [image.name for image in images if image.resolve() not in shown] == []
