"""Executors: run the worker over a list of scene indices and yield outcomes as scenes finish.

* :func:`run_in_process` — one Blender session in this process (also what each worker process runs).
* :func:`run_in_processes` — ``workers`` spawned processes, each with its own Blender session and
  its own Cycles thread count (two 1-thread processes beat one 2-thread process on CPUs); the
  worker pool of :mod:`render.workers` (GPU pinning, recycling, retries when a worker dies), which
  the CLI drives through :mod:`render.farm`, as it does Ray actors (:mod:`render.ray_executor`).

Both yield :class:`render.worker.Outcome` in completion order; the caller owns progress and
merging.

Importing bpy puts Blender's script folders at the front of ``sys.path``; spawned children inherit
that list, and there ``bpy/<version>/scripts/modules/bpy`` shadows the real ``bpy`` module. Every
function that runs in a spawned child therefore starts with :func:`drop_blender_script_paths`. The
CLI's main process stays free of bpy anyway (device probing runs in a short-lived child,
:func:`probe_gpu_devices_isolated`), so it stays small while the workers render.
"""

from __future__ import annotations

import importlib.metadata
import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor
from typing import Iterator, Sequence

from render.worker import Outcome, RenderJob, open_session, render_with_retries


def run_in_process(job: RenderJob, indices: Sequence[int]) -> Iterator[Outcome]:
    if not indices:
        return
    with open_session(job) as session:
        for index in indices:
            yield render_with_retries(session, job, index)


def run_in_processes(job: RenderJob, indices: Sequence[int], workers: int) -> Iterator[Outcome]:
    """Scenes are handed out one at a time, so a slow scene never holds back a queue."""
    from render.scheduler import WorkerPolicy
    from render.workers import run_in_worker_processes

    yield from run_in_worker_processes(job, indices, workers, WorkerPolicy())


def probe_gpu_devices_isolated() -> dict[str, list[str]]:
    """The GPUs Cycles sees, asked in a spawned child so this process stays free of bpy."""
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        return pool.submit(_probe_gpu_devices).result()


def drop_blender_script_paths() -> None:
    """Remove the Blender script folders a parent that imported bpy handed down in ``sys.path``."""
    if "bpy" in sys.modules:
        return  # this process has bpy already: its paths are its own
    blender_root = str(importlib.metadata.distribution("bpy").locate_file("bpy")) + os.sep
    sys.path[:] = [path for path in sys.path if not path.startswith(blender_root)]


def _probe_gpu_devices() -> dict[str, list[str]]:
    drop_blender_script_paths()
    from render.blender import probe_gpu_devices

    return probe_gpu_devices()
