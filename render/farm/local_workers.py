"""Local worker processes, each with its own Blender session (the ``--executor local`` backend).

Each worker is a spawned process (bpy is not fork-safe) that opens one Blender session and then
renders the scene indices it is sent, one at a time, over a pipe. What :mod:`render.farm.scheduler`
needs from it:

* its environment is set *before* it starts, so ``CUDA_VISIBLE_DEVICES`` (or HIP's, oneAPI's)
  leaves it exactly its GPUs: Blender opens every GPU it can see;
* on the CPU, when the workers' threads fit the cores this process may use, each worker is pinned
  to cores of its own (``sched_setaffinity``) before Blender loads: two unpinned 1-thread workers
  on two cores spent 3.2-3.5 CPU-s per 480x320 image where pinned ones spent 2.8 (L2 caches are
  per core), and the denoiser's thread pool sizes itself to the pinned cores;
* its death (SIGKILL, out of memory, a segfault in Blender) is seen at once, through the process
  sentinel, and the scene it was rendering is known;
* it dies with the parent (``PR_SET_PDEATHSIG`` on Linux), so a killed run leaves no orphan
  Blender writing into the output folder while the rerun resumes.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import multiprocessing
import os
import signal
import sys
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from multiprocessing.connection import Connection, wait
from typing import Any, Protocol

from render.engines.devices import worker_gpus
from render.farm.blender_process import check_gpus_visible, drop_blender_script_paths, resident_memory
from render.farm.outputs import OutputLayout
from render.farm.pipeline import Pipeline, serve_pipelined
from render.farm.scheduler import Died, Done, Ready, Scheduler, WorkerPolicy
from render.farm.worker import Outcome, RenderJob, open_session, render_with_retries
from ruclevr.io import remove_temporaries_of

#: Seconds a worker is given to close its session and exit when told to stop, before it is killed.
STOP_TIMEOUT = 30.0


class SceneWorker(Protocol):
    """What runs inside a worker process: renders one task at a time (a scene index, or what the
    backend's ``task_of`` made of it) and reports the outcome under the index."""

    def render(self, task: Any) -> Outcome: ...

    def close(self) -> None: ...


# --- the Blender worker ------------------------------------------------------------------------


class BlenderWorker:
    """One Blender session rendering a job's scenes to files (the worker of ``python -m render``)."""

    def __init__(self, job: RenderJob) -> None:
        drop_blender_script_paths()
        check_gpus_visible(job.device)
        self.job = job
        self.session = open_session(job)
        # With job.overlap the worker serves through the pipeline (serve_scenes), holding two indices.
        self.pipeline = Pipeline(self.session, job) if job.overlap else None

    def render(self, index: int) -> Outcome:
        return render_with_retries(self.session, self.job, index)

    def close(self) -> None:
        if self.pipeline is not None:
            self.pipeline.close()
        self.session.close()


def open_blender_worker(job: RenderJob) -> BlenderWorker:
    return BlenderWorker(job)


def run_in_worker_processes(job: RenderJob, indices: Iterable[int], workers: int, policy: WorkerPolicy,
                            log: Callable[[str], None] | None = None) -> Iterator[Outcome]:
    """Render ``indices`` with ``workers`` Blender processes, each on its own GPU(s) when rendering on GPUs."""
    return worker_process_scheduler(job, workers, policy, log).run(indices)


def worker_process_scheduler(job: RenderJob, workers: int, policy: WorkerPolicy,
                             log: Callable[[str], None] | None = None) -> Scheduler:
    """The scheduler behind :func:`run_in_worker_processes` (its ``workers`` records show each worker's RSS)."""
    return blender_process_scheduler(open_blender_worker, job, job.settings.threads, job.layout, workers, policy, log,
                                     depth=2 if job.overlap else 1)


def blender_process_scheduler(open_worker: Callable[[Any], SceneWorker], job: Any, threads: int, layout: OutputLayout,
                              workers: int, policy: WorkerPolicy, log: Callable[[str], None] | None = None,
                              task_of: Callable[[int], Any] | None = None, depth: int = 1) -> Scheduler:
    """A scheduler of ``workers`` Blender processes, each opened by ``open_worker(job)`` with the
    job's ``device`` narrowed to its own GPU(s) (or pinned to cores of its own on the CPU), writing
    scenes into ``layout``; ``task_of(index)`` is what a worker is sent for an index (default: the index);
    ``depth``: indices a worker holds at a time (2 for a pipelined worker)."""

    def job_of(slot: int) -> Any:
        return dataclasses.replace(job, device=worker_gpus(job.device, slot, workers)[0])

    def environment_of(slot: int) -> dict[str, str]:
        return worker_gpus(job.device, slot, workers)[1]

    def cores_of(slot: int) -> tuple[int, ...] | None:
        return worker_cores(slot, workers, threads) if job.device.backend == "cpu" else None

    backend = ProcessWorkers(open_worker, job_of, environment_of, cores_of, task_of)
    return Scheduler(backend, workers, policy, log, after_death=lambda index: remove_index_temporaries(layout, index), depth=depth)


def worker_cores(slot: int, workers: int, threads: int, available: Sequence[int] | None = None) -> tuple[int, ...] | None:
    """The cores CPU worker ``slot`` is pinned to: ``threads`` cores of its own, when every worker's
    threads fit the cores this process may use; else None (not pinned: they would only crowd)."""
    if available is None:
        if not hasattr(os, "sched_getaffinity"):
            return None
        available = sorted(os.sched_getaffinity(0))
    if threads < 1 or workers * threads > len(available):
        return None
    return tuple(available[slot * threads:(slot + 1) * threads])


def remove_index_temporaries(layout: OutputLayout, index: int) -> None:
    """Drop the half-written temporaries of scene ``index`` left by a worker that died writing them.

    Only that worker wrote this index, so no live worker's file is touched.
    """
    for path in (layout.image_path(index), layout.mask_path(index), layout.scene_path(index)):
        remove_temporaries_of(path)


# --- the process backend (generic: tests run it with workers that need no Blender) -------------


@dataclasses.dataclass
class _Process:
    process: Any  # multiprocessing.Process
    connection: Connection
    last_error: str | None = None


class ProcessWorkers:
    """A :class:`render.farm.scheduler.WorkerBackend` of spawned processes.

    ``open_worker(argument_of(slot))`` runs in the child and returns its :class:`SceneWorker`; it
    and its argument must be picklable (module-level function, dataclass). ``environment_of(slot)``
    is added to the child's environment before it starts; ``cores_of(slot)``, when not None, are
    the cores the child pins itself to before it opens its worker. For an index, the child is sent
    ``task_of(index)`` (picklable; default: the index itself).
    """

    def __init__(self, open_worker: Callable[[Any], SceneWorker], argument_of: Callable[[int], Any],
                 environment_of: Callable[[int], Mapping[str, str]] = lambda slot: {},
                 cores_of: Callable[[int], Sequence[int] | None] = lambda slot: None,
                 task_of: Callable[[int], Any] | None = None) -> None:
        self._open_worker = open_worker
        self._argument_of = argument_of
        self._environment_of = environment_of
        self._cores_of = cores_of
        self._task_of = task_of or (lambda index: index)
        self._context = multiprocessing.get_context("spawn")  # bpy is not fork-safe
        self._live: dict[int, _Process] = {}

    def start(self, slot: int) -> None:
        parent_end, child_end = self._context.Pipe()
        process = self._context.Process(
            target=serve_scenes, args=(child_end, self._open_worker, self._argument_of(slot), os.getpid(), self._cores_of(slot)),
            name=f"ruclevr-render-worker-{slot}", daemon=True,
        )
        with environment_set(self._environment_of(slot)):
            process.start()
        child_end.close()  # only the child holds it now, so its death reads as end-of-file here
        self._live[slot] = _Process(process, parent_end)

    def submit(self, slot: int, index: int) -> None:
        with contextlib.suppress(OSError):  # a dead worker: its sentinel reports the death
            self._live[slot].connection.send(self._task_of(index))

    def pid(self, slot: int) -> int | None:
        """The process id of the worker in ``slot`` (for tests that kill it)."""
        return self._live[slot].process.pid if slot in self._live else None

    def wait(self) -> list[Ready | Done | Died]:
        by_handle = {}
        for slot, worker in self._live.items():
            by_handle[worker.connection] = slot
            by_handle[worker.process.sentinel] = slot
        ready = wait(list(by_handle))
        events: list[Ready | Done | Died] = []
        for slot in sorted({by_handle[handle] for handle in ready}):  # type: ignore[index]  # wait returns handles it was given
            events += self._read(slot)
        return events

    def _read(self, slot: int) -> list[Ready | Done | Died]:
        worker = self._live[slot]
        events: list[Ready | Done | Died] = []
        ended = False
        try:
            while worker.connection.poll():
                message = worker.connection.recv()
                if message[0] == "ready":
                    events.append(Ready(slot, message[1]))
                elif message[0] == "done":
                    events.append(Done(slot, Outcome(message[1], message[2], message[4]), message[3]))
                else:  # "failed": the session could not be opened; the process exits next
                    worker.last_error = message[1]
        except (EOFError, OSError):
            ended = True
        if ended or not worker.process.is_alive():
            worker.process.join()
            worker.connection.close()
            del self._live[slot]
            events.append(Died(slot, describe_exit(worker.process.exitcode, worker.last_error)))
        return events

    def stop(self, slot: int) -> None:
        worker = self._live.pop(slot, None)
        if worker is not None:
            self._finish([worker])

    def close(self) -> None:
        workers = list(self._live.values())
        self._live.clear()
        self._finish(workers)

    @staticmethod
    def _finish(workers: list[_Process]) -> None:
        """Ask each worker to close its session and exit; kill the ones that do not within STOP_TIMEOUT."""
        for worker in workers:
            with contextlib.suppress(OSError):
                worker.connection.send(None)
        for worker in workers:
            worker.process.join(STOP_TIMEOUT)
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join()
            worker.connection.close()


def describe_exit(exitcode: int | None, last_error: str | None) -> str:
    if last_error:
        return f"it could not start: {last_error.strip().splitlines()[-1]}"
    if exitcode is not None and exitcode < 0:
        name = signal.Signals(-exitcode).name
        return f"killed by {name}" + (" (out of memory, or killed by hand)" if name == "SIGKILL" else "")
    return f"it exited with status {exitcode}"


@contextlib.contextmanager
def environment_set(variables: Mapping[str, str]):
    """``os.environ`` with ``variables`` set, for starting a child that inherits it; restored after."""
    saved = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


# --- inside the worker process -----------------------------------------------------------------


def serve_scenes(connection: Connection, open_worker: Callable[[Any], SceneWorker], argument: Any, parent_pid: int,
                 cores: Sequence[int] | None = None) -> None:
    """The worker process: open the worker, then render each task received until told to stop."""
    die_with_parent(parent_pid)
    if cores:
        os.sched_setaffinity(0, cores)  # before Blender loads, so its thread pools see only these
    # Ctrl-C reaches the whole process group; the parent handles it and stops its workers after
    # their current scene, instead of every worker dying with a traceback mid-write.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        worker = open_worker(argument)
    except BaseException:  # noqa: BLE001 - reported to the parent, which decides
        connection.send(("failed", traceback.format_exc(limit=4)))
        return
    connection.send(("ready", os.getpid()))
    try:
        pipeline = getattr(worker, "pipeline", None)
        if pipeline is not None:
            serve_pipelined(connection, pipeline, lambda outcome: send_outcome(connection, outcome))
            return
        while True:
            try:
                task = connection.recv()
            except EOFError:  # the parent is gone
                return
            if task is None:
                return
            send_outcome(connection, worker.render(task))
    finally:
        worker.close()


def send_outcome(connection: Connection, outcome: Outcome) -> None:
    connection.send(("done", outcome.index, outcome.error, resident_memory(), outcome.candidates))


def die_with_parent(parent_pid: int) -> None:
    """Ask Linux to SIGKILL this process when its parent dies (no orphan keeps rendering)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            pr_set_pdeathsig = 1
            ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGKILL)
    if os.getppid() != parent_pid:  # the parent died before the request took effect
        os._exit(1)
