"""``render verify`` recomputes each scene's geometry (render/farm/verify_geometry.py): a record moved
or with emptied relationships is caught, on a real tiny render and on graph-only scenes."""

from __future__ import annotations

import copy
import json
import shutil
from functools import partial
from pathlib import Path

import pytest
from helpers import run_stage_process

from render import sample_scene_graph
from render.farm.verify_geometry import geometry_problems
from render.model.camera import Camera
from render.model.relations import directions, pixel_coords, relationships
from ruclevr.io import read_json

run = partial(run_stage_process, "render")
N = 3
TINY = ["--width", "64", "--height", "48", "--samples", "1", "--device", "cpu", "--seed", "5"]


def moved(scene: dict, k: int, dx: float, dpx: int) -> dict:
    """Object ``k`` moved by ``dx`` along x in its 3d_coords and by ``dpx`` in its pixel x: the edit of the probe."""
    scene = copy.deepcopy(scene)
    scene["objects"][k]["3d_coords"][0] += dx
    scene["objects"][k]["pixel_coords"][0] += dpx
    return scene


def emptied(scene: dict) -> dict:
    scene = copy.deepcopy(scene)
    scene["relationships"] = {name: [[] for _ in lists] for name, lists in scene["relationships"].items()}
    return scene


def test_the_renderers_records_have_no_geometry_problem() -> None:
    assert [problem for index in range(100) for problem in geometry_problems(index, sample_scene_graph(3, index))] == []


def test_a_move_and_emptied_relationships_are_caught_on_graph_only_scenes() -> None:
    scene = sample_scene_graph(3, 1)
    problems = geometry_problems(1, moved(scene, 0, 2.0, 40))
    assert any("object 0's pixel_coords" in line for line in problems), problems
    assert any("relationships[" in line for line in emptied_lines(scene)), emptied_lines(scene)
    lifted = copy.deepcopy(scene)
    lifted["objects"][2]["3d_coords"][2] += 0.5
    assert any("object 2 does not stand on the floor" in line for line in geometry_problems(1, lifted))
    recamera = copy.deepcopy(scene)
    recamera["camera"]["matrix_world"][0][3] += 1.0
    assert any("matrix_world" in line for line in geometry_problems(1, recamera))


def emptied_lines(scene: dict) -> list[str]:
    return geometry_problems(scene["image_index"], emptied(scene))


def write_both(folder: Path, index: int, scene: dict) -> None:
    """The edited scene into its scene file and into scenes.json: both stay valid and agree."""
    merged = read_json(folder / "scenes.json")
    merged["scenes"] = [scene if entry["image_index"] == index else entry for entry in merged["scenes"]]
    (folder / "scenes.json").write_text(json.dumps(merged))
    (folder / "scenes" / f"ruclevr_{index:06d}.json").write_text(json.dumps(scene))


def recomputed(scene: dict) -> dict:
    """The record made consistent again after a move: pixel_coords and relationships from the new 3d_coords."""
    camera = Camera.from_dict(scene["camera"])
    coords = [obj["3d_coords"] for obj in scene["objects"]]
    for obj, pixel in zip(scene["objects"], pixel_coords(camera, coords), strict=True):
        obj["pixel_coords"] = pixel
    scene["relationships"] = relationships(coords, directions(camera))
    return scene


@pytest.mark.blender
def test_verify_catches_a_move_and_emptied_relationships_in_both_scene_files(tmp_path) -> None:
    out = tmp_path / "render"
    result = run("--n", str(N), *TINY, "--out", str(out))
    assert result.returncode == 0, result.stderr
    clean = run("verify", str(out))
    assert clean.returncode == 0, clean.stdout  # the real masks' boxes lie inside the poses' projected boxes
    broken = tmp_path / "broken"
    shutil.copytree(out, broken)
    scenes = {entry["image_index"]: entry for entry in read_json(out / "scenes.json")["scenes"]}
    write_both(broken, 0, moved(scenes[0], 0, 2.0, 40))
    write_both(broken, 1, emptied(scenes[1]))
    # A move made consistent (pixel coordinates and relationships recomputed): only the image tells.
    write_both(broken, 2, recomputed(moved(scenes[2], 0, 2.0, 0)))
    result = run("verify", str(broken))
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert any(line.startswith("index 0: object 0's pixel_coords") for line in lines), lines
    assert any(line.startswith("index 1: relationships[") for line in lines), lines
    assert any(line.startswith("index 2: object 0's visible box") for line in lines), lines
    assert not any(line.startswith("index 2: object 0's pixel_coords") for line in lines)
