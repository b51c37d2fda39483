"""``ruclevr.names``: the one home of derived file names (scene stems, an output's companions),
and the stages naming their files through it."""

from __future__ import annotations

import ast
from pathlib import Path

from dataset.mera.layout import QuestionStageFiles
from filter.pipeline import OutputPaths
from render import OutputLayout
from render.model.sampler import SceneOptions
from render.model.scene_graph import image_filename
from ruclevr.names import beside, scene_stem

ROOT = Path(__file__).resolve().parents[1]


def test_scene_stem_and_companion_names() -> None:
    assert scene_stem("ruclevr", 42) == "ruclevr_000042"
    assert scene_stem("swap", 1234567) == "swap_1234567"
    assert beside("out/questions.json", ".partial") == Path("out/questions.json.partial")
    assert beside(Path("/a/b"), ".parts") == Path("/a/b.parts")


def test_render_names_every_file_of_a_scene_by_the_one_stem(tmp_path: Path) -> None:
    layout = OutputLayout(tmp_path, prefix="ruclevr")
    assert image_filename(7, SceneOptions()) == layout.image_path(7).name == "ruclevr_000007.png"
    assert layout.mask_path(7).stem == layout.stem(7) == scene_stem("ruclevr", 7)


def test_the_filter_companions_are_named_once_and_read_there_by_build_and_gallery(tmp_path: Path) -> None:
    files = QuestionStageFiles(tmp_path)
    paths = OutputPaths.beside(files.kept)
    assert files.rejected == paths.rejected == tmp_path / "questions_ru_kept.rejected.jsonl"
    assert paths.report.name == "questions_ru_kept.report.json" and paths.scores.name == "questions_ru_kept.scores.sqlite"


def test_no_product_module_formats_a_scene_number_of_its_own() -> None:
    offenders = []
    for package in ("render", "questions", "translate", "filter", "dataset"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.FormattedValue) and isinstance(node.format_spec, ast.JoinedStr):
                    spec = "".join(v.value for v in node.format_spec.values if isinstance(v, ast.Constant))
                    named = node.value.id if isinstance(node.value, ast.Name) else getattr(node.value, "attr", "")
                    if spec == "06d" and "index" in named:
                        offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not offenders
