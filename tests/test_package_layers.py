"""Packages in layers (docs/architecture.md): each top-level package imports only the packages its
layer allows, counting every import statement wherever it stands (a function-local import too) and
every ``importlib.import_module`` call with a literal name; and no two packages import each other,
directly or round a loop. The stages (render, questions, translate, filter) stand side by side on
``ruclevr``, ``assets`` and ``russian``; only ``dataset``, above them all, drives them. Another
package reaches a stage only through its face (``__init__.py``), and inside ``dataset`` the same
holds for its parts by role (``dataset.mera``, ``dataset.publish``, ...: ``DATASET_PARTS``)."""

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
#: A package's public face: the only modules of it another package may import (docs/architecture.md),
#: and the packages still allowed behind it.
#: A stage's command line (``cli``) is public too: ``dataset build`` parses a stage's options with it.
FACES = {
    "render": ({"render", "render.legibility"}, set()),
    "questions": ({"questions", "questions.cli"}, set()),  # questions/__init__.py
    "translate": ({"translate", "translate.cli"}, set()),
    "filter": ({"filter", "filter.cli"}, set()),
}
#: Packages that may import a module by a name computed at run time: none now (``dataset`` imports
#: the stages by their literal names).
DYNAMIC_IMPORTERS: set[str] = set()
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
    assert violations(local) == ["filter.planted -> questions.cli"]  # questions is no layer of filter's
    by_name = plant(tmp_path, "render.planted", "import importlib\n\nMAIN = importlib.import_module('translate.cli').main\n")
    assert violations(by_name) == ["render.planted -> translate.cli"]
    computed = plant(tmp_path, "ruclevr.planted", "from importlib import import_module\n\n"
                                                          "def run(stage):\n    return import_module(f'{stage}.cli')\n")
    assert violations(computed) == ["ruclevr.planted -> import_module(a computed name)"]
    in_dataset = plant(tmp_path, "dataset.planted_run", "from importlib import import_module\n\n"
                                                         "def run(stage):\n    return import_module(f'{stage}.cli')\n")
    assert violations(in_dataset) == ["dataset.planted_run -> import_module(a computed name)"]
    private = plant(tmp_path, "translate.planted", "from questions.generate import generate_chunks\n")
    assert violations(private) == ["translate.planted -> questions.generate"]  # not questions' face
    inside = plant(tmp_path, "dataset.planted", "from render.farm.worker import render_index\n")
    assert violations(inside) == ["dataset.planted -> render.farm.worker"]  # render's face is render/__init__.py
    behind = plant(tmp_path, "dataset.planted", "def f():\n    from filter.morph_words import noun_phrases\n")
    assert violations(behind) == ["dataset.planted -> filter.morph_words"]  # filter's face is filter/__init__.py


#: ``dataset``'s parts and the parts each may import (docs/architecture.md): a subpackage is a part, and
#: the flat modules (the command line and ``dataset build``: ``cli``, ``build``, ...) are ``dataset``, the
#: top, which may import every part. One part imports another only through its face, ``__init__.py``.
DATASET_PARTS: dict[str, set[str]] = {
    "dataset.mera": set(),  # the MERA document: export, splits, prompts, EM rules, statistics
    "dataset.evaluation": {"dataset.mera"},
    "dataset.publish": {"dataset.mera", "dataset.evaluation"},
    "dataset.releases": {"dataset.mera"},
    "dataset.families": set(),
    "dataset.annotate": {"dataset.mera", "dataset.evaluation", "dataset.publish"},
    "dataset.augment": {"dataset.mera"},
    "dataset.pairs": {"dataset.mera", "dataset.augment"},
}
DATASET_TOP = "dataset"
def dataset_part(module: str) -> str | None:
    """The part of ``dataset`` a module belongs to (None outside ``dataset``)."""
    parts = module.split(".")
    if parts[0] != "dataset":
        return None
    return DATASET_TOP if len(parts) == 1 or f"dataset.{parts[1]}" not in DATASET_PARTS else f"dataset.{parts[1]}"


def dataset_violations(graph: Mapping[str, Iterable[str]]) -> list[str]:
    """Every import between parts of ``dataset`` that goes up or sideways, or behind a part's face."""
    found = []
    for module, targets in sorted(graph.items()):
        source = dataset_part(module)
        if source is None:
            continue
        allowed = set(DATASET_PARTS) if source == DATASET_TOP else DATASET_PARTS[source]
        for target in sorted(t for t in targets if t != UNKNOWN):
            imported = dataset_part(target)
            if imported is None or imported == source:
                continue
            if imported not in allowed:
                found.append(f"{module} -> {target}")
            elif target != imported:
                found.append(f"{module} -> {target} (behind {imported}'s face)")
    return found


def dataset_part_graph(graph: Mapping[str, Iterable[str]]) -> dict[str, set[str]]:
    parts: dict[str, set[str]] = {part: set() for part in (*DATASET_PARTS, DATASET_TOP)}
    for module, targets in graph.items():
        source = dataset_part(module)
        if source is not None:
            parts[source].update(p for t in targets if t != UNKNOWN and (p := dataset_part(t)) not in (None, source))
    return parts


def test_every_subpackage_of_dataset_is_a_part_with_a_face():
    folder = Path(__file__).resolve().parents[1] / "dataset"
    subpackages = {f"dataset.{path.parent.name}" for path in folder.glob("*/__init__.py")}
    assert subpackages == set(DATASET_PARTS)
    for part in DATASET_PARTS:
        face = ast.parse((folder / part.split(".")[1] / "__init__.py").read_text(encoding="utf-8"))
        assert any(isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "__all__"
                   for node in face.body), f"{part}/__init__.py has no __all__"


def test_the_parts_of_dataset_import_each_other_down_and_through_their_faces():
    assert dataset_violations(project_imports()) == []
    assert cycles(dataset_part_graph(project_imports())) == []


def test_a_planted_import_behind_a_face_or_up_inside_dataset_fails(tmp_path):
    private = plant(tmp_path, "dataset.publish.planted", "from dataset.mera.export import place_image\n")
    assert dataset_violations(private) == ["dataset.publish.planted -> dataset.mera.export (behind dataset.mera's face)"]
    upward = plant(tmp_path, "dataset.mera.planted", "def f():\n    from dataset.publish import write_hf_copy\n")
    assert dataset_violations(upward) == ["dataset.mera.planted -> dataset.publish"]
    top = plant(tmp_path, "dataset.planted", "import importlib\n\nJUDGE = importlib.import_module('dataset.evaluation.judge')\n")
    assert dataset_violations(top) == ["dataset.planted -> dataset.evaluation.judge (behind dataset.evaluation's face)"]
    sideways = plant(tmp_path, "dataset.releases.planted", "from dataset.evaluation import score_predictions\n")
    assert dataset_violations(sideways) == ["dataset.releases.planted -> dataset.evaluation"]


def test_a_planted_loop_between_two_stages_is_a_package_loop(tmp_path):
    modules = plant(tmp_path, "questions.planted", "def f():\n    import translate.native\n")
    assert cycles(package_graph(modules)) == [["questions", "translate"]]
