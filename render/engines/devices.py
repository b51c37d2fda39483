"""Which Cycles device to render on, decided from what Blender found (pure Python, no bpy).

As in BlenderProc's ``set_render_devices``: an ordered list of GPU backends is tried, only the
one chosen is enabled, an explicit choice that is impossible fails loudly (exit 2 naming what
was found), and only ``auto`` falls back to the CPU, with a warning naming what it found.
``render.engines.blender.probe_gpu_devices`` supplies ``found``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ruclevr.cli import UsageError

#: Backends in the order ``auto`` prefers them (OptiX before CUDA on the same NVIDIA card).
GPU_BACKENDS = ("optix", "cuda", "hip", "oneapi")
DEVICE_CHOICES = ("auto", "cpu") + GPU_BACKENDS


@dataclass(frozen=True)
class DeviceChoice:
    backend: str  # "cpu" or one of GPU_BACKENDS
    devices: tuple[str, ...]  # names of the GPU devices to enable (empty for the CPU)
    warning: str | None = None
    # Positions of ``devices`` in the backend's list (``--gpu-ids``); empty = every device, none hidden.
    gpu_ids: tuple[int, ...] = ()


def describe_found(found: Mapping[str, Sequence[str]]) -> str:
    """``"CUDA: NVIDIA H200; OPTIX: NVIDIA H200"`` or ``"no GPU (CPU only)"``."""
    parts = [f"{backend.upper()}: {', '.join(names)}" for backend, names in found.items() if names]
    return "; ".join(parts) if parts else "no GPU (CPU only)"


def choose_device(requested: str, found: Mapping[str, Sequence[str]]) -> DeviceChoice:
    """Resolve ``--device`` against the GPUs Blender found; raise UsageError if it cannot be met."""
    if requested not in DEVICE_CHOICES:
        raise UsageError(f"--device {requested!r} is not one of: {', '.join(DEVICE_CHOICES)}")
    if requested == "cpu":
        return DeviceChoice("cpu", ())
    if requested != "auto":
        names = tuple(found.get(requested, ()))
        if not names:
            raise UsageError(f"--device {requested}: no {requested.upper()} device found (found: {describe_found(found)})")
        return DeviceChoice(requested, names)
    for backend in GPU_BACKENDS:
        names = tuple(found.get(backend, ()))
        if names:
            return DeviceChoice(backend, names)
    return DeviceChoice("cpu", (), warning=f"--device auto: found {describe_found(found)}; rendering on the CPU")


# --- GPU ids and one GPU per worker (``--gpu-ids``, ``--workers``) ---------------------------------

#: The variable each backend's runtime reads, before it starts, to decide which GPUs a process sees.
#: Setting it in a worker's environment before the worker starts is the only way to stop a Blender
#: process from opening every GPU of the machine.
VISIBILITY_VARIABLES = {
    "cuda": "CUDA_VISIBLE_DEVICES",
    "optix": "CUDA_VISIBLE_DEVICES",
    "hip": "HIP_VISIBLE_DEVICES",
    "oneapi": "ONEAPI_DEVICE_SELECTOR",
}


def parse_gpu_ids(text: str) -> tuple[int, ...]:
    """``"0,2"`` -> ``(0, 2)``: positions in the backend's device list, as Blender (and CUDA) order them."""
    ids = []
    for part in text.split(","):
        part = part.strip()
        if not (part.isascii() and part.isdigit()):
            raise UsageError(f"--gpu-ids {text!r}: expected comma-separated device numbers such as 0,1")
        if int(part) in ids:
            raise UsageError(f"--gpu-ids {text!r}: device {int(part)} is listed twice")
        ids.append(int(part))
    return tuple(ids)


def select_gpus(choice: DeviceChoice, gpu_ids: Sequence[int] | None, found: Mapping[str, Sequence[str]]) -> DeviceChoice:
    """Narrow ``choice`` to the GPUs of ``--gpu-ids`` (all of the backend's when None)."""
    if choice.backend == "cpu":
        if gpu_ids:
            raise UsageError(f"--gpu-ids {format_gpu_ids(gpu_ids)}: no GPU is used (rendering on the CPU; found: {describe_found(found)})")
        return choice
    names = tuple(found.get(choice.backend, ()))
    wanted = tuple(gpu_ids) if gpu_ids else tuple(range(len(names)))
    for gpu_id in wanted:
        if gpu_id >= len(names):
            listing = ", ".join(f"{k} = {name}" for k, name in enumerate(names))
            raise UsageError(f"--gpu-ids {format_gpu_ids(wanted)}: {choice.backend.upper()} has no device {gpu_id} (it has {listing})")
    return DeviceChoice(choice.backend, tuple(names[k] for k in wanted), choice.warning, wanted)


def format_gpu_ids(gpu_ids: Sequence[int]) -> str:
    return ",".join(str(k) for k in gpu_ids)


def describe_choice(choice: DeviceChoice) -> str:
    """``"CUDA: GPU 0 (NVIDIA H200), GPU 1 (NVIDIA H200)"`` or ``"CPU"``, for the log."""
    if choice.backend == "cpu":
        return "CPU"
    ids = choice.gpu_ids or tuple(range(len(choice.devices)))
    return f"{choice.backend.upper()}: " + ", ".join(f"GPU {k} ({name})" for k, name in zip(ids, choice.devices, strict=True))


def worker_gpus(
    choice: DeviceChoice, slot: int, workers: int, environ: Mapping[str, str] | None = None
) -> tuple[DeviceChoice, dict[str, str]]:
    """The GPUs worker ``slot`` of ``workers`` renders on, and the environment that hides every other
    GPU from it. With at least as many workers as GPUs each worker gets one (round robin); with fewer,
    the GPUs are dealt out (2 workers, 4 GPUs: 0,2 and 1,3). On the CPU: unchanged, no environment."""
    if choice.backend == "cpu" or not choice.gpu_ids:
        return choice, {}
    count = len(choice.gpu_ids)
    positions = [slot % count] if workers >= count else list(range(slot, count, workers))
    ids = tuple(choice.gpu_ids[p] for p in positions)
    device = DeviceChoice(choice.backend, tuple(choice.devices[p] for p in positions), None, ids)
    return device, visibility_environment(choice.backend, ids, os.environ if environ is None else environ)


def visibility_environment(backend: str, gpu_ids: Sequence[int], environ: Mapping[str, str]) -> dict[str, str]:
    """The variables that leave a child process exactly the GPUs ``gpu_ids`` of the ones this process sees.

    Ids count the devices visible here: inside a SLURM job with ``CUDA_VISIBLE_DEVICES=4,5``, id 1
    is physical device 5, so the child gets ``CUDA_VISIBLE_DEVICES=5``.
    """
    variable = VISIBILITY_VARIABLES[backend]
    if backend == "oneapi":
        return {variable: "level_zero:" + format_gpu_ids(gpu_ids)}
    inherited = [entry.strip() for entry in environ.get(variable, "").split(",") if entry.strip()]
    if not inherited:
        return {variable: format_gpu_ids(gpu_ids)}
    for gpu_id in gpu_ids:
        if gpu_id >= len(inherited):
            raise UsageError(f"--gpu-ids: device {gpu_id} is not among {variable}={environ[variable]}")
    return {variable: ",".join(inherited[k] for k in gpu_ids)}
