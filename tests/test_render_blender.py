"""Real bpy renders at a tiny size: images, masks, scene graphs and the session's reuse."""

from __future__ import annotations

import math

import numpy as np
import pytest
from PIL import Image

from ruclevr.io import read_json

pytestmark = pytest.mark.blender

WIDTH, HEIGHT, MIN_PIXELS = 160, 120, 25
INDICES = (0, 1, 2)


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    from render import DeviceChoice, RenderJob, RenderSettings, SceneOptions
    out = tmp_path_factory.mktemp("render")
    return RenderJob(
        out_dir=str(out),
        seed=3,
        options=SceneOptions(width=WIDTH, height=HEIGHT),
        settings=RenderSettings(width=WIDTH, height=HEIGHT, samples=4),
        device=DeviceChoice("cpu", ()),
        blender_version="5.0.1",
        min_pixels=MIN_PIXELS,
    )


@pytest.fixture(scope="module")
def session(job):
    from render import open_session
    with open_session(job) as opened:
        yield opened


@pytest.fixture(scope="module")
def rendered(session, job):
    """Three scenes rendered to files through the worker, as the CLI does."""
    from render import render_index
    for index in INDICES:
        render_index(session, job, index)
    return job.layout


@pytest.mark.parametrize("index", INDICES)
def test_image_and_mask_have_the_requested_size(rendered, index):
    image = Image.open(rendered.image_path(index))
    mask = Image.open(rendered.mask_path(index))
    assert image.size == mask.size == (WIDTH, HEIGHT)
    assert image.mode == "RGB" and mask.mode == "L"
    # A lit scene, not a black or blank frame.
    pixels = np.asarray(image, float)
    assert 30 < pixels.mean() < 230 and pixels.std() > 5


@pytest.mark.parametrize("index", INDICES)
def test_every_object_is_visible_in_the_mask_and_its_centre_in_its_box(rendered, index):
    scene = read_json(rendered.scene_path(index))
    mask = np.asarray(Image.open(rendered.mask_path(index)))
    ids = [obj["mask_id"] for obj in scene["objects"]]
    assert ids == list(range(1, len(ids) + 1))
    assert set(np.unique(mask)) <= {0, *ids}
    for obj in scene["objects"]:
        rows, cols = np.nonzero(mask == obj["mask_id"])
        assert len(rows) == obj["visible_pixels"] >= MIN_PIXELS
        box = [cols.min(), rows.min(), cols.max() + 1, rows.max() + 1]
        assert obj["bbox_2d"] == box
        x, y = obj["pixel_coords"][:2]
        assert box[0] <= x <= box[2] and box[1] <= y <= box[3]


@pytest.mark.parametrize("index", INDICES)
def test_relationships_agree_with_coordinates_and_directions(rendered, index):
    scene = read_json(rendered.scene_path(index))
    coords = np.array([obj["3d_coords"] for obj in scene["objects"]])
    for name in ("left", "right", "front", "behind"):
        direction = np.array(scene["directions"][name])
        for i, related in enumerate(scene["relationships"][name]):
            expected = [j for j in range(len(coords)) if j != i and (coords[j] - coords[i]) @ direction > 0.2]
            assert related == expected
    # The directions are the ground projections of the camera that rendered the image.
    matrix = np.array(scene["camera"]["matrix_world"])
    behind = -matrix[:3, 2] * [1, 1, 0]
    assert scene["directions"]["behind"] == pytest.approx(list(behind / np.linalg.norm(behind)))


def test_a_scene_rerendered_from_its_record_alone_is_identical(rendered, session):
    """Camera, lights and poses in the JSON are enough: the same pixels, without the seed or sampler."""
    from render import scene_from_graph
    scene = read_json(rendered.scene_path(1))
    frame = session.render(scene_from_graph(scene))
    assert np.array_equal(frame.mask, np.asarray(Image.open(rendered.mask_path(1))))
    assert np.array_equal(frame.image, np.asarray(Image.open(rendered.image_path(1))))


def test_scene_records_what_rerendering_needs(rendered):
    scene = read_json(rendered.scene_path(0))
    assert scene["seed"] == 3 and scene["image_filename"] == "ruclevr_000000.png"
    assert scene["render"]["samples"] == 4 and scene["render"]["view_transform"] == "Standard"
    assert scene["render"]["sampling_pattern"] == "BLUE_NOISE"
    assert scene["render"]["blender_version"] == "5.0.1"
    assert len(scene["lights"]) == 3 and all(light["energy"] > 0 for light in scene["lights"])
    assert {"location", "matrix_world", "focal_length_mm", "intrinsics"} <= scene["camera"].keys()


def test_blender_applies_the_recorded_pose_rotation_and_camera(session, job):
    """Rotation in degrees is what Blender applies; pixel_coords match Blender's own projection."""
    import bpy
    from bpy_extras.object_utils import world_to_camera_view

    from assets.geometry import convex_hull_2d
    from render import first_scene, scene_graph
    scene = first_scene(job.seed, 11, job.options)
    session.build(scene)
    record = scene_graph(scene, job.options)
    blender_scene = bpy.context.scene
    bpy.context.view_layer.update()  # evaluate matrix_world from location/rotation/scale
    for obj, blender_obj, placed in zip(record["objects"], session.objects, scene.objects, strict=True):
        assert math.degrees(blender_obj.rotation_euler.z) == pytest.approx(obj["rotation"])
        # The object's real mesh, placed by Blender, has the footprint the sampler checked gaps with.
        world = np.array([blender_obj.matrix_world @ v.co for v in blender_obj.data.vertices])
        hull = convex_hull_2d(world[:, :2])
        assert len(hull) == len(placed.footprint)
        distances = np.sqrt(((hull[:, None] - placed.footprint[None]) ** 2).sum(axis=2))
        assert distances.min(axis=1).max() < 1e-5
        assert world[:, 2].min() == pytest.approx(0.0, abs=1e-6)  # resting on the ground
        ndc = world_to_camera_view(blender_scene, blender_scene.camera, blender_obj.matrix_world.translation)
        assert obj["pixel_coords"][0] == pytest.approx(ndc.x * WIDTH, abs=0.51)
        assert obj["pixel_coords"][1] == pytest.approx((1 - ndc.y) * HEIGHT, abs=0.51)
        assert obj["pixel_coords"][2] == pytest.approx(ndc.z, rel=1e-5)


def test_session_is_reused_without_leaking_objects(session, job):
    import bpy

    from render import first_scene
    from render.model.looks import look_parameters
    cards = len(look_parameters(job.settings.look).cards)
    counts = []
    for index in (20, 21, 20):
        scene = first_scene(job.seed, index, job.options)
        session.build(scene)
        counts.append((len(bpy.data.objects), len(bpy.data.materials), len(bpy.data.meshes)))
        assert len(bpy.data.objects) == 5 + cards + len(scene.objects)  # ground, camera, three lights, the look's light cards
    assert counts[0] == counts[2] and counts[0][1:] == counts[1][1:]


def test_colours_reach_the_shader_in_linear_light(session):
    import bpy

    from assets.vocabulary import load_vocabulary, srgb_to_linear

    vocabulary = load_vocabulary()
    for color in vocabulary.names("color"):
        node = bpy.data.materials[f"rubber_{color}"].node_tree.nodes["Principled BSDF"]
        expected = [srgb_to_linear(c) for c in vocabulary.srgb(color)]
        assert list(node.inputs["Base Color"].default_value)[:3] == pytest.approx(expected, abs=1e-6)


def test_rendered_colour_is_the_vocabulary_colour(session, job):
    """With the Standard view transform, a lit rubber object's brightest pixels keep the hue of its sRGB colour."""
    from render import first_scene, scene_graph
    scene = first_scene(job.seed, 0, job.options)
    frame = session.render(scene)
    image = frame.image.astype(float)
    record = scene_graph(scene, job.options)
    from assets.vocabulary import load_vocabulary

    vocabulary = load_vocabulary()
    checked = 0
    for obj in record["objects"]:
        pixels = image[frame.mask == obj["mask_id"]]
        if obj["material"] != "rubber" or obj["color"] == "gray" or len(pixels) < 20:
            continue
        mean = pixels.mean(axis=0)
        target = np.array(vocabulary.srgb(obj["color"]), float)
        cosine = mean @ target / np.linalg.norm(mean) / np.linalg.norm(target)
        assert cosine > 0.95, (obj["color"], mean, target)
        checked += 1
    assert checked, "scene 0 of seed 3 should hold a coloured rubber object"


def test_the_mask_pass_alone_gives_the_mask_of_the_full_render(session, job):
    """render_mask (one camera sample, no bounces, flat shading) draws the full render's mask, for
    accepted and rejected candidates alike, and leaves the render settings as they were."""
    import bpy

    from render import candidate_scenes
    def render_settings():
        cycles = bpy.context.scene.cycles
        return cycles.samples, cycles.use_denoising, cycles.max_bounces, bpy.context.scene.view_layers[0].material_override

    before = render_settings()
    for index in range(4):
        candidates = candidate_scenes(job.seed, index, job.options)
        for _ in range(2):
            scene = next(candidates)
            mask = session.render_mask(scene)
            assert len(np.unique(mask)) > 1  # objects drawn, not a blank frame
            assert np.array_equal(mask, session.render(scene).mask)
            assert render_settings() == before


class CountingSession:
    """A real session that counts full renders."""

    def __init__(self, session) -> None:
        self.session, self.full_renders = session, 0

    def render(self, scene):
        self.full_renders += 1
        return self.session.render(scene)

    def render_mask(self, scene):
        return self.session.render_mask(scene)


def test_the_mask_prepass_skips_renders_of_rejected_candidates_and_changes_no_file(session, job, tmp_path):
    import dataclasses

    from render import candidate_scenes, render_index, scene_graph
    from render.farm.worker import mask_problems

    def first_candidate_rejected(index: int) -> bool:
        first = next(candidate_scenes(job.seed, index, job.options))
        return bool(mask_problems(scene_graph(first, job.options), session.render_mask(first), job.min_pixels))

    index = next(i for i in range(40) if first_candidate_rejected(i))
    files, renders = {}, {}
    for prepass in (True, False):
        counting = CountingSession(session)
        run = dataclasses.replace(job, out_dir=str(tmp_path / f"prepass-{prepass}"), mask_prepass=prepass)
        run.layout.prepare()
        render_index(counting, run, index)
        renders[prepass] = counting.full_renders
        files[prepass] = [path.read_bytes() for path in (run.layout.image_path(index), run.layout.mask_path(index), run.layout.scene_path(index))]
    assert renders[True] == 1 and renders[False] >= 2
    assert files[True] == files[False]
