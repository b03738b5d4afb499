"""docs/architecture.md is the code's own picture: regenerated, it equals the committed page, and it
names every concept package, URL pattern, Celery task and public score function (each found here
independently of the generator: by walking the folders and reading the source)."""

import ast
import re
from pathlib import Path

from django.urls import URLPattern, URLResolver, get_resolver

from annotation import architecture

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "architecture.md"


def page() -> str:
    return PAGE.read_text(encoding="utf-8")


def test_the_page_is_current():
    assert architecture.render() == page(), "regenerate: python manage.py architecture --output docs/architecture.md"


def test_every_concept_package_has_its_section():
    packages = {p.parent.name for p in (ROOT / "annotation").glob("*/__init__.py")} - {"management", "migrations"}
    assert packages == set(architecture.CONCEPTS)
    for package in packages:
        assert f"### `annotation.{package}`" in page()
        for module in (ROOT / "annotation" / package).glob("*.py"):
            if module.stem != "__init__" and not module.stem.startswith("__"):
                assert f"`annotation.{package}.{module.stem}`" in page() or module.stem.startswith("_"), module


def _routes(patterns, prefix=""):
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _routes(pattern.url_patterns, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            yield prefix + str(pattern.pattern)


def test_every_url_pattern_is_listed():
    routes = [r for r in _routes(get_resolver().url_patterns) if not r.startswith("admin/")]
    assert len(routes) > 50
    for route in routes:
        assert f"| `/{architecture.readable(route)}` |" in page(), route


def test_every_task_is_listed():
    names = set()
    for path in (ROOT / "annotation").rglob("*.py"):
        names |= set(re.findall(r'@shared_task\(name="([^"]+)"', path.read_text()))
    assert len(names) >= 8
    for name in names:
        assert f"| `{name}` |" in page(), name


def test_every_public_score_function_is_listed():
    for path in sorted((ROOT / "scoring").glob("*.py")):
        tree = ast.parse(path.read_text())
        public = [
            node.name for node in tree.body if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")
        ]
        if not public:
            continue
        section = page().split(f"### `scoring.{path.stem}`", 1)
        assert len(section) == 2, path
        body = section[1].split("\n### ", 1)[0]
        for name in public:
            assert f"| `{name}` |" in body, f"scoring.{path.stem}.{name}"
