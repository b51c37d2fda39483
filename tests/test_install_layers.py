"""Installation in layers: the default offline pipeline needs only the core dependencies."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("torch", "transformers", "ray")


def project() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!\[ ;]", requirement, maxsplit=1)[0].lower() for requirement in requirements}


def test_core_dependencies_leave_out_torch_transformers_and_ray() -> None:
    core = names(project()["dependencies"])
    assert not core & set(HEAVY)
    extras = project()["optional-dependencies"]
    assert "transformers" in names(extras["ml"]) and "ray" in names(extras["ray"]) and "pytest" in names(extras["dev"])
    assert "crowd-kit" in names(extras["crowd"])
    assert extras["all"] == ["ruclevr[ml,ray,dev,crowd]"]


def test_make_dataset_installs_the_core_and_make_test_everything() -> None:
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    core_recipe = makefile.split("$(VENV)/.core: pyproject.toml", 1)[1].split("\n\n", 1)[0]
    assert "-e ." in core_recipe and "torch" not in core_recipe and "[all]" not in core_recipe
    assert re.search(r"^dataset: install-core$", makefile, flags=re.M)
    assert re.search(r"^test: install browser$", makefile, flags=re.M)


def test_default_pipeline_stages_never_import_torch_transformers_or_ray(tmp_path) -> None:
    script = textwrap.dedent(
        f"""
        import sys
        from pathlib import Path
        sys.path.insert(0, {str(Path(__file__).resolve().parent)!r})  # the tests' sample outputs
        from sample_outputs import tiny_png
        from render import sample_scene_graph
        from ruclevr.io import atomic_write_bytes, atomic_write_json
        from dataset.cli import main as dataset
        from filter.cli import main as filter_stage
        from questions.cli import main as questions
        from translate.cli import main as translate

        root = Path({str(tmp_path)!r})
        scenes = [sample_scene_graph(0, index) for index in range(4)]  # the renderer's scene graphs, without Blender
        for scene in scenes:
            atomic_write_bytes(root / "render" / "images" / scene["image_filename"], tiny_png(scene["image_index"]))
        atomic_write_json(root / "render" / "scenes.json", {{"info": {{}}, "scenes": scenes}})
        inputs = {{"scenes": root / "render" / "scenes.json"}}
        assert questions(["--in", str(inputs["scenes"]), "--out", str(root / "q.json"), "-q"]) == 0
        assert translate(["--in", str(root / "q.json"), "--out", str(root / "ru.json"), "-q"]) == 0
        assert filter_stage(["--in", str(root / "ru.json"), "--out", str(root / "kept.json"), "-q"]) == 0
        assert dataset(["export", "--questions", str(root / "kept.json"), "--scenes", str(inputs["scenes"]),
                        "--out", str(root / "mera"), "--shots", "2", "-q"]) == 0
        assert dataset(["hf", "--data", str(root / "mera"), "--out", str(root / "hf"), "-q"]) == 0
        print(sorted(m for m in {HEAVY!r} if m in sys.modules))
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-1] == "[]"
