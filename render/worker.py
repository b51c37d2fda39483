"""Render one scene index to files: sample, check visibility on the mask alone, re-sample if needed, render, write.

The worker is what every executor runs (in this process or in worker processes, later on
cluster nodes). It reaches the render engine (:mod:`render.engines`; Cycles imports bpy) only
through :func:`open_session`, so planning and the visibility checks stay testable without Blender.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np

from render.devices import DeviceChoice
from render.engines import EngineFactory, RenderBackend, engine_factory
from render.outputs import OutputLayout, write_scene_files
from render.sampler import SampledScene, SceneOptions, SceneSamplingError, candidate_scenes
from render.scene_graph import scene_graph
from render.settings import RenderSettings

DEFAULT_MIN_PIXELS = 200  # at 480x320; see default_min_pixels

#: How often an unexpected failure of one scene (not a deterministic one) is retried.
UNEXPECTED_FAILURE_RETRIES = 2


@dataclass(frozen=True)
class RenderJob:
    """Everything a worker needs; picklable, so it can be handed to worker processes."""

    out_dir: str
    seed: int
    options: SceneOptions
    settings: RenderSettings
    device: DeviceChoice
    blender_version: str
    min_pixels: int = DEFAULT_MIN_PIXELS
    max_visibility_attempts: int = 20  # candidates per index before giving up on visibility
    # Check each candidate's visibility on its mask alone (a few percent of a render) and render
    # only the candidate that passes. The files are the same either way (a test checks); False
    # renders every candidate fully, for that test and the benchmark.
    mask_prepass: bool = True
    # The engine's factory, looked up by ``settings.engine`` where the job is made; worker
    # processes get the object itself (pickled by reference), so they need no registration.
    engine: EngineFactory = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "engine", engine_factory(self.settings.engine))

    @property
    def layout(self) -> OutputLayout:
        return OutputLayout(Path(self.out_dir), self.options.filename_prefix)


class Outcome(NamedTuple):
    index: int  # type: ignore[assignment]  # the field shadows tuple.index on purpose: callers read outcome.index
    error: str | None  # None when the scene's files were written


class VisibilityError(RuntimeError):
    """No candidate scene of an index showed every object well enough."""


def default_min_pixels(width: int, height: int) -> int:
    """200 pixels at 480x320, scaled with the image area so small renders stay satisfiable."""
    return max(1, round(DEFAULT_MIN_PIXELS * width * height / (480 * 320)))


def open_session(job: RenderJob) -> RenderBackend:
    """A session of ``job``'s render engine (the one place the worker reaches it)."""
    return job.engine(job.settings, job.device)


def object_visibility(mask: np.ndarray, count: int) -> list[dict]:
    """Per object (mask id k + 1): visible pixels and 2D box [x_min, y_min, x_max, y_max].

    Box edges are pixel-edge coordinates with exclusive maxima, the frame that pixel_coords uses,
    so an object's projected centre inside its visible pixels lies inside its box. An object
    with no visible pixels gets ``None`` as its box.
    """
    counts = np.bincount(mask.ravel(), minlength=count + 1)
    result = []
    for mask_id in range(1, count + 1):
        rows, cols = np.nonzero(mask == mask_id)
        box = None
        if len(rows):
            box = [int(cols.min()), int(rows.min()), int(cols.max()) + 1, int(rows.max()) + 1]
        result.append({"mask_id": mask_id, "visible_pixels": int(counts[mask_id]), "bbox_2d": box})
    return result


def visibility_problems(objects: list[dict], visibility: list[dict], min_pixels: int) -> list[str]:
    """Why a rendered scene is rejected: objects under ``min_pixels``, or whose centre is hidden outside its box."""
    problems = []
    for k, (obj, seen) in enumerate(zip(objects, visibility, strict=True)):
        if seen["visible_pixels"] < min_pixels:
            problems.append(f"object {k} shows {seen['visible_pixels']} < {min_pixels} pixels")
            continue
        if seen["bbox_2d"] is None:  # hidden entirely, which --min-pixels 0 allows
            continue
        x, y = obj["pixel_coords"][:2]
        x0, y0, x1, y1 = seen["bbox_2d"]
        if not (x0 <= x <= x1 and y0 <= y <= y1):
            problems.append(f"object {k}'s centre {x, y} lies outside its visible box {seen['bbox_2d']}")
    return problems


def mask_problems(scene: SampledScene, mask: np.ndarray, job: RenderJob) -> list[str]:
    """Why ``scene`` is rejected given its instance mask; empty when every object shows well enough."""
    objects = scene_graph(scene, job.options)["objects"]
    return visibility_problems(objects, object_visibility(mask, len(objects)), job.min_pixels)


def rendered_scene_record(scene: SampledScene, job: RenderJob, visibility: list[dict]) -> dict:
    """The scene graph plus what only rendering knows and what re-rendering needs."""
    record = scene_graph(scene, job.options)
    for obj, seen in zip(record["objects"], visibility, strict=True):
        obj["visible_pixels"] = seen["visible_pixels"]
        obj["bbox_2d"] = seen["bbox_2d"]
    record["render"] = {**job.settings.to_dict(), "blender_version": job.blender_version, "min_pixels": job.min_pixels}
    return record


def render_index(session, job: RenderJob, index: int) -> dict:
    """Render candidates of ``index`` until every object is visible; write the files; return the scene."""
    reasons: list[str] = []
    candidates = candidate_scenes(job.seed, index, job.options)
    for _ in range(job.max_visibility_attempts):
        scene = next(candidates)
        problems = mask_problems(scene, session.render_mask(scene), job) if job.mask_prepass else []
        if not problems:
            frame = session.render(scene)
            problems = mask_problems(scene, frame.mask, job)
        if not problems:
            record = rendered_scene_record(scene, job, object_visibility(frame.mask, len(scene.objects)))
            write_scene_files(job.layout, index, frame.image, frame.mask, record, job.settings.png_compression)
            return record
        reasons.append(problems[0])
    raise VisibilityError(
        f"scene {index}: no candidate in {job.max_visibility_attempts} showed every object with at least "
        f"{job.min_pixels} pixels (last: {reasons[-1]}); lower --min-pixels or --max-objects, or render larger images"
    )


def render_with_retries(session, job: RenderJob, index: int) -> Outcome:
    """Render one index; deterministic failures are reported at once, others retried a few times."""
    error = ""
    for _ in range(1 + UNEXPECTED_FAILURE_RETRIES):
        try:
            render_index(session, job, index)
            return Outcome(index, None)
        except (VisibilityError, SceneSamplingError) as failure:
            return Outcome(index, str(failure))
        except Exception as failure:  # noqa: BLE001 - one scene's crash must not end the run
            error = f"scene {index}: {type(failure).__name__}: {failure}\n{traceback.format_exc(limit=3)}"
    return Outcome(index, error.strip())
