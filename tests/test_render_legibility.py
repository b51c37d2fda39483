"""The legibility reader (render/legibility.py) on real bpy renders of look 3, and the looks that can still be drawn.

The reader sees only the image and the instance mask; the scene graph is what it is checked against.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from ruclevr.io import read_json

LOOK_2_FOLDER = Path(__file__).parent / "data" / "look2_folder"
WIDTH, HEIGHT = 240, 160  # a quarter of the default frame: small, and still large enough to read


def metal_and_rubber_scene(color: str, size: str) -> dict:
    """A scene graph of four objects side by side across the frame: a metal cube, a metal cylinder
    and their rubber twins, all ``color`` and ``size``, on the camera and lights of scene 0 of seed 3."""
    from assets.geometry import shape_mesh
    from assets.vocabulary import load_vocabulary
    from render.model.sampler import SceneOptions
    from render.model.scene_graph import sample_scene_graph

    vocabulary = load_vocabulary()
    graph = sample_scene_graph(3, 0, SceneOptions(width=WIDTH, height=HEIGHT))
    left = np.asarray(graph["directions"]["left"])
    scale = float(vocabulary.value("size", size).extra["scale"])
    objects = []
    for k, (material, shape) in enumerate((("metal", "cube"), ("rubber", "cylinder"), ("metal", "cylinder"), ("rubber", "cube"))):
        x, y = left[:2] * (2.6 - 1.75 * k)
        z = shape_mesh(shape, vocabulary).half_height * scale
        objects.append({"shape": shape, "size": size, "material": material, "color": color, "3d_coords": [float(x), float(y), z],
                        "rotation": 30.0 + 20.0 * k, "scale": scale, "mask_id": k + 1})
    graph["objects"] = objects
    return graph


@pytest.mark.blender
def test_a_metal_cube_and_cylinder_of_every_colour_read_as_metal_and_their_rubber_twins_as_rubber():
    from assets.vocabulary import load_vocabulary
    from render import RenderSettings
    from render.engines.blender import BlenderSession
    from render.legibility import LegibilityReader
    from render.model.scene_graph import scene_from_graph

    reader = LegibilityReader.for_look(3)
    colours = load_vocabulary().names("color")
    misread = []
    with BlenderSession(RenderSettings(width=WIDTH, height=HEIGHT, look=3)) as session:
        for k, color in enumerate(colours):
            graph = metal_and_rubber_scene(color, ("large", "small")[k % 2])
            frame = session.render(scene_from_graph(graph))
            for obj, reading in zip(graph["objects"], reader.read(frame.image, frame.mask, len(graph["objects"])), strict=True):
                seen = reading.values["material"] if reading.values else "unreadable"
                if seen != obj["material"]:
                    misread.append(f"{obj['size']} {color} {obj['material']} {obj['shape']} read as {seen}")
    assert not misread, misread


@pytest.mark.blender
def test_a_folder_of_look_2_renders_again_to_the_same_bytes_and_verifies_as_recorded():
    """tests/data/look2_folder was rendered by the renderer before look 3 existed (48x32, 2 samples, seed 5)."""
    from render import Rerenderer
    from render.farm.outputs import encode_scene_files
    from render.farm.verify import main as verify_main

    scene = read_json(LOOK_2_FOLDER / "scenes" / "ruclevr_000000.json")
    assert scene["render"]["look"] == 2
    with Rerenderer() as rerenderer:
        frame = rerenderer.render(scene)
    files = encode_scene_files(frame.image, frame.mask, dict(scene))  # PNG level 1, the renderer's default
    assert files.image_png == (LOOK_2_FOLDER / "images" / "ruclevr_000000.png").read_bytes()
    assert files.mask_png == (LOOK_2_FOLDER / "masks" / "ruclevr_000000.png").read_bytes()
    assert verify_main([str(LOOK_2_FOLDER), "--quiet"]) == 0


@pytest.fixture(scope="module")
def look_3_folder(tmp_path_factory):
    from render.cli import main as render_main

    out = tmp_path_factory.mktemp("legible") / "render"
    assert render_main(["--n", "2", "--width", str(WIDTH), "--height", str(HEIGHT), "--seed", "11", "--device", "cpu",
                        "--workers", "1", "--out", str(out), "--quiet"]) == 0
    return out


@pytest.mark.blender
def test_verify_legibility_names_an_object_recoloured_in_its_scene_graph(look_3_folder, tmp_path, capsys):
    """A recolour written into the scene files alone (hashes still match) is what the pixels contradict."""
    from render.farm.verify import main as verify_main

    folder = tmp_path / "recoloured"
    shutil.copytree(look_3_folder, folder)
    verify_main([str(folder), "--legibility", "--quiet"])
    before = capsys.readouterr().out
    scene = read_json(folder / "scenes" / "ruclevr_000000.json")
    target = max(range(len(scene["objects"])), key=lambda k: scene["objects"][k]["visible_pixels"])
    obj = scene["objects"][target]
    new = "cyan" if obj["color"] != "cyan" else "red"
    was = obj["color"]
    obj["color"] = new
    (folder / "scenes" / "ruclevr_000000.json").write_text(json.dumps(scene), encoding="utf-8")
    merged = read_json(folder / "scenes.json")
    merged["scenes"][0] = scene
    (folder / "scenes.json").write_text(json.dumps(merged), encoding="utf-8")
    assert verify_main([str(folder), "--quiet"]) == 0  # every file check passes: only the pixels tell
    assert verify_main([str(folder), "--legibility", "--quiet"]) == 1
    after = capsys.readouterr().out
    line = f"index 0: legibility: object {target} ({obj['size']} {new} {obj['material']} {obj['shape']}): its color reads as {was}"
    assert line in after, after
    assert f"object {target} (" not in before, before


@pytest.mark.blender
def test_every_object_of_a_look_3_render_shows_at_least_the_floor_of_itself(look_3_folder):
    from render.model.silhouette import visible_fractions
    from render.model.visibility import DEFAULT_MIN_VISIBLE_FRACTION

    for scene in read_json(look_3_folder / "scenes.json")["scenes"]:
        assert scene["render"]["look"] == 3
        assert scene["render"]["min_visible_fraction"] == DEFAULT_MIN_VISIBLE_FRACTION
        fractions = visible_fractions(scene, [obj["visible_pixels"] for obj in scene["objects"]])
        assert min(fractions) >= DEFAULT_MIN_VISIBLE_FRACTION, fractions


def test_the_unoccluded_silhouette_of_a_sphere_is_the_disc_it_projects_to():
    from render.model.camera import Camera
    from render.model.silhouette import silhouette_area

    camera = Camera((10.0, 0.0, 0.0), (0.0, 0.0, 0.0), 35.0, 32.0, 480, 320)
    sphere = {"shape": "sphere", "scale": 0.7, "rotation": 0.0, "3d_coords": [0.0, 0.0, 0.0]}
    radius_px = camera.focal_length_px * 0.7 / np.sqrt(10.0**2 - 0.7**2)
    assert silhouette_area(sphere, camera) == pytest.approx(np.pi * radius_px**2, rel=0.02)


def test_the_fitted_classifier_separates_what_is_separable_and_is_deterministic():
    from render.legibility import Classifier, fit_classifier

    rng = np.random.default_rng(0)
    features = np.concatenate([rng.normal(0, 1, (60, 4)), rng.normal(3, 1, (60, 4))])
    labels = ["rubber"] * 60 + ["metal"] * 60
    first, second = fit_classifier(features, labels, steps=500), fit_classifier(features, labels, steps=500)
    assert first.to_dict() == second.to_dict()
    seen = np.asarray(first.classes)[first.probabilities(features).argmax(axis=1)]
    assert np.mean(seen == np.asarray(labels)) > 0.97
    assert Classifier.from_dict(json.loads(json.dumps(first.to_dict()))).probabilities(features[:3]).shape == (3, 2)


def test_an_object_too_small_to_read_is_named_not_guessed():
    from render.legibility import LegibilityReader, legibility_problems

    image = np.full((320, 480, 3), 128, dtype=np.uint8)
    mask = np.zeros((320, 480), dtype=np.uint8)
    mask[100:104, 100:104] = 1  # 16 pixels
    scene = {"objects": [{"shape": "cube", "size": "small", "material": "metal", "color": "red"}]}
    assert legibility_problems(scene, image, mask, LegibilityReader.for_look(3)) == [
        "object 0 (small red metal cube): too few pixels to read"]


def test_a_shipped_calibration_covers_the_drawable_looks():
    from render.legibility import LegibilityReader
    from render.model.looks import DRAWABLE_LOOKS

    for look in DRAWABLE_LOOKS:
        assert set(LegibilityReader.for_look(look).classifiers) == {"color", "material", "shape", "size"}
    with pytest.raises(ValueError, match="no calibration for look 1"):
        LegibilityReader.for_look(1)


@pytest.mark.blender
def test_a_look_3_render_keeps_only_scenes_the_reader_reads_as_recorded(look_3_folder):
    """Legible scenes only (look 3's default): every object of every kept scene is read as its record
    says, and a record the pixels contradict is what the worker would re-sample."""
    from render.legibility import LegibilityReader, misread_objects, read_frame

    reader = LegibilityReader.for_look(3)
    assert read_json(look_3_folder / "render_run.json")["legible_only"] is True
    for scene in read_json(look_3_folder / "scenes.json")["scenes"]:
        assert scene["render"]["legible_only"] is True
        image, mask = read_frame(look_3_folder, scene)
        assert misread_objects(scene, image, mask, reader) == []
        target = max(range(len(scene["objects"])), key=lambda k: scene["objects"][k]["visible_pixels"])
        wrong = {**scene, "objects": [dict(obj) for obj in scene["objects"]]}
        wrong["objects"][target]["material"] = {"metal": "rubber", "rubber": "metal"}[scene["objects"][target]["material"]]
        [line] = misread_objects(wrong, image, mask, reader)
        assert line.startswith(f"object {target} (") and "its material reads as" in line


def test_legible_only_is_look_3s_default_and_can_be_turned_off(tmp_path):
    from render.cli import build_parser, legible_only

    def chosen(*argv: str) -> bool:
        return legible_only(build_parser().parse_args(["--n", "1", "--out", str(tmp_path), *argv]))

    assert chosen() and chosen("--width", "240", "--height", "160")
    assert not chosen("--no-legible-only") and not chosen("--look", "2")
    assert not chosen("--width", "48", "--height", "32") and chosen("--width", "48", "--height", "32", "--legible-only")


def test_a_legible_only_folder_is_not_resumed_with_another_reader_or_without_the_check(tmp_path):
    """Which candidate a legible-only run keeps depends on the fitted reader: the run record names the
    calibration by its hash, and a folder holding scenes of one reader (or of no check) is refused to a
    run with another, in one line, with nothing written."""
    import hashlib

    from render.farm.outputs import OutputLayout
    from render.farm.runs import claim_output
    from render.farm.worker import legible_only_record
    from render.legibility import CALIBRATION_PATH, calibration_id
    from ruclevr.cli import UsageError

    assert calibration_id() == "sha256:" + hashlib.sha256(CALIBRATION_PATH.read_bytes()).hexdigest()[:16]
    other = tmp_path / "other_calibration.json"
    other.write_bytes(CALIBRATION_PATH.read_bytes() + b"\n")
    assert calibration_id(other) != calibration_id()
    layout = OutputLayout(tmp_path / "out")
    layout.prepare()
    info = {"seed": 0, "min_pixels": 200, "render": {"look": 3}, **legible_only_record()}
    claim_output(layout, info)
    layout.scene_path(0).write_text("{}", encoding="utf-8")  # a finished scene of that run
    claim_output(layout, dict(info))  # the same run resumes
    before = layout.run_record.read_bytes()
    for changed in ({**info, "legibility_reader": calibration_id(other)},
                    {key: value for key, value in info.items() if key not in ("legible_only", "legibility_reader")}):
        with pytest.raises(UsageError, match="holds scenes made with other settings.*legib"):
            claim_output(layout, changed)
        assert layout.run_record.read_bytes() == before
