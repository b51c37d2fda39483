"""The local worker pool with real spawned processes, real SIGKILLs and real RSS, but workers that
need no Blender: each records every render (pid, the GPU it was shown) in a log file, so a scene
rendered twice or never shows. The same pool with Blender workers is tested end to end in
test_render_farm_cli.py."""

from __future__ import annotations

import json
import os
import signal
from dataclasses import dataclass
from pathlib import Path

import pytest

from render.devices import DeviceChoice, worker_gpus
from render.scheduler import Scheduler, WorkerPolicy
from render.worker import Outcome
from render.workers import ProcessWorkers, worker_cores


@dataclass(frozen=True)
class FakeJob:
    folder: str
    die_on: tuple[int, ...] = ()  # the worker kills itself (SIGKILL) on these, every time
    die_once_on: tuple[int, ...] = ()  # ... only the first time
    fail_to_start: bool = False
    hold_mb: int = 0  # memory each worker holds, to cross an RSS cap


class FakeWorker:
    def __init__(self, job: FakeJob) -> None:
        if job.fail_to_start:
            raise RuntimeError("no CUDA device visible to this worker")
        self.job = job
        self.ballast = bytearray(os.urandom(1)) * (job.hold_mb * 2**20)

    def render(self, index: int) -> Outcome:
        folder = Path(self.job.folder)
        marker = folder / f"died-once-{index}"
        if index in self.job.die_on or (index in self.job.die_once_on and not marker.exists()):
            marker.touch()
            os.kill(os.getpid(), signal.SIGKILL)
        with open(folder / "renders.jsonl", "a") as log:
            log.write(json.dumps({"index": index, "pid": os.getpid(), "gpu": os.environ.get("CUDA_VISIBLE_DEVICES"),
                                  "cores": sorted(os.sched_getaffinity(0))}) + "\n")
        return Outcome(index, None)

    def close(self) -> None:
        pass


def open_fake_worker(job: FakeJob) -> FakeWorker:
    return FakeWorker(job)


def run(job: FakeJob, indices, slots: int, policy: WorkerPolicy, environment_of=lambda slot: {}, cores_of=lambda slot: None):
    Path(job.folder).mkdir(parents=True, exist_ok=True)
    lines: list[str] = []
    scheduler = Scheduler(ProcessWorkers(open_fake_worker, lambda slot: job, environment_of, cores_of), slots, policy, lines.append)
    outcomes = list(scheduler.run(indices))
    log = Path(job.folder) / "renders.jsonl"
    renders = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return outcomes, renders, scheduler.workers, lines


def test_every_worker_starts_seeing_only_its_own_gpu(tmp_path):
    choice = DeviceChoice("cuda", ("A", "B"), None, (0, 1))
    before = os.environ.get("CUDA_VISIBLE_DEVICES")
    outcomes, renders, workers, _ = run(FakeJob(str(tmp_path)), range(8), 2, WorkerPolicy(),
                                        environment_of=lambda slot: worker_gpus(choice, slot, 2, environ={})[1])
    assert sorted(o.index for o in outcomes) == list(range(8)) and not any(o.error for o in outcomes)
    gpu_of_pid = {}
    for render in renders:
        gpu_of_pid.setdefault(render["pid"], set()).add(render["gpu"])
    assert sorted(min(gpus) for gpus in gpu_of_pid.values()) == ["0", "1"]
    assert all(len(gpus) == 1 for gpus in gpu_of_pid.values())
    assert os.environ.get("CUDA_VISIBLE_DEVICES") == before  # this process's own view is untouched


def test_a_killed_worker_is_replaced_and_its_scene_rendered_exactly_once(tmp_path):
    outcomes, renders, workers, lines = run(FakeJob(str(tmp_path), die_once_on=(3,)), range(7), 2, WorkerPolicy())
    assert sorted(o.index for o in outcomes) == list(range(7)) and not any(o.error for o in outcomes)
    assert sorted(r["index"] for r in renders) == list(range(7))
    assert [w.ended for w in workers].count("died: killed by SIGKILL (out of memory, or killed by hand)") == 1
    assert any("died rendering scene 3" in line and "retry 1 of 2" in line for line in lines)


def test_a_scene_that_keeps_killing_its_worker_is_reported_after_bounded_retries(tmp_path):
    outcomes, renders, workers, lines = run(FakeJob(str(tmp_path), die_on=(2,)), range(6), 2, WorkerPolicy(crash_retries=2))
    assert sorted(o.index for o in outcomes) == list(range(6))  # every index comes back once
    failed = {o.index: o.error for o in outcomes if o.error}
    assert list(failed) == [2] and "scene 2: its worker died 3 times, last: killed by SIGKILL" in failed[2]
    assert sorted(r["index"] for r in renders) == [0, 1, 3, 4, 5]
    assert sum("died rendering scene 2" in line for line in lines) == 2


def test_workers_are_recycled_after_n_scenes(tmp_path):
    outcomes, renders, workers, _ = run(FakeJob(str(tmp_path)), range(5), 1, WorkerPolicy(recycle_after=2))
    assert [o.index for o in outcomes] == list(range(5))
    assert [w.scenes for w in workers] == [2, 2, 1]
    assert len({r["pid"] for r in renders}) == 3


def test_workers_are_recycled_above_the_rss_cap(tmp_path):
    # Each fake worker holds 64 MB, so a 48 MB cap replaces it after every scene; a 1 GB cap never does.
    capped = run(FakeJob(str(tmp_path / "a"), hold_mb=64), range(3), 1, WorkerPolicy(max_rss_mb=48, recycle_after=0))
    roomy = run(FakeJob(str(tmp_path / "b"), hold_mb=64), range(3), 1, WorkerPolicy(max_rss_mb=1024, recycle_after=0))
    assert [w.scenes for w in capped[2]] == [1, 1, 1]
    assert all(rss > 64 * 2**20 for w in capped[2] for rss in w.rss_bytes)
    assert [w.scenes for w in roomy[2]] == [3]


def test_workers_that_cannot_start_end_the_run_reporting_every_scene(tmp_path):
    outcomes, renders, workers, _ = run(FakeJob(str(tmp_path), fail_to_start=True), range(5), 2, WorkerPolicy())
    assert sorted(o.index for o in outcomes) == list(range(5)) and not renders
    assert all("workers die before their Blender session opens" in o.error for o in outcomes)
    assert "could not start: RuntimeError: no CUDA device visible to this worker" in outcomes[0].error
    # Two workers, then a replacement for each: the third failed start in a row ends the run,
    # rather than starting a worker (and failing) once per scene.
    assert len(workers) == 4 and all(w.pid is None for w in workers)


def test_cpu_workers_get_cores_of_their_own_when_their_threads_fit():
    assert [worker_cores(slot, 2, 1, [0, 1]) for slot in range(2)] == [(0,), (1,)]
    assert [worker_cores(slot, 2, 2, [0, 1, 2, 3]) for slot in range(2)] == [(0, 1), (2, 3)]
    assert worker_cores(0, 1, 0, [0, 1]) is None  # one Blender on all cores: free to move
    assert worker_cores(1, 3, 1, [0, 1]) is None  # more threads than cores: pinning would only crowd


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two cores")
def test_each_worker_is_pinned_to_its_cores_before_it_starts_working(tmp_path):
    cores = sorted(os.sched_getaffinity(0))
    outcomes, renders, _, _ = run(FakeJob(str(tmp_path)), range(6), 2, WorkerPolicy(),
                                  cores_of=lambda slot: worker_cores(slot, 2, 1, cores))
    cores_of_pid = {}
    for render in renders:
        cores_of_pid.setdefault(render["pid"], set()).add(tuple(render["cores"]))
    assert all(len(seen) == 1 for seen in cores_of_pid.values())  # pinned from its first scene on
    assert sorted(seen.pop() for seen in cores_of_pid.values()) == [(cores[0],), (cores[1],)]
    assert sorted(os.sched_getaffinity(0)) == cores  # this process stays free
