"""CoGenT conditions: which colours each shape may take, in the sampler and through ``python -m render``."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest
from helpers import run_stage_process

from render.conditions import complement, condition_from_rules, load_condition
from render.sampler import SceneOptions
from render.scene_graph import sample_scene_graph
from ruclevr.cli import UsageError
from ruclevr.io import read_json

GROUP_A = {"gray", "blue", "brown", "yellow"}
GROUP_B = {"red", "green", "purple", "cyan"}
EVERY_COLOR = GROUP_A | GROUP_B


def colours_by_shape(condition: str | None, scenes: int = 1000) -> dict[str, set[str]]:
    options = SceneOptions(condition=load_condition(condition) if condition else None)
    seen: dict[str, set[str]] = defaultdict(set)
    for index in range(scenes):
        for obj in sample_scene_graph(0, index, options)["objects"]:
            seen[obj["shape"]].add(obj["color"])
    return seen


def test_condition_a_over_1000_scenes():
    seen = colours_by_shape("cogent-a")
    assert seen["cube"] == GROUP_A  # no red, green, purple or cyan cube, and every allowed colour appears
    assert seen["cylinder"] == GROUP_B  # no gray, blue, brown or yellow cylinder
    assert seen["sphere"] == EVERY_COLOR


def test_condition_b_over_1000_scenes():
    seen = colours_by_shape("cogent-b")
    assert seen["cube"] == GROUP_B
    assert seen["cylinder"] == GROUP_A
    assert seen["sphere"] == EVERY_COLOR


def test_no_condition_is_unchanged():
    seen = colours_by_shape(None, scenes=200)
    assert all(colours == EVERY_COLOR for colours in seen.values())
    assert sample_scene_graph(3, 7) == sample_scene_graph(3, 7, SceneOptions(condition=None))


def test_a_and_b_are_each_others_complement():
    assert complement(load_condition("cogent-a")).colors == load_condition("cogent-b").colors


def test_a_rule_file_in_the_same_form(tmp_path):
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"sphere": ["red"], "cube": ["blue", "green"]}))
    seen = colours_by_shape(str(rules), scenes=200)
    assert seen["sphere"] == {"red"} and seen["cube"] == {"blue", "green"} and seen["cylinder"] == EVERY_COLOR


@pytest.mark.parametrize(
    "rules, message",
    [
        ({"pyramid": ["red"]}, "unknown shape 'pyramid'"),
        ({"cube": ["teal"]}, "unknown colour 'teal' for cube"),
        ({"cube": []}, "cube needs a non-empty list of colours"),
        ([], "expected a JSON object"),
    ],
)
def test_bad_rules_are_refused(rules, message):
    with pytest.raises(UsageError, match=message):
        condition_from_rules("rules.json", rules)


def test_bad_rule_file_is_one_line_exit_2_and_nothing_written(tmp_path):
    rules = tmp_path / "rules.json"
    rules.write_text('{"cube": ["teal"]}')
    out = tmp_path / "OUT"
    for spec, message in ((str(rules), "unknown colour 'teal'"), (str(tmp_path / "none.json"), "does not exist")):
        result = run_stage_process("render", "--n", "1", "--condition", spec, "--out", out, timeout=120)
        lines = result.stderr.strip().splitlines()
        assert result.returncode == 2 and len(lines) == 1 and message in lines[0] and "Traceback" not in result.stderr
        assert not out.exists()


@pytest.mark.blender
def test_a_tiny_real_render_under_condition_b_records_it(tmp_path):
    out = tmp_path / "OUT"
    result = run_stage_process("render", "--n", "3", "--width", "64", "--height", "48", "--samples", "1", "--device", "cpu",
                               "--condition", "cogent-b", "--seed", "4", "--out", out, timeout=600)
    assert result.returncode == 0, result.stderr
    scenes = read_json(out / "scenes.json")
    condition = scenes["info"]["scene_options"]["condition"]
    assert condition == {"name": "cogent-b", "colors": {"cube": ["red", "green", "purple", "cyan"],
                                                         "cylinder": ["gray", "blue", "brown", "yellow"]}}
    assert len(scenes["scenes"]) == 3
    for scene in scenes["scenes"]:
        assert (out / "images" / scene["image_filename"]).stat().st_size > 0
        for obj in scene["objects"]:
            assert not (obj["shape"] == "cube" and obj["color"] in GROUP_A)
            assert not (obj["shape"] == "cylinder" and obj["color"] in GROUP_B)
