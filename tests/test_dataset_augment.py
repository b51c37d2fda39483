"""Colour-swap augmentation: colour maps, questions carried over to recoloured scene graphs, and a
real run (bpy renders, the question engine, the native realiser, the morph filter) end to end."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from helpers import run_stage
from PIL import Image

from assets.vocabulary import load_vocabulary
from dataset.augment import (
    AMBIGUOUS,
    QuestionRecolourer,
    parse_color_map,
    random_color_map,
    recolour_scene,
)
from questions.executor import execute_program
from questions.families import load_families
from questions.plan import Plan, expand_program, parameter_values
from questions.random_stream import RandomStream
from questions.scene_index import SceneIndex
from questions.search import SceneSearch
from render import SceneOptions, sample_scene_graph
from ruclevr.cli import UsageError
from ruclevr.io import read_json

COLOURS = load_vocabulary().names("color")
GEOMETRY_KEYS = ("3d_coords", "rotation", "pixel_coords", "scale", "mask_id", "shape", "size", "material")


@pytest.fixture(scope="module")
def families():
    return load_families()


def ask(scene: dict, family_id: str, params: dict, families, question_index: int = 0) -> dict:
    """A question record exactly as the question engine builds one, for chosen parameter values."""
    family = families[family_id]
    plan = Plan.of(family)
    search = SceneSearch(SceneIndex.from_scene(scene), RandomStream.for_unit("questions.search", 0, scene["image_index"]))
    candidate = search.instantiate(plan, {name: params.get(name, "") for name in family.params})
    assert candidate is not None, f"{family_id} {params} is not well posed on the test scene"
    return {
        "split": scene["split"], "image_index": scene["image_index"], "image_filename": scene["image_filename"],
        "question_index": question_index, "question": "(source text)", "program": expand_program(plan, candidate.choices),
        "answer": candidate.answer, "template_filename": family.source, "question_family_index": family.position,
        "family": family_id, "question_type": plan.question_type, "template_index": 0,
        "params": parameter_values(plan, candidate.choices),
    }


def scene_with_two_left_of_first() -> tuple[dict, int, list[int]]:
    """A sampled scene graph (pure Python) and an object with at least two objects to its left."""
    options = SceneOptions(min_objects=6, max_objects=7)
    for index in range(50):
        scene = sample_scene_graph(11, index, options)
        for reference, left in enumerate(scene["relationships"]["left"]):
            if len(left) >= 2 and len(scene["objects"]) - len(left) >= 3:
                return scene, reference, left
    raise AssertionError("no sampled scene fits")


def set_objects(scene: dict, attributes: dict[int, tuple[str, str]], default=("cylinder", "gray")) -> dict:
    """Give every object large rubber and the (shape, colour) asked for (``default`` for the rest)."""
    for k, obj in enumerate(scene["objects"]):
        obj["shape"], obj["color"] = attributes.get(k, default)
        obj["size"], obj["material"] = "large", "rubber"
    return scene


# -- colour maps ---------------------------------------------------------------------------------


def test_parse_color_map_reads_pairs_and_names_every_bad_value() -> None:
    assert parse_color_map("blue=red, cyan=purple") == {"blue": "red", "cyan": "purple"}
    for text, message in (
        ("blue=crimson", "unknown colour 'crimson'; allowed: gray, red"),
        ("blue", "must look like COLOUR=COLOUR"),
        ("blue=red,blue=green", "mapped twice"),
        ("red=red", "maps a colour to itself"),
    ):
        with pytest.raises(UsageError, match=message):
            parse_color_map(text)


def test_random_map_is_a_seeded_permutation_that_changes_the_scene() -> None:
    for index in range(30):
        present = [COLOURS[(index + k) % len(COLOURS)] for k in range(1 + index % 3)]
        mapping = random_color_map(4, index, present)
        assert mapping == random_color_map(4, index, present)  # a function of (seed, index)
        assert set(mapping) == set(mapping.values())  # the moved colours are permuted among themselves
        assert all(source != target for source, target in mapping.items())
        assert set(present) & set(mapping), "at least one of the scene's colours changes"
    assert len({json.dumps(random_color_map(seed, 0, ["red"])) for seed in range(10)}) > 1


def test_recolouring_changes_colours_only_and_records_the_source() -> None:
    scene = sample_scene_graph(2, 5)
    old = [obj["color"] for obj in scene["objects"]]
    mapping = {old[0]: next(c for c in COLOURS if c != old[0])}
    new = recolour_scene(scene, mapping, "swap_000005.png")
    assert [obj["color"] for obj in new["objects"]] == [mapping.get(c, c) for c in old]
    for before, after in zip(scene["objects"], new["objects"], strict=True):
        assert {k: before[k] for k in GEOMETRY_KEYS} == {k: after[k] for k in GEOMETRY_KEYS}
    for key in ("camera", "lights", "relationships", "directions", "seed"):
        assert new[key] == scene[key]
    assert [obj["color"] for obj in scene["objects"]] == old  # the source is left untouched
    assert new["augmentation"] == {
        "kind": "color_swap", "source_image_filename": scene["image_filename"], "source_image_index": 5,
        "color_map": mapping, "recoloured_objects": [k for k, c in enumerate(old) if c == old[0]],
    }


# -- questions on the recoloured graph -----------------------------------------------------------


def test_a_reference_that_becomes_ambiguous_is_dropped_and_counts_are_recomputed(families) -> None:
    scene, reference, left = scene_with_two_left_of_first()
    others = [k for k in range(len(scene["objects"])) if k != reference and k not in left]
    set_objects(scene, {reference: ("sphere", "red"), left[0]: ("cube", "blue"), others[0]: ("sphere", "green"),
                        others[1]: ("cylinder", "red")})
    green = ask(scene, "count/zero_hop", {"<C>": "green"}, families, 0)
    red = ask(scene, "count/zero_hop", {"<C>": "red"}, families, 1)
    # a material query: a colour query names no colour since issue 25
    colour = ask(scene, "query/one_hop/material", {"<C>": "red", "<S>": "sphere", "<R>": "left", "<S2>": "cube"}, families, 2)
    assert (green["answer"], red["answer"], colour["answer"]) == ("1", "2", scene["objects"][left[0]]["material"])
    swapped = recolour_scene(scene, {"blue": "red", "green": "red"}, "swap.png")
    kept, dropped = QuestionRecolourer(families, seed=0).questions_for_scene([green, red, colour], swapped)
    # "How many green things?" follows the green sphere: it now asks about red things, of which
    # there are four (the sphere, the cylinder, and the cube and sphere that turned red).
    assert [q["question_index"] for q in kept] == [0, 1]
    assert kept[0]["params"]["<C>"] == "red" and "red" in kept[0]["question"].lower()
    assert kept[0]["answer"] == kept[1]["answer"] == str(sum(obj["color"] == "red" for obj in swapped["objects"])) == "4"
    assert kept[0]["augmentation"]["source_answer"] == "1"
    # The reference "the red sphere" now fits two spheres.
    assert len(dropped) == 1 and dropped[0].reason.startswith(f"{AMBIGUOUS}: ")
    assert "expected exactly one object, found 2" in dropped[0].reason
    assert dropped[0].question["augmentation"]["source_question_index"] == 2


def test_a_colour_query_names_no_colour_so_no_recolouring_makes_it_name_its_answer(families) -> None:
    # Until issue 25 a colour query could name colours ("what colour is the cube left of the red
    # sphere?"), and a recolouring blue=red made it name its answer (dropped as ill-posed). A
    # query now names no value of the attribute it asks, so the engine refuses it on the source.
    scene, reference, left = scene_with_two_left_of_first()
    others = [k for k in range(len(scene["objects"])) if k != reference and k not in left]
    set_objects(scene, {reference: ("sphere", "red"), left[0]: ("cube", "blue"), others[0]: ("sphere", "green"),
                        others[1]: ("cylinder", "red")})
    family = families["query/one_hop/color"]
    search = SceneSearch(SceneIndex.from_scene(scene), RandomStream.for_unit("questions.search", 0, scene["image_index"]))
    params = {"<C>": "red", "<S>": "sphere", "<R>": "left", "<S2>": "cube"}
    assert search.instantiate(Plan.of(family), {name: params.get(name, "") for name in family.params}) is None


def test_under_a_permutation_every_question_survives_and_answers_follow_the_colours(families) -> None:
    """A bijective recolouring is a renaming: nothing becomes ill-posed, colour answers are renamed."""
    from questions.generate import Settings, generate

    scenes = [sample_scene_graph(7, index) for index in range(6)]
    questions = generate(scenes, families, Settings(seed=7, per_image=10), progress=False)
    recolourer = QuestionRecolourer(families, seed=3)
    checked = 0
    for scene in scenes:
        mapping = random_color_map(3, scene["image_index"], [obj["color"] for obj in scene["objects"]])
        swapped = recolour_scene(scene, mapping, "swap.png")
        source = [q for q in questions if q["image_index"] == scene["image_index"]]
        kept, dropped = recolourer.questions_for_scene(source, swapped)
        assert not dropped, [d.reason for d in dropped]
        for before, after in zip(source, kept, strict=True):
            expected = mapping.get(before["answer"], before["answer"]) if before["answer"] in COLOURS else before["answer"]
            assert after["answer"] == expected == execute_program(after["program"], swapped)
            for name, value in before["params"].items():
                if families[before["family"]].params[name] == "color" and value:
                    words = load_vocabulary().value("color", mapping.get(value, value)).en_synonyms
                    assert any(word in after["question"].lower() for word in words), (after["question"], words)
            checked += 1
    assert checked >= 40


# -- the command, end to end with Blender ---------------------------------------------------------


def test_bad_input_is_one_line_and_writes_nothing(tmp_path, capsys) -> None:
    from sample_outputs import write_sample_stage_outputs

    paths = write_sample_stage_outputs(tmp_path / "src", n_scenes=2)
    out = tmp_path / "OUT"
    cases = (
        (["--scenes", str(paths["scenes"]), "--questions", str(paths["questions"]), "--map", "blue=crimson"],
         "unknown colour 'crimson'"),
        (["--scenes", str(paths["scenes"]), "--questions", str(paths["questions"]), "--map", "blue=red", "--random"],
         "not allowed with argument"),
        (["--scenes", str(tmp_path / "missing.json"), "--questions", str(paths["questions"]), "--random"],
         "does not exist"),
        (["--scenes", str(paths["scenes"]), "--questions", str(paths["questions"]), "--random", "--n", "-3"],
         "must be a positive integer, got -3"),
        # Scenes without camera, lights and render settings cannot be rendered again.
        (["--scenes", str(paths["scenes"]), "--questions", str(paths["questions"]), "--random"],
         "only scenes written by python -m render can be re-rendered"),
    )
    for argv, message in cases:
        status = run_stage("dataset", "augment", *argv, "--out", str(out), "--device", "cpu")
        error = capsys.readouterr().err
        assert status == 2, argv
        assert message in error and error.count("\n") == 1 and "Traceback" not in error, error
    assert not out.exists()


def rubber_colour_swap(scene: dict) -> dict[str, str]:
    """Map the colour of the scene's best-visible coloured rubber object to a colour no object has."""
    candidates = [obj for obj in scene["objects"] if obj["material"] == "rubber" and obj["color"] != "gray"]
    chosen = max(candidates, key=lambda obj: obj["visible_pixels"])
    used = {obj["color"] for obj in scene["objects"]}
    target = next(c for c in ("yellow", "cyan", "green", "red", "blue", "purple", "brown") if c not in used)
    return {chosen["color"]: target}


def mean_colour(image: np.ndarray, mask: np.ndarray, mask_id: int) -> np.ndarray:
    return image[mask == mask_id].astype(float).mean(axis=0)


def cosine(a: np.ndarray, b) -> float:
    b = np.asarray(b, float)
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))


@pytest.fixture(scope="module")
def augmented(tmp_path_factory):
    """Two scenes rendered by ``python -m render`` (in this process), asked by ``python -m questions``,
    then augmented with a map that recolours a rubber object of scene 0."""
    from questions.cli import main as questions_main
    from render.cli import main as render_main

    root = tmp_path_factory.mktemp("augment")
    source = root / "render"
    # No visible-fraction floor: the same two scenes as before look 3 (the second shares a colour with the map).
    assert render_main(["--n", "2", "--out", str(source), "--width", "128", "--height", "96", "--samples", "4",
                        "--seed", "3", "--device", "cpu", "--workers", "1", "--min-visible-fraction", "0"]) == 0
    assert questions_main(["--scenes", str(source / "scenes.json"), "--out", str(root / "questions.json"),
                           "--per-image", "10", "--quiet"]) == 0
    scenes = read_json(source / "scenes.json")["scenes"]
    mapping = rubber_colour_swap(scenes[0])
    argv = ["augment", "--scenes", str(source / "scenes.json"), "--questions", str(root / "questions.json"),
            "--map", ",".join(f"{a}={b}" for a, b in mapping.items()), "--out", str(root / "OUT"), "--device", "cpu"]
    assert run_stage("dataset", *argv) == 0
    return {"root": root, "source": source, "out": root / "OUT", "map": mapping, "argv": argv}


def output_bytes(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and p.suffix != ".sqlite"}


@pytest.mark.blender
def test_rerender_keeps_the_mask_and_shows_the_new_colours(augmented) -> None:
    out, source, mapping = augmented["out"], augmented["source"], augmented["map"]
    scenes = read_json(out / "scenes.json")["scenes"]
    assert scenes, "the map recolours scene 0 at least"
    recoloured_seen = 0
    for scene in scenes:
        origin = scene["augmentation"]["source_image_filename"]
        before_mask = np.asarray(Image.open(source / "masks" / origin))
        after_mask = np.asarray(Image.open(out / "masks" / scene["image_filename"]))
        assert np.array_equal(before_mask, after_mask), "geometry unchanged: the same instance mask"
        assert scene["augmentation"]["mask_matches_source"] is True
        before_image = np.asarray(Image.open(source / "images" / origin))
        after_image = np.asarray(Image.open(out / "images" / scene["image_filename"]))
        source_scene = read_json(source / "scenes" / origin.replace(".png", ".json"))
        for k, (old, new) in enumerate(zip(source_scene["objects"], scene["objects"], strict=True)):
            assert new["color"] == mapping.get(old["color"], old["color"])
            assert new["3d_coords"] == old["3d_coords"] and new["visible_pixels"] == old["visible_pixels"]
            if old["color"] in mapping and old["material"] == "rubber" and old["visible_pixels"] >= 30:
                vocabulary = load_vocabulary()
                was, now = mean_colour(before_image, before_mask, k + 1), mean_colour(after_image, after_mask, k + 1)
                assert cosine(was, vocabulary.srgb(old["color"])) > 0.95
                assert cosine(now, vocabulary.srgb(new["color"])) > 0.95
                assert cosine(now, vocabulary.srgb(new["color"])) > cosine(now, vocabulary.srgb(old["color"]))
                recoloured_seen += 1
    assert recoloured_seen >= 1


@pytest.mark.blender
def test_every_answer_is_the_recoloured_graphs_and_no_ill_posed_question_is_kept(augmented, families) -> None:
    out = augmented["out"]
    scenes = {scene["image_filename"]: scene for scene in read_json(out / "scenes.json")["scenes"]}
    kept = read_json(out / "questions_ru_kept.json")["questions"]
    source_questions = read_json(augmented["root"] / "questions.json")["questions"]
    dropped = [json.loads(line) for line in (out / "questions.dropped.jsonl").read_text(encoding="utf-8").splitlines()]
    asked = [q for q in source_questions
             if any(s["augmentation"]["source_image_filename"] == q["image_filename"] for s in scenes.values())]
    report = read_json(out / "augment_report.json")
    assert report["counts"]["source_questions_on_augmented_scenes"] == len(asked)
    assert report["counts"]["well_posed"] + report["counts"]["dropped"] >= len(asked)
    rejected = (out / "questions_ru_kept.rejected.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(kept) + len(rejected) + len(dropped) == len(asked)
    assert kept, "some questions survive the swap"
    for question in kept:
        scene = scenes[question["image_filename"]]
        assert execute_program(question["program"], scene) == question["answer"]
        plan = Plan.of(families[question["family"]])
        search = SceneSearch(SceneIndex.from_scene(scene), RandomStream.for_unit("questions.search", 0, 0))
        assert search.instantiate(plan, question["params"]) is not None, question
        assert question["question_ru"] and question["answer_ru"] and question["acceptability"]["reasons"] == []
        origin = question["augmentation"]
        assert origin["color_map"] == augmented["map"]
        assert origin["source_image_filename"] == scene["augmentation"]["source_image_filename"]
        source = next(q for q in source_questions if q["image_filename"] == origin["source_image_filename"]
                      and q["question_index"] == origin["source_question_index"])
        assert origin["source_question"] == source["question"] and origin["source_answer"] == source["answer"]
    for entry in dropped:
        assert entry["reason"].split(":")[0] in ("ambiguous", "ill_posed", "no_russian")
    info = read_json(out / "scenes.json")["info"]
    assert info["settings"]["swap"] == {"mode": "map", "map": augmented["map"]}
    assert info["sources"]["scenes"]["info"]["seed"] == 3


@pytest.mark.blender
def test_a_killed_run_resumes_to_the_same_files_and_the_output_exports(augmented, tmp_path) -> None:
    from sample_outputs import mera_export_problems

    out = augmented["out"]
    before = output_bytes(out)
    scene_file = sorted((out / "scenes").glob("*.json"))[-1]
    scene_file.unlink()  # as if the run had been killed before this scene finished
    (out / "questions_ru_kept.json").unlink()
    assert run_stage("dataset", *augmented["argv"]) == 0
    assert output_bytes(out) == before
    # Other inputs into the same folder are refused rather than mixed in.
    other = [a if not a.startswith(tuple(augmented["map"])) else "gray=brown" for a in augmented["argv"]]
    assert run_stage("dataset", *other) == 2
    assert run_stage("dataset", "export", "--questions", str(out / "questions_ru_kept.json"), "--scenes",
                       str(out / "scenes.json"), "--out", str(tmp_path / "mera"), "--shots", "1") == 0
    assert mera_export_problems(tmp_path / "mera") == []


@pytest.mark.blender
def test_worker_processes_render_the_files_of_one_worker(augmented, tmp_path) -> None:
    """Augmentation renders through the render stage's worker processes (one per core here, each
    pinned with one thread); how many there are changes no byte."""
    argv = ["augment", "--scenes", str(augmented["source"] / "scenes.json"), "--questions", str(augmented["root"] / "questions.json"),
            "--random", "--seed", "5", "--device", "cpu"]
    out, outputs = tmp_path / "OUT", {}
    for workers in ("2", "1"):
        assert run_stage("dataset", *argv, "--out", str(out), "--workers", workers, "--overwrite") == 0
        outputs[workers] = output_bytes(out)
        assert len(read_json(out / "scenes.json")["scenes"]) == 2, "both scenes recoloured, one per worker"
    assert outputs["2"] == outputs["1"]


def test_a_rerendered_mask_unlike_its_source_is_warned_of(capsys) -> None:
    from dataset.augment import warn_of_changed_masks

    def scene(name: str, matches: bool | None) -> dict:
        return {"image_filename": f"ruclevr_swap_{name}.png",
                "augmentation": {"source_image_filename": f"ruclevr_{name}.png", "mask_matches_source": matches}}

    warn_of_changed_masks([scene("000000", True), scene("000001", False), scene("000002", None)])
    assert capsys.readouterr().err.splitlines() == [
        "python -m dataset augment: warning: the mask of ruclevr_swap_000001.png differs from its source ruclevr_000001.png's"]
