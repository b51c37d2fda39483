"""benchmarks/render_bench.py keeps its reference renders in a folder between runs: one file per
drawing (scene, size, samples, every drawn setting), reused instead of rendered again."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import benchmark_script

from render import RenderSettings, SceneOptions, first_scene


@pytest.fixture(scope="module")
def bench():
    return benchmark_script("render_bench.py")


def test_the_key_changes_with_what_is_drawn_and_not_with_how_it_runs(bench):
    options = SceneOptions(width=32, height=24)
    scene, other_scene = first_scene(0, 0, options), first_scene(0, 1, options)
    settings = RenderSettings.clevr(width=32, height=24, samples=64)
    key = bench.reference_key(scene, settings)
    assert key.startswith("reference-32x24-64s-") and key.endswith(".npz")
    assert bench.reference_key(scene, settings.replace(threads=1, device="cuda")) == key
    for changed in (bench.reference_key(other_scene, settings), bench.reference_key(scene, settings.replace(samples=65)),
                    bench.reference_key(scene, settings.replace(width=33)),
                    bench.reference_key(scene, settings.replace(sampling_pattern="TABULATED_SOBOL"))):
        assert changed != key


@pytest.mark.blender
def test_a_reference_is_rendered_once_and_then_read_from_the_cache(bench, tmp_path):
    options = SceneOptions(width=32, height=24)
    settings = RenderSettings.clevr(width=32, height=24, samples=2)
    cache = tmp_path / "refs"
    first = bench.reference_arm(settings, options, [0, 1], str(cache))
    assert sorted(p.name for p in cache.iterdir()) == sorted(bench.reference_key(first_scene(0, i, options), settings) for i in (0, 1))
    assert first[0].image.shape == (24, 32, 3) and first[0].mask.any()

    def must_not_render(scene):
        raise AssertionError("rendered although the cache holds this reference")

    for index, frame in enumerate(first):
        again = bench.cached_render(str(cache), first_scene(0, index, options), settings, must_not_render)
        assert np.array_equal(again.image, frame.image) and np.array_equal(again.mask, frame.mask)
    assert [frame.image.tobytes() for frame in bench.reference_arm(settings, options, [0, 1], str(cache))] == \
        [frame.image.tobytes() for frame in first]
