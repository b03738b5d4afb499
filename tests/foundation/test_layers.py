"""The layer order (``pyproject.toml``, ``[tool.importlinter]``) holds, and the check would see a
break: an import against the order, one inside a function, one by string.

The order is checked with import-linter's layers contract on grimp's graph of the project, which
counts every ``import`` statement wherever it is (module level, functions, ``TYPE_CHECKING``) and
follows chains: a low module reaching a high one through a third is a break too. Imports by string
(``importlib.import_module``, ``import_string``, ``apps.get_model``, ``__import__``) are invisible
to that graph, so they are refused outside the one place meant for them: the job queue's registry
of work published by name (``annotation/jobs/queue.py``).
"""

import ast
import sys
import textwrap
from pathlib import Path

import grimp
import pytest
from importlinter.api import read_configuration
from importlinter.contracts.layers import LayersContract

import annotation

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("annotation", "frontend", "pyramid_app", "scoring")

# Where an import by string is allowed, and why.
BY_STRING_ALLOWED = {
    "annotation/jobs/queue.py": (
        "the job queue's registry: work that must go up is published by name (JOBS, the Celery app)"
    ),
    "annotation/architecture.py": (
        "the architecture page imports every module it describes, found by walking the packages"
    ),
}


def contract(options: dict | None = None) -> LayersContract:
    """The layers contract of pyproject.toml (``options``: replacing some of its own)."""
    configuration = read_configuration(str(ROOT / "pyproject.toml"))
    [layers] = [c for c in configuration["contracts_options"] if c["id"] == "layers"]
    return LayersContract(
        name=layers["name"],
        session_options=configuration["session_options"],
        contract_options={**layers, **(options or {})},
    )


def project_graph() -> grimp.ImportGraph:
    assert Path(annotation.__file__).resolve().is_relative_to(ROOT), "the checkout under test is not the one imported"
    return grimp.build_graph(*PACKAGES, cache_dir=None)


def _link(link: dict) -> str:
    return f"{link['importer']} -> {link['imported']} (l.{', '.join(str(n) for n in link['line_numbers'])})"


def breaks(check) -> list[str]:
    """Each route against the order, its imports joined by ``, then``: ``a -> b (l.N)`` when direct."""
    found = []
    for dependency in check.metadata["invalid_dependencies"]:
        for route in dependency["routes"]:
            found.append(", then ".join(_link(link) for link in route["chain"]))
            found += [_link(link) for link in route["extra_firsts"] + route["extra_lasts"]]
    return sorted(found)


def test_the_imports_keep_the_layer_order():
    check = contract().check(project_graph(), verbose=False)
    assert check.warnings == []
    assert check.kept, "imports against the layer order (pyproject.toml [tool.importlinter]):\n" + "\n".join(
        breaks(check)
    )


def test_no_import_is_exempt_from_the_order():
    """An ``ignore_imports`` entry would let one import against the order pass (and its chains):
    what must go up is published through the job queue or registered with the lower package."""
    configuration = read_configuration(str(ROOT / "pyproject.toml"))
    [layers] = [c for c in configuration["contracts_options"] if c["id"] == "layers"]
    assert not layers.get("ignore_imports"), layers["ignore_imports"]


def test_a_planted_import_from_a_low_layer_to_a_high_one_breaks_the_order():
    graph = project_graph()
    graph.add_import(
        importer="annotation.corpus.models",
        imported="frontend.views",
        line_number=7,
        line_contents="from frontend import views",
    )
    check = contract().check(graph, verbose=False)
    assert not check.kept
    assert breaks(check) == ["annotation.corpus.models -> frontend.views (l.7)"]


def test_a_planted_path_through_a_module_outside_the_layers_breaks_the_order_too():
    """Migrations are in no layer: a low module reaching a high one through them is still a break."""
    graph = project_graph()
    graph.add_import(
        importer="annotation.corpus.models",
        imported="annotation.migrations._integrity",
        line_number=3,
        line_contents="from annotation.migrations import _integrity",
    )
    graph.add_import(
        importer="annotation.migrations._integrity",
        imported="frontend.views",
        line_number=5,
        line_contents="from frontend import views",
    )
    check = contract().check(graph, verbose=False)
    assert not check.kept
    assert breaks(check) == [
        "annotation.corpus.models -> annotation.migrations._integrity (l.3), "
        "then annotation.migrations._integrity -> frontend.views (l.5)"
    ]


def test_an_import_inside_a_function_counts(tmp_path, monkeypatch):
    """grimp reads imports wherever they are: one moved into a function to dodge the order still
    breaks it (a planted package, so the project's own imports cannot hide the case)."""
    package = tmp_path / "planted_layers"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "high.py").write_text("")
    (package / "low.py").write_text(
        textwrap.dedent("""
        def later():
            from planted_layers import high

            return high
    """)
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    graph = grimp.build_graph("planted_layers", cache_dir=None)
    check = LayersContract(
        name="planted",
        session_options={"root_packages": ["planted_layers"]},
        contract_options={"layers": ["planted_layers.high", "planted_layers.low"]},
    ).check(graph, verbose=False)
    sys.modules.pop("planted_layers", None)
    assert not check.kept
    assert breaks(check) == ["planted_layers.low -> planted_layers.high (l.3)"]


# --- imports by string -------------------------------------------------------------------------

BY_STRING = ("import_module", "import_string", "get_model", "__import__")


def imports_by_string(source: str) -> list[int]:
    """Lines importing by string: a call of ``import_module``, ``import_string``, ``get_model`` or
    ``__import__`` however reached (``importlib.import_module``, ``apps.get_model``, a bare name),
    and the import of such a function (it may be called under another name)."""
    lines = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and any(alias.name in BY_STRING for alias in node.names):
            lines.add(node.lineno)
        elif isinstance(node, ast.Call):
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            if name in BY_STRING:
                lines.add(node.lineno)
    return sorted(lines)


def test_no_import_by_string_outside_the_job_queue():
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if "/migrations/" in relative or relative in BY_STRING_ALLOWED:
                # a migration's RunPython gets its models by name from the historical registry, as Django requires
                continue
            found += [f"{relative}:{line}" for line in imports_by_string(path.read_text(encoding="utf-8"))]
    assert found == [], (
        "imports by string hide a dependency from the layer check; publish work through the job queue:\n"
        + "\n".join(found)
    )


@pytest.mark.parametrize(
    "source",
    [
        "import importlib\nimportlib.import_module('frontend.views')",
        "from importlib import import_module\nimport_module('frontend.views')",
        "from django.utils.module_loading import import_string\nimport_string('frontend.views.x')",
        "from django.apps import apps\napps.get_model('annotation', 'Pyramid')",
        "__import__('frontend.views')",
    ],
)
def test_each_kind_of_import_by_string_is_found(source):
    assert imports_by_string(source)


def test_the_allowed_imports_by_string_still_exist():
    """An allowance outlives its reason unnoticed: each allowed file still imports by string."""
    for relative in BY_STRING_ALLOWED:
        assert imports_by_string((ROOT / relative).read_text(encoding="utf-8")), relative
