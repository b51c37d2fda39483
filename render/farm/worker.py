"""Render one scene index: sample, check visibility on the mask alone, re-sample if needed, render
to arrays; then encode the files and hand them to a writer (this process's, or the Ray driver's).

The worker is what every executor runs (in this process or in worker processes, later on
cluster nodes). It reaches the render engine (:mod:`render.engines.registry`; Cycles imports bpy) only
through :func:`open_session`, so planning and the visibility checks stay testable without Blender.
"""

from __future__ import annotations

import functools
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np

from render.engines.devices import DeviceChoice
from render.engines.frame import RenderedFrame
from render.engines.registry import EngineFactory, RenderBackend, engine_factory
from render.farm.outputs import OutputLayout, SceneFiles, encode_scene_files, write_encoded_scene
from render.legibility import LegibilityReader, calibration_id, misread_objects
from render.model.occlusion import with_occlusion
from render.model.sampler import SampledScene, SceneOptions, SceneSamplingError, candidate_scenes
from render.model.scene_graph import scene_graph
from render.model.settings import RenderSettings
from render.model.visibility import hidden_problems, object_visibility, visibility_problems, with_visibility

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
    # The visible-fraction floor (render.model.visibility.DEFAULT_MIN_VISIBLE_FRACTION for look 3);
    # 0 checks pixels only, as every render before look 3 did.
    min_visible_fraction: float = 0.0
    # Check each candidate's visibility on its mask alone (a few percent of a render) and render
    # only the candidate that passes. The files are the same either way (a test checks); False
    # renders every candidate fully, for that test and the benchmark.
    mask_prepass: bool = True
    # Legible scenes only (look 3's default): a candidate whose render the legibility reader
    # (render/legibility.py) reads otherwise than its record, in any attribute of any object, is
    # re-sampled like one with a hidden object.
    legible_only: bool = False
    # Each frame's post-render work (reading, encoding, writing) in a helper thread while the next
    # frame renders (render/farm/pipeline.py); the same files either way (a test checks).
    overlap: bool = False
    # What the records say the seed is: ``seed`` itself, or its commitment (--seed-file; ruclevr.secret_seed).
    seed_record: int | str | None = None
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
    candidates: int | None = None  # candidates sampled for the written scene (1 = none re-sampled); None = not told


class RenderedScene(NamedTuple):
    """An accepted candidate, rendered: its arrays and its scene record (nothing written yet)."""

    image: np.ndarray
    mask: np.ndarray
    record: dict
    candidates: int = 1  # candidates sampled for it, itself included


class VisibilityError(RuntimeError):
    """No candidate scene of an index showed every object well enough."""


def default_min_pixels(width: int, height: int) -> int:
    """200 pixels at 480x320, scaled with the image area so small renders stay satisfiable."""
    return max(1, round(DEFAULT_MIN_PIXELS * width * height / (480 * 320)))


def open_session(job: RenderJob) -> RenderBackend:
    """A session of ``job``'s render engine (the one place the worker reaches it)."""
    return job.engine(job.settings, job.device)


def mask_problems(graph: dict, mask: np.ndarray, min_pixels: int, min_visible_fraction: float = 0.0) -> list[str]:
    """Why a scene graph is rejected given its instance mask; empty when every object shows well enough."""
    return shown_problems(graph, object_visibility(mask, len(graph["objects"])), min_pixels, min_visible_fraction)


def shown_problems(graph: dict, visibility: list[dict], min_pixels: int, min_visible_fraction: float) -> list[str]:
    return visibility_problems(graph["objects"], visibility, min_pixels) or hidden_problems(graph, visibility, min_visible_fraction)


def rendered_scene_record(graph: dict, job: RenderJob, visibility: list[dict]) -> dict:
    """The scene graph plus what only rendering knows and what re-rendering needs."""
    with_visibility(graph["objects"], visibility)
    if job.seed_record is not None:
        graph["seed"] = job.seed_record
    graph["render"] = {**job.settings.to_dict(), "blender_version": job.blender_version, "min_pixels": job.min_pixels}
    if job.min_visible_fraction > 0:
        graph["render"]["min_visible_fraction"] = job.min_visible_fraction
    if job.legible_only:
        graph["render"].update(legible_only_record())
    return graph


def legible_only_record() -> dict:
    """What a legible-only render records: that the reader decided, and which reader it was."""
    return {"legible_only": True, "legibility_reader": calibration_id()}


@functools.cache
def _reader(look: int) -> LegibilityReader:
    return LegibilityReader.for_look(look)


@dataclass(frozen=True)
class ShownCandidate:
    """A candidate rendered and checked for what its mask shows: its graph, and its frame and per-object
    visibility unless the pre-pass already refused it; ``problems`` why it is refused (empty: shown)."""

    graph: dict
    frame: RenderedFrame | None
    visibility: list[dict]
    problems: list[str]


def render_shown(session: RenderBackend, job: RenderJob, scene: SampledScene) -> ShownCandidate:
    """Build ``scene``'s graph (once: it serves the mask checks and the record), check the pre-pass mask,
    render, and check that every object shows enough (not repeated on the pre-pass's own mask: a test
    checks the pre-pass draws the render's mask). Blender's work: the worker's thread."""
    graph = scene_graph(scene, job.options)
    prepass_mask = session.render_mask(scene) if job.mask_prepass else None
    if prepass_mask is not None:
        problems = mask_problems(graph, prepass_mask, job.min_pixels, job.min_visible_fraction)
        if problems:
            return ShownCandidate(graph, None, [], problems)
    frame = session.render(scene)
    visibility = object_visibility(frame.mask, len(scene.objects))
    same_mask = prepass_mask is not None and np.array_equal(frame.mask, prepass_mask)
    problems = [] if same_mask else shown_problems(graph, visibility, job.min_pixels, job.min_visible_fraction)
    return ShownCandidate(graph, frame, visibility, problems)


def misread(shown: ShownCandidate, job: RenderJob) -> list[str]:
    """Legible only: the objects of a shown candidate the reader reads otherwise than recorded."""
    if not job.legible_only or shown.frame is None:
        return []
    return misread_objects(shown.graph, shown.frame.image, shown.frame.mask, _reader(job.settings.look))


def render_scene(session: RenderBackend, job: RenderJob, index: int) -> RenderedScene:
    """Render candidates of ``index`` until every object is visible (and, legible only, read as
    recorded); the accepted one's arrays and record."""
    reasons: list[str] = []
    candidates = candidate_scenes(job.seed, index, job.options)
    for attempt in range(1, job.max_visibility_attempts + 1):
        shown = render_shown(session, job, next(candidates))
        problems = shown.problems or misread(shown, job)
        if not problems:
            return accepted_scene(shown, job, attempt)
        reasons.append(problems[0])
    raise visibility_failure(job, index, reasons[-1])


def accepted_scene(shown: ShownCandidate, job: RenderJob, attempts: int) -> RenderedScene:
    """A shown (and, legible only, read) candidate's arrays and record, its occlusion recorded."""
    assert shown.frame is not None  # a shown candidate has its frame
    with_occlusion(shown.graph, shown.frame.mask)
    return RenderedScene(shown.frame.image, shown.frame.mask, rendered_scene_record(shown.graph, job, shown.visibility), attempts)


def visibility_failure(job: RenderJob, index: int, last_reason: str) -> VisibilityError:
    """What a scene index whose every candidate was rejected fails with."""
    return VisibilityError(
        f"scene {index}: no candidate in {job.max_visibility_attempts} showed every object with at least "
        f"{job.min_pixels} pixels{' and legibly' if job.legible_only else ''} (last: {last_reason}); lower --min-pixels "
        "or --max-objects, or render larger images"
    )


def encoded_scene(session: RenderBackend, job: RenderJob, index: int) -> SceneFiles:
    """The files of ``index`` as bytes: what a worker writes, or a Ray actor returns to be written."""
    return encoded_files(render_scene(session, job, index), job)


def encoded_files(rendered: RenderedScene, job: RenderJob) -> SceneFiles:
    return encode_scene_files(rendered.image, rendered.mask, rendered.record, job.settings.png_compression)


def render_index(session: RenderBackend, job: RenderJob, index: int) -> dict:
    """Render ``index``, write its files into the job's folder and return its scene record."""
    files = encoded_scene(session, job, index)
    write_encoded_scene(job.layout, index, files)
    return files.scene


def render_with_retries(session: RenderBackend, job: RenderJob, index: int,
                        deliver: Callable[[SceneFiles], None] | None = None) -> Outcome:
    """Render one index and hand its files to ``deliver`` (default: write them into the job's
    folder); deterministic failures are reported at once, others retried a few times."""
    deliver = deliver or (lambda files: write_encoded_scene(job.layout, index, files))
    error = ""
    for _ in range(1 + UNEXPECTED_FAILURE_RETRIES):
        try:
            rendered = render_scene(session, job, index)
            deliver(encoded_files(rendered, job))
            return Outcome(index, None, rendered.candidates)
        except VisibilityError as failure:
            return Outcome(index, str(failure), job.max_visibility_attempts)
        except SceneSamplingError as failure:
            return Outcome(index, str(failure))
        except Exception as failure:  # noqa: BLE001 - one scene's crash must not end the run
            error = f"scene {index}: {type(failure).__name__}: {failure}\n{traceback.format_exc(limit=3)}"
    return Outcome(index, error.strip())
