"""Ray: long-lived Blender actors on a cluster (``python -m render --executor ray [--address ADDR]``).

One actor per CPU (or GPU) slot, each holding one Blender session for its whole life, gets scene
indices one at a time from :mod:`render.farm.scheduler` (the same retry and recycling rules as local
worker processes). An actor renders a scene to arrays, encodes its files and returns their bytes
without writing anything; this process (the driver) writes them into ``--out`` as a local run does
(image, mask, then the scene file, each atomically). So the nodes need no shared file system, and
the files are byte for byte those of a local run: a scene depends on (seed, index, settings) alone.

On GPUs Ray gives each actor one GPU and sets ``CUDA_VISIBLE_DEVICES`` for it before it starts;
the actor enables the GPUs of the chosen backend that it sees, and fails to start (reported, not
silently on the CPU) when it sees none. ``ray`` is imported only when this executor is used.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from render.engines.devices import DeviceChoice, describe_found
from render.farm.blender_process import probe_gpu_devices_in_child, resident_memory
from render.farm.local_workers import BlenderWorker
from render.farm.outputs import SceneFiles, write_encoded_scene
from render.farm.scheduler import Died, Done, Ready, Scheduler, WorkerPolicy
from render.farm.worker import Outcome, RenderJob, render_with_retries

#: Seconds an actor is given to close its Blender session when told to stop, before it is killed.
STOP_TIMEOUT = 30.0


def probe_gpu_devices_on_ray() -> dict[str, list[str]]:
    """The GPUs Cycles sees on a cluster node (one with a GPU when the cluster has any)."""
    import ray

    has_gpus = ray.cluster_resources().get("GPU", 0) >= 1
    probe = ray.remote(probe_gpu_devices_in_child).options(num_cpus=1, num_gpus=1 if has_gpus else 0, max_calls=1)
    return ray.get(probe.remote())


def slot_resources(device: DeviceChoice, threads: int) -> dict[str, float]:
    """What one actor reserves: one GPU, or ``threads`` CPUs (1 when Cycles may use all cores)."""
    if device.backend != "cpu":
        return {"num_cpus": 1, "num_gpus": 1}
    return {"num_cpus": max(1, threads), "num_gpus": 0}


def cluster_slots(device: DeviceChoice, threads: int) -> int:
    """How many actors the cluster can hold at once: its GPUs, or its CPUs over each actor's share."""
    import ray

    resources = ray.cluster_resources()
    wanted = slot_resources(device, threads)
    if device.backend != "cpu":
        return max(1, int(resources.get("GPU", 0)))
    return max(1, int(resources.get("CPU", 1) // wanted["num_cpus"]))


def run_on_ray(job: RenderJob, indices: Iterable[int], workers: int, policy: WorkerPolicy,
               log: Callable[[str], None] | None = None) -> Iterator[Outcome]:
    """Render ``indices`` with ``workers`` Ray actors (the cluster must be connected, see :func:`ruclevr.cluster.connect`)."""
    backend = RayActors(job, slot_resources(job.device, job.settings.threads))
    return Scheduler(backend, workers, policy, log).run(indices)


class RayActors:
    """A :class:`render.farm.scheduler.WorkerBackend` of Ray actors; the driver writes their files."""

    def __init__(self, job: RenderJob, resources: dict[str, float]) -> None:
        import ray

        self._ray = ray
        self._job = job
        self._actor_class: Any = ray.remote(RenderActor).options(**resources, max_restarts=0, max_task_retries=0)
        self._actors: dict[int, Any] = {}  # slot -> live actor handle
        self._calls: dict[Any, tuple[int, Any, str]] = {}  # object ref -> (slot, actor, "ready" | "render")

    def start(self, slot: int) -> None:
        actor = self._actor_class.remote(self._job)
        self._actors[slot] = actor
        self._calls[actor.ready.remote()] = (slot, actor, "ready")

    def submit(self, slot: int, index: int) -> None:
        actor = self._actors[slot]
        self._calls[actor.render.remote(index)] = (slot, actor, "render")

    def wait(self) -> list[Ready | Done | Died]:
        finished, _ = self._ray.wait(list(self._calls), num_returns=1)
        events: list[Ready | Done | Died] = []
        for ref in finished:
            slot, actor, kind = self._calls.pop(ref, (None, None, None))
            if slot is None or self._actors.get(slot) is not actor:
                continue  # a call of an actor already reported dead or stopped
            try:
                value = self._ray.get(ref)
            except (self._ray.exceptions.RayActorError, self._ray.exceptions.RayTaskError) as error:
                self._forget(slot)
                events.append(Died(slot, _short(error)))
                continue
            if kind == "ready":
                events.append(Ready(slot, value))
            else:
                index, failure, files, rss, candidates = value
                if files is not None:
                    write_encoded_scene(self._job.layout, index, files)
                events.append(Done(slot, Outcome(index, failure, candidates), rss))
        return events

    def stop(self, slot: int) -> None:
        actor = self._forget(slot)
        if actor is not None:
            self._finish([actor])

    def close(self) -> None:
        actors = [self._forget(slot) for slot in list(self._actors)]
        self._finish([actor for actor in actors if actor is not None])

    def _forget(self, slot: int):
        actor = self._actors.pop(slot, None)
        for ref, (_, owner, _) in list(self._calls.items()):
            if owner is actor:
                del self._calls[ref]
        return actor

    def _finish(self, actors: list) -> None:
        closing = [actor.close.remote() for actor in actors]
        if closing:
            self._ray.wait(closing, num_returns=len(closing), timeout=STOP_TIMEOUT)
        for actor in actors:
            self._ray.kill(actor)


def _short(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    cause = next((line for line in reversed(lines) if "Error" in line and not line.startswith("File ")), lines[-1] if lines else "")
    return f"{type(error).__name__}: {cause}"[:400]


class RenderActor:
    """Lives in a Ray worker process: one Blender session whose scenes go back to the driver as data."""

    def __init__(self, job: RenderJob) -> None:
        self._job = dataclasses.replace(job, device=self._visible_device(job.device))
        self._worker = BlenderWorker(self._job)

    @staticmethod
    def _visible_device(device: DeviceChoice) -> DeviceChoice:
        """On a GPU: every device of the backend this actor sees (Ray hid the others from it)."""
        if device.backend == "cpu":
            return device
        found = probe_gpu_devices_in_child()
        names = tuple(found.get(device.backend, ()))
        if not names:
            raise RuntimeError(
                f"no {device.backend.upper()} device visible to this actor on {os.uname().nodename} "
                f"(found: {describe_found(found)})"
            )
        return DeviceChoice(device.backend, names)

    def ready(self) -> int:
        return os.getpid()

    def render(self, index: int) -> tuple[int, str | None, SceneFiles | None, int, int | None]:
        """The outcome of ``index``, its files' bytes (None when it failed), this process's RSS and the
        candidates the scene took (the progress line's re-sample rate, as local workers report it)."""
        delivered: list[SceneFiles] = []
        outcome = render_with_retries(self._worker.session, self._job, index, delivered.append)
        files = delivered[-1] if outcome.error is None else None
        return outcome.index, outcome.error, files, resident_memory(), outcome.candidates

    def close(self) -> None:
        self._worker.close()
