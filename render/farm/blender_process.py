"""Helpers for the Blender processes, in one place: asking a child which GPUs Blender sees,
checking a worker sees the GPUs it was given, cleaning the ``sys.path`` a spawned child inherits,
and a worker's resident memory. The executors themselves are the worker pool of
:mod:`render.farm.local_workers` (local processes) and :mod:`render.farm.ray_executor` (Ray actors), which the CLI
drives through :mod:`render.farm.plan`.

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
from concurrent.futures.process import BrokenProcessPool

import psutil

from render.engines.devices import VISIBILITY_VARIABLES, DeviceChoice, describe_found
from ruclevr.cli import UsageError


def probe_gpu_devices_isolated() -> dict[str, list[str]]:
    """The GPUs Cycles sees, asked in a spawned child so this process stays free of bpy."""
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        try:
            return pool.submit(probe_gpu_devices_in_child).result()
        except ModuleNotFoundError:
            raise  # no bpy: run_cli names the package to install
        except (BrokenProcessPool, ImportError, OSError, MemoryError) as error:  # killed, or bpy's libraries
            reason = "it ended abruptly" if isinstance(error, BrokenProcessPool) else str(error)  # not mapped
            raise UsageError(f"Blender could not be started to look for GPUs ({reason}; out of memory?)") from None


def drop_blender_script_paths() -> None:
    """Remove the Blender script folders a parent that imported bpy handed down in ``sys.path``."""
    if "bpy" in sys.modules:
        return  # this process has bpy already: its paths are its own
    blender_root = str(importlib.metadata.distribution("bpy").locate_file("bpy")) + os.sep
    sys.path[:] = [path for path in sys.path if not path.startswith(blender_root)]


def probe_gpu_devices_in_child() -> dict[str, list[str]]:
    """The GPUs Cycles sees from this process, a spawned child or a Ray worker (its inherited
    Blender script paths dropped first)."""
    drop_blender_script_paths()
    from render.engines.blender import probe_gpu_devices

    return probe_gpu_devices()


def check_gpus_visible(device: DeviceChoice) -> None:
    """Fail the worker's start, naming what it sees, unless every GPU it was given is visible to it.

    Without this, Cycles would enable no device and quietly render on the CPU.
    """
    if device.backend == "cpu":
        return
    found = probe_gpu_devices_in_child()
    missing = [name for name in device.devices if name not in found.get(device.backend, [])]
    if missing:
        variable = VISIBILITY_VARIABLES[device.backend]
        raise RuntimeError(
            f"{device.backend.upper()} device {', '.join(missing)} is not visible to this worker "
            f"({variable}={os.environ.get(variable, '')!r}; found: {describe_found(found)})"
        )


def resident_memory() -> int:
    """This process's resident set size in bytes."""
    return psutil.Process().memory_info().rss
