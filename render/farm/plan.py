"""How ``python -m render`` spreads its work: device and GPU ids, worker processes or Ray actors,
recycling and crash retries, and shards of a job array. The CLI asks this module for a
:class:`FarmPlan` and hands it the job; none of this changes a single output byte.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from render.engines.devices import (
    DEVICE_CHOICES,
    DeviceChoice,
    choose_device,
    describe_choice,
    parse_gpu_ids,
    select_gpus,
    worker_gpus,
)
from render.farm import blender_process
from render.farm.local_workers import run_in_worker_processes
from render.farm.ray_executor import cluster_slots, probe_gpu_devices_on_ray, run_on_ray
from render.farm.scheduler import WorkerPolicy
from render.farm.worker import Outcome, RenderJob
from ruclevr.cli import ArgumentParser, UsageError, non_negative_int
from ruclevr.cluster import EXECUTORS, connect, disconnect, usable_cores
from ruclevr.shards import SHARD_SPEC_HELP, Shard, parse_shard

DEFAULT_POLICY = WorkerPolicy()


def add_farm_arguments(parser: ArgumentParser) -> None:
    """The farm's flags (devices, workers, shards, Ray), added to ``python -m render``'s parser."""
    parser.add_argument("--gpu-ids", type=gpu_ids_argument, default=None,
                        help="GPUs to render on, as positions in the backend's device list (e.g. 0,2; the numbers CUDA_VISIBLE_DEVICES "
                             "uses, counted among the GPUs this process sees); default: all of the chosen backend's. Each worker "
                             "process sees only its own GPU (CUDA_VISIBLE_DEVICES or HIP's / oneAPI's variable set before it starts)")
    parser.add_argument("--executor", choices=EXECUTORS, default="local",
                        help="local: worker processes on this machine; ray: long-lived Blender actors on a Ray cluster; default local")
    parser.add_argument("--address", default=None,
                        help="with --executor ray: the cluster to join (host:port, or 'auto' for the one 'ray start' made on this "
                             "node; default $RAY_ADDRESS, else a private local cluster with one CPU per core)")
    parser.add_argument("--shard", default=None, metavar="SPEC",
                        help=f"render only one shard of the indices: {SHARD_SPEC_HELP}; shards are contiguous blocks that "
                             "partition the range exactly; each writes scenes.shard-I-of-N.json (combine with 'python -m render merge')")
    parser.add_argument("--recycle-after", type=non_negative_int, default=DEFAULT_POLICY.recycle_after, metavar="N",
                        help=f"replace a worker by a fresh Blender after this many scenes (0 = never); default {DEFAULT_POLICY.recycle_after}")
    parser.add_argument("--max-worker-rss", type=non_negative_int, default=int(DEFAULT_POLICY.max_rss_mb), metavar="MB",
                        help=f"replace a worker whose resident memory after a scene exceeds this many MB (0 = no cap); "
                             f"default {int(DEFAULT_POLICY.max_rss_mb)}")
    parser.add_argument("--crash-retries", type=non_negative_int, default=DEFAULT_POLICY.crash_retries, metavar="K",
                        help=f"how often a scene whose worker died (killed, out of memory, crashed) is given to a fresh worker "
                             f"before it is reported as failed; default {DEFAULT_POLICY.crash_retries}")


def gpu_ids_argument(text: str):
    try:
        return parse_gpu_ids(text)
    except UsageError as error:
        raise argparse.ArgumentTypeError(str(error).removeprefix("--gpu-ids ")) from None


def shard_from_args(args, environ: Mapping[str, str] | None = None) -> Shard | None:
    return None if args.shard is None else parse_shard(args.shard, os.environ if environ is None else environ)


@dataclass(frozen=True)
class FarmPlan:
    executor: str
    device: DeviceChoice
    workers: int
    threads: int
    policy: WorkerPolicy
    started_ray: bool = False  # this process started a local Ray cluster and shuts it down at the end

    def execute(self, job: RenderJob, indices: Iterable[int], log: Callable[[str], None],
                at_most: int | None = None) -> Iterator[Outcome]:
        """Outcomes of ``indices`` in completion order, one per index; ``indices`` may be a lazy iterable
        of at most ``at_most`` items (then no more workers than that are started)."""
        workers = min(self.workers, max(1, len(indices) if at_most is None else at_most))  # type: ignore[arg-type]  # a sequence when at_most is None
        if self.executor == "ray":
            try:
                yield from run_on_ray(job, indices, workers, self.policy, log)
            finally:
                if self.started_ray:
                    disconnect()
            return
        yield from run_in_worker_processes(job, indices, workers, self.policy, log)


def plan_farm(args, prog: str, log: Callable[[str], None] | None = None) -> FarmPlan:
    """Resolve the device, GPUs, worker count, threads and executor; UsageError for what cannot be."""
    log = log or (lambda line: print(line, file=sys.stderr))
    if args.address is not None and args.executor != "ray":
        raise UsageError(f"--address {args.address!r} needs --executor ray")
    policy = WorkerPolicy(args.recycle_after, float(args.max_worker_rss), args.crash_retries)
    if args.executor == "ray":
        return _plan_ray(args, prog, policy, log)
    plan = plan_local(resolve_device(args.device, args.gpu_ids, prog, log), args.workers, args.threads, policy)
    for slot in range(plan.workers if plan.device.backend != "cpu" else 0):
        worker_device, environment = worker_gpus(plan.device, slot, plan.workers)
        shown = ", ".join(f"{k}={v}" for k, v in environment.items())
        log(f"{prog}: worker {slot}: {describe_choice(worker_device)} ({shown})")
    return plan


def plan_local(device: DeviceChoice, workers: int | None, threads: int | None, policy: WorkerPolicy) -> FarmPlan:
    """Worker processes on this machine: by default one per GPU or one per core, with one Cycles
    thread each when several share the CPU (else all cores)."""
    workers = workers or default_workers(device)
    threads = threads if threads is not None else (1 if workers > 1 and device.backend == "cpu" else 0)
    return FarmPlan("local", device, workers, threads, policy)


def _plan_ray(args, prog: str, policy: WorkerPolicy, log: Callable[[str], None]) -> FarmPlan:
    if args.gpu_ids is not None:
        raise UsageError("--gpu-ids does not apply to --executor ray: Ray gives each actor its GPU (set them with 'ray start --num-gpus')")
    started = connect(args.address or os.environ.get("RAY_ADDRESS") or None, usable_cores())
    try:
        device = resolve_device(args.device, None, prog, log, probe_gpu_devices_on_ray)
        threads = args.threads if args.threads is not None else (1 if device.backend == "cpu" else 0)
        workers = args.workers or cluster_slots(device, threads)
    except BaseException:
        if started:
            disconnect()
        raise
    log(f"{prog}: Ray: {workers} Blender actor(s) on {describe_choice(device) if device.backend == 'cpu' else device.backend.upper() + ', one GPU each'}")
    return FarmPlan("ray", device, workers, threads, policy, started)


def resolve_device(requested: str, gpu_ids: Sequence[int] | None, prog: str, log: Callable[[str], None],
                   probe: Callable[[], dict[str, list[str]]] | None = None) -> DeviceChoice:
    """``--device`` and ``--gpu-ids`` against the GPUs Blender finds (asked in a child process, so
    this process stays free of bpy); logs what is enabled, or the CPU fallback of ``auto``."""
    if requested not in DEVICE_CHOICES:
        raise UsageError(f"--device {requested!r} is not one of: {', '.join(DEVICE_CHOICES)}")
    if requested == "cpu" and not gpu_ids:
        return DeviceChoice("cpu", ())
    found = (probe or blender_process.probe_gpu_devices_isolated)()
    choice = select_gpus(choose_device(requested, found), gpu_ids, found)
    if choice.warning:
        log(f"{prog}: warning: {choice.warning}")
    elif choice.backend != "cpu":
        log(f"{prog}: rendering on {describe_choice(choice)}")
    return choice


def default_workers(device: DeviceChoice) -> int:
    """One Blender per GPU; on the CPU one 1-thread Blender per usable core, each pinned to its core
    (benchmarks/farm_bench.py: 1.06-1.09x the images/minute of one Blender with as many threads on 2
    cores, and a crash costs one core's scene, not the run's)."""
    if device.backend != "cpu":
        return max(1, len(device.devices))
    return usable_cores()


def overlap_pays(farm: FarmPlan) -> bool:
    """Pipeline the local workers where a core is free beside each one's render: on a GPU (the render
    is the GPU's time), and on the CPU only when the workers' Cycles threads leave a core free (e.g.
    ``--workers 1 --threads 1``); CPU workers that fill the cores are pinned one per core, where the
    helper thread would take its time from the worker's own render (docs/performance.md, "CPU work
    beside the render"). Ray actors render serially."""
    if farm.executor != "local":
        return False
    return farm.device.backend != "cpu" or 0 < farm.workers * farm.threads < usable_cores()
