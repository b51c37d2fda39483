"""Held-out family files (tests/data/heldout_families/, written as a new user would from docs/, not
shipped) build end to end beside the shipped families: `python -m dataset build --families DIR`, real
bpy at 32×24 with 1 sample, 4 scenes. Every held-out family is asked, said in Russian (none refused,
none rejected by the filter: it keeps every question) and answered as its program answers on the scene graph.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from questions.executor import execute_program
from questions.validator import validate_files
from translate.templates import validate_template

ROOT = Path(__file__).resolve().parents[1]
HELD_OUT = ROOT / "tests" / "data" / "heldout_families"
MIX = "heldout=0.3,heldout_same=0.35,heldout_compare=0.35"


@pytest.mark.blender
def test_the_held_out_families_build_to_mera_items_with_every_family_said_in_russian(tmp_path):
    families, problems = validate_files(sorted(HELD_OUT.glob("*.yaml")), {"ru": validate_template})  # as `dataset families validate`
    assert problems == []
    out = tmp_path / "build"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-m", "dataset", "build", "--families", str(HELD_OUT), "--out", str(out), "--n", "4",
               "--width", "32", "--height", "24", "--samples", "1", "--shots", "1",
               "--questions-args", f"--mix-by group --mix {MIX}"]
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=900, env=env)
    assert result.returncode == 0, result.stderr[-3000:]

    translated = json.loads((out / "questions_ru.json").read_text(encoding="utf-8"))
    assert translated["info"]["translate"]["complete"] and translated["info"]["translate"]["failed"] == []
    scenes = {scene["image_index"]: scene for scene in json.loads((out / "render" / "scenes.json").read_text())["scenes"]}
    asked = set()
    for question in translated["questions"]:
        assert question["question_ru"] and question["question_ru"].endswith("?"), question
        assert execute_program(question["program"], scenes[question["image_index"]]) == question["answer"], question
        asked.add(question["family"])
    assert asked == {family.id for family in families}, asked
    kept = json.loads((out / "questions_ru_kept.json").read_text(encoding="utf-8"))
    rejected = [json.loads(line) for line in (out / "questions_ru_kept.rejected.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(q["question_ru"], q["acceptability"]["reasons"]) for q in rejected] == []
    assert kept["info"]["counts"]["rejected"] == 0
    assert [q["question_ru"] for q in kept["questions"]] == [q["question_ru"] for q in translated["questions"]]
    assert (out / "mera").is_dir() and any((out / "mera").iterdir())
