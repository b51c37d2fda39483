"""The look, checked on real bpy renders at a small size: the floor fills the frame, the upper
frame is lit (look 3, the default), and grey metal reads as metal next to grey rubber (look 2's
measure; look 3's metal is checked by the legibility reader, tests/test_render_legibility.py)."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest

pytestmark = pytest.mark.blender

WIDTH, HEIGHT, SAMPLES = 160, 120, 4


@pytest.fixture(scope="module")
def options():
    from render import SceneOptions
    return SceneOptions(width=WIDTH, height=HEIGHT)


@pytest.fixture(scope="module")
def session():
    from render import RenderSettings
    from render.engines.blender import BlenderSession
    with BlenderSession(RenderSettings(width=WIDTH, height=HEIGHT, samples=SAMPLES)) as opened:
        yield opened


@pytest.fixture(scope="module")
def look_2_session(session):
    from render import RenderSettings
    from render.engines.blender import BlenderSession
    session.close()  # one Blender scene per process: the look-3 session's tests ran first
    with BlenderSession(RenderSettings(width=WIDTH, height=HEIGHT, samples=SAMPLES, look=2)) as opened:
        yield opened


def luminance(image: np.ndarray) -> np.ndarray:
    return image.astype(float) @ np.array([0.2126, 0.7152, 0.0722])


def corner_rays_on_the_ground(camera) -> np.ndarray:
    """Where the rays through the frame's four corners meet the ground plane z = 0 (NaN if they miss)."""
    inverse_k = np.linalg.inv(camera.intrinsics)
    hits = []
    for x, y in itertools.product((0.0, camera.width), (0.0, camera.height)):
        local = inverse_k @ np.array([x, y, 1.0])
        direction = camera.matrix_world[:3, :3] @ np.array([local[0], -local[1], -1.0])  # Blender: -Z forward, +Y up
        origin = camera.matrix_world[:3, 3]
        t = -origin[2] / direction[2] if direction[2] < 0 else np.nan
        hits.append(origin + t * direction)
    return np.array(hits)


@pytest.mark.parametrize("size", ((480, 320), (WIDTH, HEIGHT)))
def test_the_floor_reaches_past_every_edge_of_the_frame_at_every_camera_position(size):
    """At every corner of the camera's jitter box, all four frame corners look down onto the floor,
    well inside its edge and within the camera's range (so no horizon and no floor edge can show)."""
    from render.engines.blender import GROUND_SIZE
    from render.model.camera import Camera
    from render.model.sampler import CAMERA_BASE_LOCATION, CAMERA_TARGET, SceneOptions

    options = SceneOptions(width=size[0], height=size[1])
    jitter = options.camera_jitter
    for offset in itertools.product((-jitter, jitter), repeat=3):
        camera = Camera(tuple(np.add(CAMERA_BASE_LOCATION, offset)), CAMERA_TARGET, options.focal_length_mm,
                        options.sensor_width_mm, options.width, options.height)
        hits = corner_rays_on_the_ground(camera)
        assert not np.isnan(hits).any(), f"a frame corner sees the sky from {camera.location}"
        assert np.abs(hits[:, :2]).max() < GROUND_SIZE / 2 * 0.5, hits


@pytest.mark.parametrize("index", (3, 5))
def test_the_empty_floor_is_lit_up_to_the_top_of_the_frame_and_smooth(session, options, index):
    """The floor alone (a scene's camera and lights, its objects taken away): its top is not dark
    next to its bottom, and it changes gradually from row to row (a one-sided light's cut-off used
    to draw a hard line across the upper left)."""
    from render import first_scene
    frame = session.render(dataclasses.replace(first_scene(0, index, options), objects=()))
    assert not frame.mask.any()
    light = luminance(frame.image)
    band = HEIGHT // 10
    assert light[:band].mean() > 0.45 * light[-band:].mean(), (light[:band].mean(), light[-band:].mean())
    # Mean brightness of 4x8-pixel blocks down each column: a light's gradual falloff bends it a
    # little (second differences up to ~8 here), a cut-off line sharply (43 and 70 in these scenes).
    blocks = light.reshape(HEIGHT // 4, 4, WIDTH // 8, 8).mean(axis=(1, 3))
    assert np.abs(np.diff(blocks, n=2, axis=0)).max() < 12


@pytest.mark.parametrize("index", (1, 2))
def test_grey_metal_is_brighter_than_grey_rubber_and_spheres_show_a_highlight(look_2_session, options, index):
    """Look 2: the same scene with every object grey metal, then grey rubber: each metal object is brighter
    overall (it mirrors the bright sky; grey metal used to render as dark charcoal) and every metal
    sphere shows a near-white highlight, which rubber never does."""
    from render import first_scene
    scene = first_scene(0, index, options)

    def painted(material):
        objects = tuple(dataclasses.replace(obj, material=material, color="gray") for obj in scene.objects)
        return look_2_session.render(dataclasses.replace(scene, objects=objects))

    metal, rubber = painted("metal"), painted("rubber")
    checked = 0
    for mask_id, obj in enumerate(scene.objects, start=1):
        inside = (metal.mask == mask_id) & (rubber.mask == mask_id)
        if inside.sum() < 40:
            continue
        metal_light, rubber_light = luminance(metal.image)[inside], luminance(rubber.image)[inside]
        assert np.median(metal_light) > np.median(rubber_light) + 5, (mask_id, obj.shape)
        assert np.percentile(rubber_light, 98) < 150, (mask_id, obj.shape)
        if obj.shape == "sphere":
            assert np.percentile(metal_light, 98) > 180, (mask_id, np.percentile(metal_light, 98))
        checked += 1
    assert checked >= 3
