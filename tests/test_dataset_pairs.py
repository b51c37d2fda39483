"""``python -m dataset pairs``: one change per scene, re-rendered with real bpy, checked in the pixels,
and every group's answers re-executed on the scene graphs; the output exports with its groups whole."""

from __future__ import annotations

import math
import shutil
from collections import Counter

import numpy as np
import pytest
from helpers import run_stage
from PIL import Image

from assets.vocabulary import load_vocabulary
from dataset.mera.document import read_export
from dataset.pairs import KINDS, MIN_REGION_CHANGE, MOVE, REMOVE, Edit, candidate_edits, edited_scene
from questions.executor import execute_program
from render import sample_scene_graph
from render.model.relations import relationships
from ruclevr.io import atomic_write_json, read_json


def test_every_kind_of_edit_changes_one_thing_of_the_graph() -> None:
    scene = sample_scene_graph(3, 0)
    for kind in KINDS:
        edits = list(candidate_edits(scene, kind))
        assert edits, kind
        edit = edits[-1]
        edited = edited_scene(scene, edit)
        if kind == MOVE:
            moved = [k for k, (a, b) in enumerate(zip(scene["objects"], edited["objects"], strict=True)) if a != b]
            assert moved == [edit.target]
            before, after = scene["objects"][edit.target], edited["objects"][edit.target]
            assert after["3d_coords"] == [*edit.place, before["3d_coords"][2]]
            assert math.hypot(after["3d_coords"][0] - before["3d_coords"][0], after["3d_coords"][1] - before["3d_coords"][1]) >= 1
            assert {key for key in before if before[key] != after[key]} <= {"3d_coords", "pixel_coords"}
            assert edited["relationships"] == relationships([obj["3d_coords"] for obj in edited["objects"]], scene["directions"])
            # Every other object stands the sampler's margin apart along the camera's axes, as the sampler places them.
            left = np.asarray(scene["directions"]["left"][:2], float)
            behind = np.asarray(scene["directions"]["behind"][:2], float)
            for k, other in enumerate(edited["objects"]):
                if k != edit.target:
                    offset = np.subtract(after["3d_coords"][:2], other["3d_coords"][:2])
                    assert abs(offset @ left) / np.linalg.norm(left) >= 0.4 and abs(offset @ behind) / np.linalg.norm(behind) >= 0.4
        elif kind == REMOVE:
            assert len(edited["objects"]) == len(scene["objects"]) - 1
            kept = [obj for k, obj in enumerate(scene["objects"]) if k != edit.target]
            assert [obj["3d_coords"] for obj in edited["objects"]] == [obj["3d_coords"] for obj in kept]
            assert [obj["mask_id"] for obj in edited["objects"]] == list(range(1, len(kept) + 1))
            for relation, lists in edited["relationships"].items():  # recomputed: no index of the removed object
                assert all(j < len(kept) for members in lists for j in members), relation
        else:
            attribute = "color" if kind == "recolour" else "material"
            changed = [(k, a, b) for k, (a, b) in enumerate(zip(scene["objects"], edited["objects"], strict=True)) if a != b]
            assert [k for k, _, _ in changed] == [edit.target]
            _, before, after = changed[0]
            assert {key for key in before if before[key] != after[key]} == {attribute}
            assert after[attribute] == edit.value != before[attribute]
            assert edited["relationships"] == scene["relationships"]


def test_an_edited_scene_keeps_no_record_only_a_render_can_tell() -> None:
    # A render's occlusion records name objects by index: after a removal they would point at the wrong ones.
    scene = sample_scene_graph(3, 0)
    for k, obj in enumerate(scene["objects"]):
        obj.update(visible_pixels=100 + k, bbox_2d=[0, 0, 4, 4], occlusion={"hidden_by": [(k + 1) % len(scene["objects"])]})
    for kind in KINDS:
        edited = edited_scene(scene, list(candidate_edits(scene, kind))[-1])
        for obj in edited["objects"]:
            assert not {"occlusion", "visible_pixels", "bbox_2d"} & set(obj), kind


def test_bad_input_is_one_line_and_writes_nothing(tmp_path, capsys) -> None:
    from sample_outputs import write_sample_stage_outputs

    paths = write_sample_stage_outputs(tmp_path / "src", n_scenes=2)
    out = tmp_path / "OUT"
    translated = tmp_path / "no_russian.json"
    document = read_json(paths["questions"])
    for question in document["questions"]:
        question["params"] = {}
    with_params = tmp_path / "with_params.json"
    atomic_write_json(with_params, document)
    for question in document["questions"]:
        del question["question_ru"]
    atomic_write_json(translated, document)
    cases = (
        (["--scenes", str(tmp_path / "missing.json"), "--questions", str(paths["questions"])], "does not exist"),
        (["--scenes", str(paths["scenes"]), "--questions", str(paths["questions"]), "--n", "-3"],
         "must be a positive integer, got -3"),
        (["--scenes", str(paths["scenes"]), "--questions", str(translated)], "question_ru (is it the filter stage's output?)"),
        # Scenes without camera, lights and render settings cannot be rendered again.
        (["--scenes", str(paths["scenes"]), "--questions", str(with_params)],
         "only scenes written by python -m render can be re-rendered"),
    )
    for argv, message in cases:
        status = run_stage("dataset", "pairs", *argv, "--out", str(out), "--device", "cpu")
        error = capsys.readouterr().err
        assert status == 2, argv
        assert message in error and error.count("\n") == 1 and "Traceback" not in error, error
    assert not out.exists()
    before = {path: path.read_bytes() for path in (paths["scenes"], paths["questions"])}
    for argv in (["--out", str(paths["scenes"].parent)], ["--out", str(paths["questions"].parent)]):  # onto its inputs
        status = run_stage("dataset", "pairs", "--scenes", str(paths["scenes"]), "--questions", str(paths["questions"]),
                           *argv, "--device", "cpu")
        error = capsys.readouterr().err
        assert status == 2 and "writing it would change that input" in error and error.count("\n") == 1, error
    assert {path: path.read_bytes() for path in before} == before


@pytest.fixture(scope="module")
def paired(tmp_path_factory):
    """Four scenes rendered by ``python -m render``, asked by ``python -m questions``, realised by
    ``python -m translate``, then made into minimal pairs and exported."""
    from questions.cli import main as questions_main
    from render.cli import main as render_main
    from translate.cli import main as translate_main

    root = tmp_path_factory.mktemp("pairs")
    source = root / "render"
    assert render_main(["--n", "4", "--out", str(source), "--width", "128", "--height", "96", "--samples", "4",
                        "--seed", "5", "--device", "cpu", "--workers", "1"]) == 0
    assert questions_main(["--scenes", str(source / "scenes.json"), "--out", str(root / "questions.json"),
                           "--per-image", "10", "--quiet"]) == 0
    assert translate_main(["--questions", str(root / "questions.json"), "--out", str(root / "questions_ru.json"), "-q"]) == 0
    out = root / "OUT"
    assert run_stage("dataset", "pairs", "--scenes", str(source / "scenes.json"), "--questions", str(root / "questions_ru.json"),
                     "--out", str(out), "--device", "cpu", "--workers", "1") == 0
    assert run_stage("dataset", "export", "--questions", str(out / "questions_ru_kept.json"), "--scenes",
                     str(out / "scenes.json"), "--out", str(out / "mera"), "--shots", "1") == 0
    return {"root": root, "source": source, "out": out}


def frame(folder, name: str) -> tuple[np.ndarray, np.ndarray]:
    with Image.open(folder / "images" / name) as image, Image.open(folder / "masks" / name) as mask:
        return np.asarray(image.convert("RGB")).astype(int), np.asarray(mask)


def mean_colour(image: np.ndarray, mask: np.ndarray, mask_id: int) -> np.ndarray:
    return image[mask == mask_id].mean(axis=0)


@pytest.mark.blender
def test_each_rerender_shows_its_one_change_where_the_object_is(paired) -> None:
    source_dir, out = paired["source"], paired["out"]
    edited_scenes = [scene for scene in read_json(out / "scenes.json")["scenes"] if "augmentation" in scene]
    assert edited_scenes
    vocabulary = load_vocabulary()
    for scene in edited_scenes:
        change = scene["augmentation"]["change"]
        before_image, before_mask = frame(source_dir, scene["augmentation"]["source_image_filename"])
        after_image, after_mask = frame(out, scene["image_filename"])
        region = before_mask == change["object"] + 1
        assert np.abs(before_image - after_image)[region].mean() >= MIN_REGION_CHANGE
        if change["kind"] == REMOVE:
            assert after_mask.max() == len(scene["objects"]), "the removed object has no id left in the mask"
            # Everywhere the removed object was not, each object keeps its pixels under its shifted id.
            shifted = np.where(before_mask > change["object"] + 1, before_mask - 1, before_mask)
            assert np.array_equal(after_mask[~region], shifted[~region])
        elif change["kind"] == MOVE:
            moved = after_mask == change["object"] + 1
            x, y = scene["objects"][change["object"]]["pixel_coords"][:2]
            rows, cols = np.nonzero(moved)
            assert cols.min() <= x <= cols.max() + 1 and rows.min() <= y <= rows.max() + 1, "drawn where it was moved to"
            assert scene["augmentation"]["pixels"]["problems"] == []
        else:
            assert np.array_equal(before_mask, after_mask), "the geometry is the source's"
            assert scene["augmentation"]["pixels"]["problems"] == []
            edited = scene["objects"][change["object"]]
            assert edited[change["attribute"]] == change["to"]
            assert scene["augmentation"]["pixels"]["reading"][change["attribute"]] == change["to"], "legible as recorded"
            if change["attribute"] == "color" and edited["material"] == "rubber":
                now = mean_colour(after_image, after_mask, change["object"] + 1)
                target = np.asarray(vocabulary.srgb(change["to"]), float)
                assert now @ target / np.linalg.norm(now) / np.linalg.norm(target) > 0.95


def edit_of(change: dict) -> Edit:
    """The edit a scene's ``augmentation.change`` records."""
    if change["kind"] == MOVE:
        return Edit(MOVE, change["object"], place=tuple(change["to"]))
    return Edit(change["kind"], change["object"], change.get("to"))


@pytest.mark.blender
def test_every_group_is_one_question_answered_by_each_scene_graph(paired) -> None:
    out = paired["out"]
    scenes = {scene["image_filename"]: scene for scene in read_json(out / "scenes.json")["scenes"]}
    questions = read_json(out / "questions_ru_kept.json")["questions"]
    groups: dict[str, list[dict]] = {}
    for question in questions:
        groups.setdefault(question["group"]["id"], []).append(question)
        assert execute_program(question["program"], scenes[question["image_filename"]]) == question["answer"]
    assert groups
    for members in groups.values():
        original, edited = members
        assert original["group"]["variant"] == "original" and edited["group"]["variant"] in KINDS
        assert original["question_ru"] == edited["question_ru"] and original["program"] == edited["program"]
        assert edited["group"]["answer_flips"] == (original["answer"] != edited["answer"])
        source = scenes[edited["image_filename"]]["augmentation"]["source_image_filename"]
        assert original["image_filename"] == source
        change = scenes[edited["image_filename"]]["augmentation"]["change"]
        # The edit made again from the source graph gives the edited graph's answer.
        redone = edited_scene(scenes[source], edit_of(change))
        assert execute_program(edited["program"], redone) == edited["answer"]
    flipped = Counter(members[1]["image_filename"] for members in groups.values() if members[0]["group"]["answer_flips"])
    edited_images = {members[1]["image_filename"] for members in groups.values()}
    assert set(flipped) == edited_images, "each edit is chosen to leave a group whose answer flips"


@pytest.mark.blender
def test_the_pairs_export_with_group_ids_and_rerunning_changes_nothing(paired) -> None:
    out = paired["out"]
    document = read_export(out / "mera")
    splits_of: dict[int, set[str]] = {}
    for split in ("shots", "test"):
        for item in document["data"][split]:
            splits_of.setdefault(item["meta"]["group_id"], set()).add(split)
    assert splits_of and all(len(splits) == 1 for splits in splits_of.values())
    before = (out / "questions_ru_kept.json").read_bytes()
    root = paired["root"]
    assert run_stage("dataset", "pairs", "--scenes", str(paired["source"] / "scenes.json"), "--questions",
                     str(root / "questions_ru.json"), "--out", str(out), "--device", "cpu", "--workers", "1") == 0
    assert (out / "questions_ru_kept.json").read_bytes() == before
    status = run_stage("dataset", "pairs", "--scenes", str(paired["source"] / "scenes.json"), "--questions",
                       str(root / "questions_ru.json"), "--out", str(out), "--device", "cpu", "--seed", "8")
    assert status == 2, "edited scenes of another seed are not mixed with these"
    assert (out / "questions_ru_kept.json").read_bytes() == before


@pytest.mark.blender
def test_a_rerun_with_other_families_is_refused(paired, tmp_path, capsys) -> None:
    # Other families choose other edits: their scenes must not be mixed with these. The copy differs in one byte.
    from questions.family_sources import SHIPPED_DIR

    folder = tmp_path / "families"
    shutil.copytree(SHIPPED_DIR, folder, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    with (folder / "count.yaml").open("a", encoding="utf-8") as stream:
        stream.write("\n")
    out, root = paired["out"], paired["root"]
    before = (out / "questions_ru_kept.json").read_bytes()
    capsys.readouterr()
    status = run_stage("dataset", "pairs", "--scenes", str(paired["source"] / "scenes.json"), "--questions",
                       str(root / "questions_ru.json"), "--out", str(out), "--device", "cpu",
                       "--families", str(folder), "--families-only")
    error = capsys.readouterr().err
    assert status == 2 and "--families" in error and error.count("\n") == 1 and "Traceback" not in error, error
    assert (out / "questions_ru_kept.json").read_bytes() == before
    assert read_json(out / "scenes.json")["info"]["families"] == "builtin"


def test_masks_that_are_not_there_are_refused_before_anything_is_rendered(paired, tmp_path, capsys) -> None:
    # The pixel check compares each edited frame with its source's mask: a --masks folder without them is
    # bad input, told in one line before Blender starts, not after the edited scenes are rendered.
    empty = tmp_path / "masks"
    empty.mkdir()
    out = tmp_path / "OUT"
    capsys.readouterr()
    status = run_stage("dataset", "pairs", "--scenes", str(paired["source"] / "scenes.json"), "--questions",
                       str(paired["root"] / "questions_ru.json"), "--masks", str(empty), "--out", str(out), "--device", "cpu")
    error = capsys.readouterr().err
    assert status == 2 and "source mask of ruclevr_" in error and str(empty) in error, error
    assert error.count("\n") == 1 and "Traceback" not in error, error
    assert not out.exists()
    # The scenes file copied alone: its renders are not beside it.
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(paired["source"] / "scenes.json", alone / "scenes.json")
    status = run_stage("dataset", "pairs", "--scenes", str(alone / "scenes.json"), "--questions",
                       str(paired["root"] / "questions_ru.json"), "--masks", str(paired["source"] / "masks"),
                       "--out", str(out), "--device", "cpu")
    error = capsys.readouterr().err
    assert status == 2 and "source image of ruclevr_" in error and error.count("\n") == 1, error
    assert not out.exists()
