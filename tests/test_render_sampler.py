"""Scene sampling, geometry, camera and relations without Blender (no test here imports bpy)."""

from __future__ import annotations

import hashlib
import json
import math
import subprocess
import sys

import numpy as np
import pytest

from assets.geometry import bevelled_cube, shape_footprint, shape_mesh, smooth_cylinder, uv_sphere
from assets.materials import all_surfaces, surface_parameters
from assets.vocabulary import load_vocabulary
from render import sample_scene_graph
from render.model.camera import Camera
from render.model.relations import directions, pixel_coords, relationships
from render.model.sampler import SceneOptions, SceneSamplingError, candidate_scenes, footprint_gap

CLEVR_KEYS = {"split", "image_index", "image_filename", "objects", "directions", "relationships"}
OBJECT_KEYS = {"shape", "size", "material", "color", "3d_coords", "rotation", "pixel_coords"}


# --- geometry and materials ---------------------------------------------------------------------


@pytest.mark.parametrize("mesh", [bevelled_cube(0.1), smooth_cylinder(24), uv_sphere(24, 12)], ids=["cube", "cylinder", "sphere"])
def test_meshes_span_the_unit_box_with_outward_unit_normals(mesh):
    assert np.allclose(mesh.vertices.min(axis=0), -1.0) and np.allclose(mesh.vertices.max(axis=0), 1.0)
    assert np.allclose(np.linalg.norm(mesh.normals, axis=1), 1.0)
    # Convex shapes centred on the origin: every shading normal points away from the centre.
    assert (np.einsum("ij,ij->i", mesh.vertices, mesh.normals) > 0).all()
    for face in mesh.faces:
        assert len(set(face)) == len(face) >= 3


def test_bevelled_cube_is_closed_and_faces_point_outwards():
    mesh = bevelled_cube(0.1, segments=3)
    edges: dict[tuple[int, int], int] = {}
    for face in mesh.faces:
        for a, b in zip(face, face[1:] + face[:1], strict=True):
            edges[(a, b)] = edges.get((a, b), 0) + 1
    # A closed, consistently wound surface uses every directed edge once and its reverse once.
    assert all(count == 1 for count in edges.values())
    assert all((b, a) in edges for a, b in edges)
    # Faces wound counter-clockwise seen from outside: the signed volume is positive (8 for [-1, 1]^3, less the bevels).
    volume = 0.0
    for face in mesh.faces:
        p = mesh.vertices[list(face)]
        for k in range(1, len(p) - 1):
            volume += np.dot(p[0], np.cross(p[k], p[k + 1])) / 6.0
    assert 7.8 < volume < 8.0


def test_cube_footprint_is_a_square_of_side_sqrt2_in_size_units():
    hull = shape_footprint("cube")
    assert np.abs(hull).max() == pytest.approx(math.sqrt(0.5))
    assert shape_mesh("cube").half_height == pytest.approx(math.sqrt(0.5))
    assert shape_mesh("sphere").half_height == pytest.approx(1.0)


def test_surfaces_cover_every_material_and_colour_in_linear_light():
    vocabulary = load_vocabulary()
    surfaces = all_surfaces()
    assert len(surfaces) == len(vocabulary.names("material")) * len(vocabulary.names("color"))
    red = surface_parameters("rubber", "red")
    assert red.metallic == 0.0
    # sRGB (173, 35, 35) in linear light: about 0.418 and 0.0168, not 173 / 255.
    assert red.base_color[:3] == pytest.approx((0.4179, 0.01681, 0.01681), abs=1e-3)


def test_metal_reflectance_is_the_8_bit_colour_over_255_as_in_clevr():
    red, gray = surface_parameters("metal", "red"), surface_parameters("metal", "gray")
    assert red.metallic == 1.0
    assert red.base_color == pytest.approx((173 / 255, 35 / 255, 35 / 255, 1.0))
    # Grey metal reflects a third of the light (in linear light it would reflect under a tenth).
    assert gray.base_color[:3] == pytest.approx((87 / 255,) * 3)
    assert gray.base_color[0] > 3 * surface_parameters("rubber", "gray").base_color[0]


# --- camera and relations -----------------------------------------------------------------------


def _camera_looking_north(width=200, height=100):
    return Camera(location=(0.0, -10.0, 0.0), target=(0.0, 0.0, 0.0), focal_length_mm=32.0, sensor_width_mm=32.0, width=width, height=height)


def test_projection_of_known_points():
    camera = _camera_looking_north()
    # The target is in the image centre; with lens = sensor width, x = 1 at distance 10 is 1/10 of the width right.
    centre, right, up = camera.project([(0, 0, 0), (1, 0, 0), (0, 0, 1)])
    assert centre == pytest.approx([100.0, 50.0, 10.0])
    assert right == pytest.approx([120.0, 50.0, 10.0])
    assert up == pytest.approx([100.0, 30.0, 10.0])


def test_directions_and_relationships_follow_clevr_semantics():
    camera = _camera_looking_north()
    dirs = directions(camera)
    assert dirs["behind"] == pytest.approx([0, 1, 0]) and dirs["left"] == pytest.approx([-1, 0, 0])
    assert dirs["front"] == pytest.approx([0, -1, 0]) and dirs["right"] == pytest.approx([1, 0, 0])
    # Object 0 at the left and near, object 1 at the right and far; object 2 within eps of 1 along x.
    rel = relationships([(-2, -1, 0), (2, 3, 0), (2.1, -1, 0)], dirs)
    assert rel["left"] == [[], [0], [0]]  # objects left of each object
    assert rel["right"] == [[1, 2], [], []]
    assert rel["behind"] == [[1], [], [1]]
    assert rel["front"] == [[], [0, 2], []]


def test_pixel_coords_are_rounded_pixels_and_depth():
    assert pixel_coords(_camera_looking_north(), [(1, 0, 0)]) == [[120, 50, 10.0]]


# --- the sampler --------------------------------------------------------------------------------


def _core(obj: dict, vocabulary) -> tuple[np.ndarray, float]:
    """An object's ground outline from first principles (not the sampler's hull), as a core and a radius.

    A sphere or cylinder is its centre grown by its radius; a bevelled cube is its inner square
    (boundary points, densely) grown by the bevel radius.
    """
    geometry = vocabulary.value("shape", obj["shape"]).extra["geometry"]
    half = obj["scale"] * geometry["half_extent"]
    centre = complex(*obj["3d_coords"][:2])
    if obj["shape"] != "cube":
        return np.array([[centre.real, centre.imag]]), half
    bevel = half * geometry["bevel"]
    t = np.linspace(-1, 1, 50, endpoint=False)
    side = np.ones_like(t)
    square = np.concatenate([t - 1j * side, side + 1j * t, -t + 1j * side, -side - 1j * t]) * (half - bevel)
    world = square * np.exp(1j * math.radians(obj["rotation"])) + centre
    return np.stack([world.real, world.imag], axis=1), bevel


def _contains_centre(cube: dict, other: dict, vocabulary) -> bool:
    half = cube["scale"] * vocabulary.value("shape", "cube").extra["geometry"]["half_extent"]
    offset = complex(*other["3d_coords"][:2]) - complex(*cube["3d_coords"][:2])
    local = offset * np.exp(-1j * math.radians(cube["rotation"]))
    return abs(local.real) <= half and abs(local.imag) <= half


def test_sampler_invariants_over_1000_seeds():
    options = SceneOptions()
    vocabulary = load_vocabulary()
    counts = set()
    for seed in range(1000):
        scene = sample_scene_graph(seed, seed % 7, options)
        assert CLEVR_KEYS <= scene.keys()
        objects = scene["objects"]
        counts.add(len(objects))
        assert options.min_objects <= len(objects) <= options.max_objects
        left, behind = np.array(scene["directions"]["left"]), np.array(scene["directions"]["behind"])
        cores = [_core(obj, vocabulary) for obj in objects]
        for i, a in enumerate(objects):
            assert OBJECT_KEYS <= a.keys()
            assert 0 <= a["pixel_coords"][0] <= options.width and 0 <= a["pixel_coords"][1] <= options.height
            assert a["3d_coords"][2] == pytest.approx(a["scale"] * shape_mesh(a["shape"]).half_height)
            for j in range(i + 1, len(objects)):
                b = objects[j]
                offset = np.array(b["3d_coords"]) - np.array(a["3d_coords"])
                assert abs(offset @ left) >= options.margin and abs(offset @ behind) >= options.margin
                (core_a, grow_a), (core_b, grow_b) = cores[i], cores[j]
                gap = np.sqrt(((core_a[:, None] - core_b[None]) ** 2).sum(axis=2)).min() - grow_a - grow_b
                # Meshes are polygons inscribed in these outlines and the squares are sampled: allow 0.01.
                assert gap >= options.min_gap - 0.01, (seed, i, j, gap)
                for cube, other in ((a, b), (b, a)):
                    assert not (cube["shape"] == "cube" and _contains_centre(cube, other, vocabulary))
        # Every pair is related one way or the other along both axes.
        rel = scene["relationships"]
        for i in range(len(objects)):
            assert sorted(rel["left"][i] + rel["right"][i]) == [j for j in range(len(objects)) if j != i]
            assert sorted(rel["front"][i] + rel["behind"][i]) == [j for j in range(len(objects)) if j != i]
    assert counts == set(range(options.min_objects, options.max_objects + 1))


def test_same_seed_and_index_give_the_same_scene_and_others_differ():
    first = sample_scene_graph(7, 3)
    assert sample_scene_graph(7, 3) == first
    assert sample_scene_graph(7, 4) != first
    assert sample_scene_graph(8, 3) != first
    assert sample_scene_graph(0, 0)["objects"]  # seed 0 is a seed like any other


def test_camera_and_lights_are_jittered_and_recorded():
    a, b = sample_scene_graph(1, 0), sample_scene_graph(1, 1)
    assert a["camera"]["location"] != b["camera"]["location"]
    assert [light["location"] for light in a["lights"]] != [light["location"] for light in b["lights"]]
    assert len(a["lights"]) == 3 and {light["name"] for light in a["lights"]} == {"key", "fill", "back"}
    assert Camera.from_dict(a["camera"]).to_dict() == a["camera"]


def test_a_recorded_graph_rebuilds_the_same_scene():
    from render import first_scene, scene_from_graph, scene_graph
    scene = first_scene(2, 9)
    rebuilt = scene_from_graph(scene_graph(scene))
    assert rebuilt == scene  # footprints are not compared by ==; check them too
    for a, b in zip(rebuilt.objects, scene.objects, strict=True):
        assert np.allclose(a.footprint, b.footprint)


def test_later_candidates_are_reproducible():
    first = candidate_scenes(5, 2)
    second = candidate_scenes(5, 2)
    scenes_a = [next(first) for _ in range(3)]
    scenes_b = [next(second) for _ in range(3)]
    assert [s.objects for s in scenes_a] == [s.objects for s in scenes_b]
    assert scenes_a[0].objects != scenes_a[1].objects and scenes_a[2].attempt == 2


# Scenes (and the errors of scenes that cannot be placed) of four option sets, as the sampler that
# drew and checked each placement attempt alone (before attempts were screened in batches) made them,
# with every float written to 10 significant digits: the last bits of the trigonometry and the matrix
# products differ between processors (the digest of the full floats, pinned on another machine,
# differed on an AVX-512 one at the commit that pinned it), the scenes do not.
SAMPLED_BEFORE_BATCHING = "d58ffd758ccc542fbe586512df91ef4e02becc1973ce06d9b3d7269854b17c84"


def _rounded(value):
    """``value`` with every float at 10 significant digits (the digest's processor-independent form)."""
    if isinstance(value, float):
        return float(f"{value:.10g}")
    if isinstance(value, dict):
        return {key: _rounded(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_rounded(item) for item in value]
    return value


def _sampling_digest() -> str:
    """SHA-256 over the first two candidates of 40 indices under four option sets (an error ends an index)."""
    from render.model.conditions import load_condition
    from render.model.scene_graph import scene_graph

    variants = [SceneOptions(), SceneOptions(min_objects=11, max_objects=12, max_scene_attempts=2),
                SceneOptions(min_gap=0.6, margin=0.2, condition=load_condition("cogent-b")),
                SceneOptions(frame_margin_px=60.0, width=200, height=120, max_object_attempts=9)]
    digest = hashlib.sha256()
    for seed, options in enumerate(variants):
        for index in range(40):
            candidates = candidate_scenes(seed, index, options)
            for _ in range(2):
                try:
                    record = json.dumps(_rounded(scene_graph(next(candidates), options)), sort_keys=True)
                except SceneSamplingError as error:
                    digest.update(str(error).encode())
                    break
                digest.update(record.encode())
    return digest.hexdigest()


def test_scenes_are_those_the_attempt_by_attempt_sampler_drew():
    assert _sampling_digest() == SAMPLED_BEFORE_BATCHING


def test_batch_sizes_and_the_shortcuts_never_change_a_scene(monkeypatch):
    import render.model.sampler as sampler

    monkeypatch.setattr(sampler, "_FIRST_BATCH", 1)
    assert _sampling_digest() == SAMPLED_BEFORE_BATCHING
    monkeypatch.setattr(sampler, "_FIRST_BATCH", 1000)  # every attempt in the first batch
    # No shortcut decides (inscribed circles, separation along the centre line, the box in the frame):
    # every close pair gets the exact outline test, every pose the exact frame test.
    monkeypatch.setattr(sampler, "_SURE", math.inf)
    assert _sampling_digest() == SAMPLED_BEFORE_BATCHING


def test_impossible_constraints_fail_with_a_clear_bounded_error():
    with pytest.raises(SceneSamplingError, match="could not place 40 objects.*fewer objects"):
        sample_scene_graph(0, 0, SceneOptions(min_objects=40, max_objects=40))


def test_options_reject_inverted_object_counts():
    with pytest.raises(ValueError, match="below min_objects"):
        SceneOptions(min_objects=5, max_objects=3)


def test_footprint_gap_of_two_unit_squares():
    square = np.array([(-1, -1), (1, -1), (1, 1), (-1, 1)], float)
    assert footprint_gap(square, square + (3.5, 0)) == pytest.approx(1.5)
    assert footprint_gap(square, square + (3, 3)) == pytest.approx(math.sqrt(2))
    assert footprint_gap(square, square + (1, 1)) == 0.0


def test_scene_graphs_never_import_bpy():
    code = (
        "import sys; from render.model.scene_graph import sample_scene_graph; "
        "[sample_scene_graph(0, i) for i in range(20)]; "
        "import render.cli, render.farm.worker, render.farm.blender_process; "
        "assert 'bpy' not in sys.modules, 'bpy was imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_visibility_is_judged_from_the_mask_alone():
    """Pixel counts and boxes come from the mask; too few pixels, or a centre outside the visible
    box, rejects a scene; --min-pixels 0 lets an object hide entirely."""
    from render import object_visibility, visibility_problems
    mask = np.zeros((6, 8), np.uint8)
    mask[1:3, 1:4] = 1  # object 1: 6 pixels, box x 1..4, y 1..3
    mask[4, 6] = 2  # object 2: 1 pixel
    seen = object_visibility(mask, 3)
    assert [s["visible_pixels"] for s in seen] == [6, 1, 0]
    assert [s["bbox_2d"] for s in seen] == [[1, 1, 4, 3], [6, 4, 7, 5], None]
    objects = [{"pixel_coords": [2, 2, 0.5]}, {"pixel_coords": [6.5, 4.5, 0.5]}, {"pixel_coords": [0, 0, 0.5]}]
    assert visibility_problems(objects, seen, 1) == ["object 2 shows 0 < 1 pixels"]
    assert visibility_problems(objects, seen, 2) == ["object 1 shows 1 < 2 pixels", "object 2 shows 0 < 2 pixels"]
    assert visibility_problems(objects, seen, 0) == []
    objects[0]["pixel_coords"] = [5, 2, 0.5]  # centre right of its visible box: hidden behind something
    assert visibility_problems(objects, seen, 0) == ["object 0's centre (5, 2) lies outside its visible box [1, 1, 4, 3]"]


def test_a_render_record_gives_back_its_settings_and_older_records_their_sampling_pattern():
    from render import RenderSettings, settings_from_record
    made = RenderSettings(width=160, height=120, samples=4, sampling_pattern="BLUE_NOISE", cycles_seed=7)
    assert settings_from_record(made.to_dict()) == made
    older = {key: value for key, value in made.to_dict().items() if key != "sampling_pattern"}
    assert settings_from_record(older).sampling_pattern == "TABULATED_SOBOL"  # what renders used before it was recorded
    assert settings_from_record(RenderSettings.clevr().to_dict(), threads=2) == RenderSettings.clevr(threads=2)


def test_graphs_only_run_with_a_scene_that_cannot_be_placed_is_one_line_and_writes_nothing(tmp_path, capsys):
    from render.cli import main

    # Under seed 0 the first scene of 12 or 13 objects can be placed, the second cannot.
    argv = ["--graphs-only", "--n", "3", "--seed", "0", "--min-objects", "12", "--max-objects", "13", "--out", str(tmp_path), "--quiet"]
    assert main(argv) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "could not place" in error and "index 1" in error
    assert not any(tmp_path.iterdir())
