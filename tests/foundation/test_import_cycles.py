"""No import cycle inside the project, counting the imports inside functions.

A cycle hides which module owns what: the background path went round six modules (a service
scheduled work by importing the task modules that imported it back), and an import moved inside a
function to dodge the circle still ties the modules together. The graph is read from the source with
``ast``: every ``import`` and ``from ... import`` anywhere in a module (top level, functions,
``TYPE_CHECKING`` blocks) is an edge to the project module it names, and to the packages above it
that the importer is not inside (importing ``a.b.c`` from ``x`` runs ``a/__init__.py`` and
``a/b/__init__.py``; a module inside ``a`` has run them already, so a package's ``__init__`` may
gather its own modules' names). Work published by name (``annotation.jobs``) is not an import, by
design.
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("annotation", "scoring", "frontend", "pyramid_app")


def project_modules() -> dict[str, Path]:
    modules = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if "migrations" in parts:
                continue  # historical snapshots, imported by Django's loader, not by the code
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            modules[name] = path
    return modules


def imported(module: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules ``module`` imports, anywhere in its source."""
    is_package = path.name == "__init__.py"
    targets = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module
            # ``from p import x``: x is a submodule when one exists, else a name defined in p.
            names = [
                f"{prefix}.{alias.name}" if f"{prefix}.{alias.name}" in modules else prefix for alias in node.names
            ]
        else:
            continue
        inside = {".".join(module.split(".")[:end]) for end in range(1, module.count(".") + 2)}
        for name in names:
            parts = name.split(".")
            for end in range(1, len(parts) + 1):  # the module and the packages above it, outside the importer's
                candidate = ".".join(parts[:end])
                if candidate in modules and (candidate == name or candidate not in inside) and candidate != module:
                    targets.add(candidate)
    return targets


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, found, counter = {}, {}, set(), [], [], [0]
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def import_graph() -> dict[str, set[str]]:
    modules = project_modules()
    return {module: imported(module, path, modules) for module, path in modules.items()}


def test_the_checker_finds_a_cycle_through_an_import_inside_a_function():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
    source = import_graph()
    assert "annotation.models" in source["annotation.peers.api"] or any(
        target.startswith("annotation.") for target in source["annotation.peers.api"]
    )  # the reader sees imports


def test_no_import_cycle_in_the_project():
    found = cycles(import_graph())
    assert found == [], "import cycles:\n" + "\n".join(" <-> ".join(component) for component in found)
