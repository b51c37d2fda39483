"""Occlusion read from masks: the records (render/model/occlusion.py) and their judgement (questions/occlusion.py).

The first tests use masks drawn by hand; the last renders a scene with real bpy, renders every
object again alone (Blender's own unoccluded silhouette, not the convex hull the record uses) and
recomputes who covers whom from those masks and the scene's instance mask, independently of the
record's code.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from questions.occlusion import CLEAR_NO, CLEAR_YES, HIDDEN_SHARE, UNCLEAR, pair_judgement, scene_occlusion
from render.model.occlusion import grown, occlusion_records, polygon_pixels, upper_half


def square(height: int, width: int, top: int, left: int, size: int) -> np.ndarray:
    region = np.zeros((height, width), dtype=bool)
    region[top:top + size, left:left + size] = True
    return region


def test_a_convex_outline_covers_the_pixels_whose_centre_it_holds():
    outline = np.array([[1.0, 1.0], [5.0, 1.0], [5.0, 4.0], [1.0, 4.0]])  # counter-clockwise in (x, y)
    inside = polygon_pixels(outline, 6, 8)
    assert inside.sum() == 12 and inside[1:4, 1:5].all()
    assert not polygon_pixels(np.array([[20.0, 20.0], [30.0, 20.0], [30.0, 30.0]]), 6, 8).any()  # out of frame


def test_growing_a_pixel_by_two_gives_a_five_by_five_square():
    assert grown(square(9, 9, 4, 4, 1), 2).sum() == 25


def test_the_mask_says_who_covers_whom():
    """Object 1 (a 10x10 square) stands in front of object 0 (its own 10x10 square, 30 pixels behind 1);
    object 2 is apart from both."""
    height, width = 30, 40
    behind, front, apart = square(height, width, 5, 5, 10), square(height, width, 5, 12, 10), square(height, width, 20, 30, 5)
    mask = np.zeros((height, width), dtype=np.uint8)
    mask[behind] = 1
    mask[front] = 2  # drawn last: nearer the camera
    mask[apart] = 3
    records = occlusion_records(mask, [behind, front, apart])
    assert records[0] == {"silhouette_pixels": 100, "covered_by": [[1, 30]], "near": [[1, 50]], "covered_upper": [[1, 15]]}
    assert records[1]["covered_by"] == [] and records[1]["near"] == [[0, 20]]  # 0's pixels within two of 1
    assert records[2] == {"silhouette_pixels": 25, "covered_by": [], "near": [], "covered_upper": []}
    assert pair_judgement(records, 0, 1) == CLEAR_YES  # 30 % of 0 covered
    assert pair_judgement(records, 1, 0) == CLEAR_NO  # 0 covers none of 1 and 1 covers 30 px of 0: 0 stands behind
    occlusion = scene_occlusion([{"occlusion": record} for record in records])
    assert occlusion is not None
    assert occlusion.hidden == 0b001 and occlusion.unhidden == 0b110 and occlusion.hiders[0] == 0b010


def test_the_upper_half_is_the_rows_above_the_middle_of_the_silhouette():
    assert upper_half(square(20, 20, 3, 2, 10)).sum() == 50  # rows 3..7 of 3..12
    assert upper_half(square(20, 20, 3, 2, 9)).sum() == 36  # rows 3..6; row 7 is the middle, not above it


def test_a_cover_along_the_lower_edge_only_is_unclear_and_one_cutting_a_side_hides():
    """A disc (the sphere a crowd took for whole) behind a wide block: its lower third covered reads as a
    round cap, so unclear; the same block moved up-left so that it cuts the disc's side: clearly hidden."""
    height, width = 40, 60
    ys, xs = np.mgrid[0:height, 0:width]
    disc = (xs + 0.5 - 30) ** 2 + (ys + 0.5 - 20) ** 2 <= 10 ** 2
    below = np.zeros((height, width), dtype=bool)
    below[24:40, 5:55] = True  # its top edge 4 rows under the disc's centre
    beside = np.zeros((height, width), dtype=bool)
    beside[5:40, 0:26] = True  # the disc's left side, from above its centre to below it
    for front, expected in ((below, UNCLEAR), (beside, CLEAR_YES)):
        mask = np.zeros((height, width), dtype=np.uint8)
        mask[disc] = 1
        mask[front] = 2
        records = occlusion_records(mask, [disc, front])
        share = dict(map(tuple, records[0]["covered_by"]))[1] / records[0]["silhouette_pixels"]
        assert share >= HIDDEN_SHARE  # large enough either way: where it lies decides
        assert pair_judgement(records, 0, 1) == expected
        occlusion = scene_occlusion([{"occlusion": record} for record in records])
        assert occlusion is not None and bool(occlusion.hidden & 1) == (expected == CLEAR_YES)
        assert not occlusion.unhidden & 1
    old = {key: value for key, value in records[0].items() if key != "covered_upper"}  # a record made before the rule
    assert pair_judgement([old, records[1]], 0, 1) == UNCLEAR
    occlusion = scene_occlusion([{"occlusion": old}, {"occlusion": records[1]}])
    assert occlusion is not None and occlusion.unclear & 1


def test_a_sliver_or_a_touch_is_unclear_and_a_scene_without_records_has_no_occlusion():
    records = [
        {"silhouette_pixels": 200, "covered_by": [[1, 4]], "near": [[1, 12]]},  # 2 % covered: too little to see
        {"silhouette_pixels": 200, "covered_by": [], "near": [[0, 3]]},  # touches 0, and covers only 4 of it
    ]
    assert pair_judgement(records, 0, 1) == UNCLEAR
    assert pair_judgement(records, 1, 0) == UNCLEAR  # 0 touches 1, and 4 px of 0 under 1 are too few to say 0 is behind
    occlusion = scene_occlusion([{"occlusion": record} for record in records])
    assert occlusion is not None and occlusion.unclear == 0b11 and occlusion.hidden == 0
    assert scene_occlusion([{"occlusion": records[0]}, {}]) is None


@pytest.mark.blender
def test_the_recorded_occlusion_is_what_blender_draws_each_object_alone_against_the_mask(tmp_path):
    """A real render (seed 7, index 24 at 96x64: object 0 stands 31 % behind object 2, which cuts its side, and
    object 1 is in full view), its
    mask PNG read back, and every object rendered again alone: who covers whom is recomputed from
    Blender's own silhouettes, and the record and its judgement must agree with it."""
    from PIL import Image

    from render import DeviceChoice, engine_factory, scene_from_graph, settings_from_record
    from render.cli import main as render_main

    out = tmp_path / "render"
    assert render_main(["--n", "1", "--start-index", "24", "--seed", "7", "--width", "96", "--height", "64", "--samples", "1",
                        "--min-objects", "3", "--max-objects", "4", "--device", "cpu", "--workers", "1", "--out", str(out),
                        "--quiet"]) == 0
    scene = json.loads((out / "scenes.json").read_text(encoding="utf-8"))["scenes"][0]
    with Image.open(out / "masks" / scene["image_filename"]) as image:
        mask = np.asarray(image)
    sampled = scene_from_graph(scene)
    session = engine_factory("cycles")(settings_from_record(scene["render"]), DeviceChoice("cpu", ()))
    try:
        alone = [session.render_mask(dataclasses.replace(sampled, objects=(obj,))) != 0 for obj in sampled.objects]
    finally:
        session.close()
    recorded = [obj["occlusion"] for obj in scene["objects"]]
    for i, silhouette in enumerate(alone):
        assert abs(recorded[i]["silhouette_pixels"] - int(silhouette.sum())) <= 2
        for j in range(len(alone)):
            if j == i:
                continue
            covered = int((silhouette & (mask == j + 1)).sum())  # Blender's silhouette of i showing j in the mask
            assert abs(dict(map(tuple, recorded[i]["covered_by"])).get(j, 0) - covered) <= 2, (i, j)
    again = [recomputed_record(i, alone, mask) for i in range(len(alone))]
    mine, theirs = scene_occlusion(scene["objects"]), scene_occlusion([{"occlusion": record} for record in again])
    assert mine is not None and theirs is not None
    assert mine == theirs
    assert mine.hidden == 0b0001 and mine.hiders[0] == 0b0100 and mine.unhidden & 0b0010  # the case the scene was chosen for

    from render.farm.verify import main as verify_main

    assert verify_main([str(out), "--quiet"]) == 0
    older = {**scene, "objects": [{**obj, "occlusion": {k: v for k, v in obj["occlusion"].items() if k != "covered_upper"}}
                                  for obj in scene["objects"]]}
    write_scene(out, scene, older)
    assert verify_main([str(out), "--quiet"]) == 0  # a record made before covered_upper stays valid
    edited = {**scene, "objects": [dict(obj) for obj in scene["objects"]]}
    edited["objects"][0]["occlusion"] = {**recorded[0], "covered_by": []}  # as if nothing stood in front of it
    write_scene(out, scene, edited)
    assert verify_main([str(out), "--quiet"]) == 1  # a record the mask does not give is named


def write_scene(out: Path, scene: dict, edited: dict) -> None:
    """Replace ``scene`` by ``edited`` in the render folder's scene file and its merged scenes.json."""
    scene_file = out / "scenes" / scene["image_filename"].replace(".png", ".json")
    scene_file.write_text(json.dumps(edited), encoding="utf-8")
    merged = json.loads((out / "scenes.json").read_text(encoding="utf-8"))
    (out / "scenes.json").write_text(json.dumps({**merged, "scenes": [edited]}), encoding="utf-8")


def recomputed_record(i: int, alone: list[np.ndarray], mask: np.ndarray) -> dict:
    """Object ``i``'s record from Blender's silhouettes and the mask, by the definition (no code of render/model)."""
    near = alone[i]
    for _ in range(2):  # two pixels out, into the 8-neighbourhood
        padded = np.pad(near, 1)
        near = np.logical_or.reduce([padded[dy:dy + mask.shape[0], dx:dx + mask.shape[1]] for dy in range(3) for dx in range(3)])
    others = [j for j in range(len(alone)) if j != i]
    rows = np.flatnonzero(alone[i].any(axis=1))
    upper = alone[i].copy()
    upper[(rows[0] + rows[-1] + 1) // 2:] = False  # rows whose centre lies above the middle of the rows it spans
    return {
        "silhouette_pixels": int(alone[i].sum()),
        "covered_by": [[j, int((alone[i] & (mask == j + 1)).sum())] for j in others if (alone[i] & (mask == j + 1)).any()],
        "near": [[j, int((near & (mask == j + 1)).sum())] for j in others if (near & (mask == j + 1)).any()],
        "covered_upper": [[j, int((upper & (mask == j + 1)).sum())] for j in others if (upper & (mask == j + 1)).any()],
    }


def test_an_object_showing_less_than_half_of_itself_is_not_counted_or_asked_about():
    from questions.functions import ExecutionError, including_occluded, is_occluded, occluders_of
    from questions.scene_index import SceneIndex

    scene = json.loads((Path(__file__).parent / "data" / "questions" / "scene_row.json").read_text(encoding="utf-8"))
    assert including_occluded(SceneIndex.from_scene(scene), 0b00110) == 0b00110  # 2 shows 70 % of itself
    scene["objects"][2]["occlusion"]["covered_by"] = [[1, 160]]  # now 1 covers 53 % of 2: 47 % shows
    index = SceneIndex.from_scene(scene)
    for ask in (lambda: including_occluded(index, 0b00110), lambda: is_occluded(index, 2), lambda: occluders_of(index, 2)):
        with pytest.raises(ExecutionError, match="too little"):
            ask()
    assert is_occluded(index, 0) is False  # the others are asked about as before


def test_a_scene_without_occlusion_records_asks_no_occlusion_question_and_validate_realise_passes(tmp_path, capsys):
    from dataset.cli import main as dataset_main
    from questions.families import load_families
    from questions.occlusion import uses_occlusion
    from questions.scene_questions import QuestionMaker, RunState, Settings
    from render import sample_scene_graph

    occlusion = {name: family for name, family in load_families().items() if uses_occlusion(family.program)}
    assert len(occlusion) == 6
    scene = json.loads((Path(__file__).parent / "data" / "questions" / "scene_row.json").read_text(encoding="utf-8"))
    maker = QuestionMaker(occlusion, Settings(seed=0, per_image=6))
    assert {q["family"] for q in maker.questions_for_scene(scene, RunState())} != set()  # the hand scene records it
    graph = sample_scene_graph(0, 3)
    assert maker.questions_for_scene(graph, RunState()) == []
    folder = tmp_path / "families"
    folder.mkdir()
    (folder / "occlusion.yaml").write_text((Path(__file__).parents[1] / "questions" / "families" / "occlusion.yaml").read_text(encoding="utf-8"))
    assert dataset_main(["families", "validate", str(folder), "--realise", "2"]) == 0  # sampled graphs: asked on none, no problem
    assert "occlusion/is_hidden: 0 questions" in capsys.readouterr().out
