"""Re-rendering recoloured scene graphs through the render package's public API: the same engine
session reuse, worker processes, device choice and writer as ``python -m render``."""

from __future__ import annotations

import copy
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image
from tqdm import tqdm

from dataset.augment.settings import PROG, AugmentPaths, AugmentSettings, AugmentSources
from render import (
    DeviceChoice,
    FarmPlan,
    Outcome,
    OutputLayout,
    Rerenderer,
    WorkerPolicy,
    blender_process_scheduler,
    check_gpus_visible,
    drop_blender_script_paths,
    object_visibility,
    plan_local,
    resolve_device,
    with_occlusion,
    with_visibility,
    write_scene_files,
)
from ruclevr.cli import progress_disabled, stage_logger
from ruclevr.paths import confined_path

#: An unexpected render failure of one scene is retried this many times, then reported.
RENDER_RETRIES = 1
#: (source scene, its recoloured scene graph), the unit of rendering.
Planned = tuple[dict[str, Any], dict[str, Any]]
#: What a worker is sent for one scene: (index, recoloured scene, source image filename).
RerenderTask = tuple[int, dict[str, Any], str]


def source_mask(masks_dir: Path | None, image_filename: str) -> np.ndarray | None:
    if masks_dir is None:
        return None
    path = confined_path(masks_dir, image_filename, f"source scene {image_filename!r}: image_filename")
    if not path.is_file():
        return None
    with Image.open(path) as image:
        return np.asarray(image).copy()


def render_scene(rerenderer: Rerenderer, recoloured: dict[str, Any], source_filename: str, masks_dir: Path | None,
                 layout: OutputLayout, index: int, blender_version: str) -> dict[str, Any]:
    """Re-render one recoloured scene, check its mask against the source's, write image, mask and scene."""
    frame = rerenderer.render(recoloured)
    with_visibility(recoloured["objects"], object_visibility(frame.mask, len(recoloured["objects"])))
    with_occlusion(recoloured, frame.mask)
    recoloured["render"] = {**recoloured["render"], "blender_version": blender_version}
    before = source_mask(masks_dir, source_filename)
    recoloured["augmentation"]["mask_matches_source"] = None if before is None else bool(np.array_equal(before, frame.mask))
    write_scene_files(layout, index, frame.image, frame.mask, recoloured)
    return recoloured


@dataclass(frozen=True)
class RerenderJob:
    """What an augmentation render worker needs; picklable, for worker processes."""

    out: str
    prefix: str
    masks_dir: str | None
    device: DeviceChoice  # narrowed to the worker's GPU(s)
    threads: int


class RerenderWorker:
    """Lives in a worker process: one Blender session re-rendering recoloured scenes to files.

    A task is ``(index, recoloured scene, source image filename)``; an unexpected failure of one
    scene is retried RENDER_RETRIES times, then reported (a worker that dies is the scheduler's).
    """

    def __init__(self, job: RerenderJob) -> None:
        drop_blender_script_paths()
        check_gpus_visible(job.device)
        self.rerenderer = Rerenderer(job.device, job.threads)
        self.version = self.rerenderer.blender_version()
        self.layout = OutputLayout(Path(job.out), job.prefix)
        self.masks_dir = None if job.masks_dir is None else Path(job.masks_dir)

    def render(self, task: RerenderTask) -> Outcome:
        index, recoloured, source_filename = task
        error = ""
        for _ in range(1 + RENDER_RETRIES):
            try:
                render_scene(self.rerenderer, copy.deepcopy(recoloured), source_filename, self.masks_dir, self.layout, index, self.version)
                return Outcome(index, None)
            except Exception as failure:  # noqa: BLE001 - one scene's failure must not lose the others
                error = f"{recoloured['image_filename']} (from {source_filename}): {type(failure).__name__}: {failure}"
        return Outcome(index, error)

    def close(self) -> None:
        self.rerenderer.close()


def open_rerender_worker(job: RerenderJob) -> RerenderWorker:
    return RerenderWorker(job)


def plan_rendering(settings: AugmentSettings) -> FarmPlan:
    """``--device``, ``--workers`` and ``--threads`` resolved as ``python -m render`` resolves them
    (local worker processes)."""
    device = resolve_device(settings.device, None, PROG, stage_logger("dataset").warning)
    return plan_local(device, settings.workers, settings.threads, WorkerPolicy())


def render_pending(planned: Sequence[Planned], sources: AugmentSources, paths: AugmentPaths, plan: FarmPlan) -> list[str]:
    """Render the scenes whose scene file does not exist yet in the worker processes of ``plan``;
    return failures by scene."""
    layout = paths.layout
    pending = {int(recoloured["image_index"]): (source, recoloured) for source, recoloured in planned
               if not layout.is_finished(int(recoloured["image_index"]))}
    if not pending:
        return []
    masks_dir = sources.masks_dir if sources.masks_dir is not None else sources.scenes_path.parent / "masks"
    job = RerenderJob(str(paths.root), paths.prefix, str(masks_dir), plan.device, plan.threads)
    failures = []
    with tqdm(total=len(pending), desc="augment: render", unit="scene", file=sys.stderr, dynamic_ncols=True,
              disable=progress_disabled()) as progress:

        def log(line: str) -> None:
            progress.write(f"{PROG}: {line}", file=sys.stderr)

        def task_of(index: int) -> RerenderTask:
            source, recoloured = pending[index]
            return index, recoloured, source["image_filename"]

        scheduler = blender_process_scheduler(open_rerender_worker, job, plan.threads, layout, min(plan.workers, len(pending)),
                                              plan.policy, log, task_of)
        for outcome in scheduler.run(sorted(pending)):
            if outcome.error:
                failures.append(outcome.error)
            progress.update(1)
    return failures


def warn_of_changed_masks(rendered: Sequence[Mapping[str, Any]]) -> None:
    """Only colours changed, so a mask unlike its source's points at another Blender or changed geometry code."""
    for scene in rendered:
        if scene["augmentation"]["mask_matches_source"] is False:
            stage_logger("dataset").warning(f"{PROG}: warning: the mask of {scene['image_filename']} differs from its "
                                            f"source {scene['augmentation']['source_image_filename']}'s")
