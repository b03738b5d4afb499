"""``scoring/`` is the pure-Python core: it imports nothing of Django, Celery or the apps built on
it (Celery tasks live in ``annotation/peers/tasks.py``, the app owning the database), so it can be reused
and tested alone and no import cycle can come back."""

import ast
import subprocess
import sys

from tests.conftest import REPO

FORBIDDEN = ("django", "celery", "kombu", "rest_framework", "annotation", "frontend", "pyramid_app")


def _imports(path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module)
    return names


def test_scoring_imports_nothing_of_django_or_the_apps():
    offending = {
        f"{path.relative_to(REPO)}: {name}"
        for path in sorted((REPO / "scoring").rglob("*.py"))
        for name in _imports(path)
        if name.split(".")[0] in FORBIDDEN
    }
    assert not offending


def test_importing_every_scoring_module_loads_no_django():
    modules = [f"scoring.{p.stem}" for p in sorted((REPO / "scoring").glob("*.py")) if p.stem != "__init__"]
    code = (
        f"import sys; import {', '.join(modules)}; print(sorted({{m.split('.')[0] for m in sys.modules}} & "
        f"{set(FORBIDDEN)!r}))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True, env={"PATH": ""}
    )
    assert out.stdout.strip() == "[]"
