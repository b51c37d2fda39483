"""A worker's Blender session is kept between frames (Cycles' persistent data, the static world
built once): nothing of one scene may reach the next. Real bpy renders at 64x48."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.blender

WIDTH, HEIGHT = 64, 48
SEED, LATER, EARLIER = 5, 7, (2, 3)


def _settings():
    from render import RenderSettings
    return RenderSettings(width=WIDTH, height=HEIGHT, samples=2)


def _frames(indices):
    """The frames of the first candidates of ``indices``, rendered in that order by one fresh session."""
    from render import SceneOptions, first_scene
    from render.engines.blender import BlenderSession

    options = SceneOptions(width=WIDTH, height=HEIGHT)
    with BlenderSession(_settings()) as session:
        assert session._scene.render.use_persistent_data
        return [session.render(first_scene(SEED, index, options)) for index in indices]


def test_a_scene_renders_to_the_same_bytes_first_or_after_other_scenes():
    (alone,) = _frames([LATER])
    *earlier, after = _frames([*EARLIER, LATER])
    assert alone.image.tobytes() == after.image.tobytes()
    assert alone.mask.tobytes() == after.mask.tobytes()
    for frame in earlier:  # other objects, camera and lights: the comparison above could fail
        assert not np.array_equal(frame.image, after.image)
        assert frame.mask.max() >= 1


def test_the_worker_reports_how_many_candidates_a_scene_took(tmp_path):
    from render import DeviceChoice, RenderJob, SceneOptions, candidate_scenes, open_session, scene_graph
    from render.farm.worker import mask_problems, render_with_retries

    options = SceneOptions(width=WIDTH, height=HEIGHT)
    job = RenderJob(str(tmp_path), SEED, options, _settings(), DeviceChoice("cpu", ()), "5.0.1", min_pixels=20,
                    min_visible_fraction=0.6)
    job.layout.prepare()
    with open_session(job) as session:
        def first_rejected(index: int) -> bool:
            first = next(candidate_scenes(job.seed, index, options))
            return bool(mask_problems(scene_graph(first, options), session.render_mask(first), job.min_pixels, 0.6))

        rejected = next(i for i in range(40) if first_rejected(i))
        accepted = next(i for i in range(40) if not first_rejected(i))
        assert render_with_retries(session, job, accepted).candidates == 1
        outcome = render_with_retries(session, job, rejected)
    assert outcome.error is None and outcome.candidates is not None and outcome.candidates >= 2


def test_the_gpu_default_takes_more_samples_and_the_cpu_default_is_unchanged():
    from render.cli import build_parser, samples_for, settings_from_args
    from render.model.settings import DEFAULT_SAMPLES, RenderSettings, default_samples

    assert default_samples("cpu") == DEFAULT_SAMPLES == RenderSettings().samples == 9
    assert default_samples("optix") == default_samples("cuda") == 64
    not_given, given = (settings_from_args(["--n", "1", *extra]) for extra in ([], ["--samples", "9"]))
    assert [samples_for(not_given, backend) for backend in ("cpu", "cuda", "optix")] == [9, 64, 64]
    assert [samples_for(given, backend) for backend in ("cpu", "cuda", "optix")] == [9, 9, 9]
    assert build_parser().get_default("samples") == 9  # what dataset build reads as render's default


def test_a_run_whose_renders_the_reader_cannot_read_stops_with_one_line(tmp_path):
    """48x32 frames, 1 sample: too few pixels for the legibility reader, so every candidate is re-sampled."""
    import subprocess
    import sys
    from pathlib import Path

    out = tmp_path / "OUT"
    result = subprocess.run([sys.executable, "-m", "render", "--n", "12", "--width", "48", "--height", "32", "--samples", "1",
                             "--legible-only", "--device", "cpu", "--workers", "1", "--out", str(out), "--quiet"],
                            cwd=Path(__file__).resolve().parent.parent, capture_output=True, text=True, timeout=300)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2, result.stderr
    assert len(lines) == 1 and "stopped: the first 5 scenes took" in lines[0] and "legibility reader" in lines[0]
    assert len(list((out / "images").glob("*.png"))) < 12
