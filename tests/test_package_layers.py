"""Packages in layers (docs/architecture.md): each top-level package imports only the packages its
layer allows, counting every import statement wherever it stands (a function-local import too) and
every ``importlib.import_module`` call with a literal name; and no two packages import each other,
directly or round a loop. The stages (render, questions, translate, filter) stand side by side on
``ruclevr``, ``assets`` and ``russian``; only ``dataset``, above them all, drives them."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path

from test_import_cycles import cycles, imported_names, project_modules

BASE = {"ruclevr", "assets"}
#: The packages each package may import (besides itself).
ALLOWED: dict[str, set[str]] = {
    "ruclevr": set(),
    "assets": {"ruclevr"},
    "russian": BASE,  # Russian knowledge: morphology of the vocabulary's words
    "render": BASE,
    "questions": BASE,
    "translate": BASE | {"russian", "questions"},  # questions' face only, see FACES
    "filter": BASE | {"russian"},
    "dataset": BASE | {"russian", "render", "questions", "translate", "filter"},
}
#: A package's public face: the only modules of it another package may import (docs/architecture.md).
#: ``questions``' face holds for the stages: ``dataset`` still reaches inside it (issue 34's next part).
FACES = {
    "render": ({"render", "render.legibility"}, set()),
    "questions": ({"questions", "questions.families", "questions.family", "questions.family_sources",
                   "questions.readings", "questions.validator"}, {"dataset"}),
}
#: Packages that may import a module by a name computed at run time (``dataset`` runs the stages).
DYNAMIC_IMPORTERS = {"dataset"}
UNKNOWN = "?"  # an import_module call whose name is not a literal


def dynamic_imports(path: Path) -> set[str]:
    """The names ``importlib.import_module`` (or a bare ``import_module``) is called with in a file;
    UNKNOWN for a name that is not a string literal."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if not isinstance(node, ast.Call):
            continue
        function = node.func
        called = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", None)
        if called != "import_module":
            continue
        first = node.args[0] if node.args else None
        literal = isinstance(first, ast.Constant) and isinstance(first.value, str)
        names.add(first.value if literal else UNKNOWN)  # type: ignore[union-attr]
    return names


def module_imports(module: str, path: Path, known: Iterable[str]) -> set[str]:
    """The project modules one file imports, statically or through import_module (UNKNOWN kept)."""
    known = set(known)
    targets = set()
    for name in imported_names(module, path) | dynamic_imports(path):
        if name == UNKNOWN:
            targets.add(UNKNOWN)
            continue
        while name and name not in known:
            name = name.rpartition(".")[0]
        if name and name != module:
            targets.add(name)
    return targets


@cache
def project_imports() -> dict[str, frozenset[str]]:
    """Module -> the project modules it imports, for every module of the project (read once)."""
    modules = project_modules()
    return {module: frozenset(module_imports(module, path, modules)) for module, path in modules.items()}


def package_of(module: str) -> str:
    return module.split(".")[0]


def violations(graph: Mapping[str, Iterable[str]]) -> list[str]:
    """Every import that crosses a layer the wrong way, as ``module -> imported``."""
    found = []
    for module, targets in sorted(graph.items()):
        source = package_of(module)
        for target in sorted(targets):
            if target == UNKNOWN:
                if source not in DYNAMIC_IMPORTERS:
                    found.append(f"{module} -> import_module(a computed name)")
                continue
            imported = package_of(target)
            if imported == source:
                continue
            if imported not in ALLOWED[source] or not behind_face(source, target):
                found.append(f"{module} -> {target}")
    return found


def behind_face(source: str, target: str) -> bool:
    """Whether package ``source`` may import module ``target`` of another package: it is in that
    package's face, or the package has none yet (or none ``source`` must keep to)."""
    face, exempt = FACES.get(package_of(target), (None, set()))
    return face is None or source in exempt or target in face


def package_graph(graph: Mapping[str, Iterable[str]]) -> dict[str, set[str]]:
    packages: dict[str, set[str]] = {package: set() for package in ALLOWED}
    for module, targets in graph.items():
        packages[package_of(module)].update(package_of(t) for t in targets if t != UNKNOWN and package_of(t) != package_of(module))
    return packages


def test_every_package_of_the_project_has_a_layer():
    assert {package_of(module) for module in project_modules()} == set(ALLOWED)


def test_every_package_imports_only_what_its_layer_allows():
    assert violations(project_imports()) == []


def test_no_package_loop():
    assert cycles(package_graph(project_imports())) == []


def plant(folder: Path, module: str, source: str) -> dict[str, frozenset[str]]:
    """The project's imports with one more module, written to ``folder`` and read as the project's are."""
    path = folder / f"{module.replace('.', '_')}.py"
    path.write_text(source, encoding="utf-8")
    graph = dict(project_imports())
    graph[module] = frozenset(module_imports(module, path, graph))
    return graph


def test_a_planted_upward_import_fails_the_check_even_inside_a_function_or_through_importlib(tmp_path):
    local = plant(tmp_path, "filter.planted", "def f():\n    from questions.cli import main\n    return main\n")
    assert violations(local) == ["filter.planted -> questions.cli"]
    by_name = plant(tmp_path, "render.planted", "import importlib\n\nMAIN = importlib.import_module('translate.cli').main\n")
    assert violations(by_name) == ["render.planted -> translate.cli"]
    computed = plant(tmp_path, "ruclevr.planted", "from importlib import import_module\n\n"
                                                          "def run(stage):\n    return import_module(f'{stage}.cli')\n")
    assert violations(computed) == ["ruclevr.planted -> import_module(a computed name)"]
    private = plant(tmp_path, "translate.planted", "from questions.generate import generate_chunks\n")
    assert violations(private) == ["translate.planted -> questions.generate"]  # not questions' face
    inside = plant(tmp_path, "dataset.planted", "from render.farm.worker import render_index\n")
    assert violations(inside) == ["dataset.planted -> render.farm.worker"]  # render's face is render/__init__.py


def test_a_planted_loop_between_two_stages_is_a_package_loop(tmp_path):
    modules = plant(tmp_path, "questions.planted", "def f():\n    import translate.native\n")
    assert cycles(package_graph(modules)) == [["questions", "translate"]]
