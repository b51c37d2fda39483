"""The scheduler with workers holding two indices at a time (a pipelined worker, render/farm/pipeline.py):
a death sends back every index its worker held, each scene still comes back exactly once. Real
spawned processes and SIGKILLs, workers that need no Blender (those of test_render_farm_workers.py)."""

from __future__ import annotations

import json
from pathlib import Path

from test_render_farm_workers import FakeJob, open_fake_worker

from render.farm.local_workers import ProcessWorkers
from render.farm.scheduler import Scheduler, WorkerPolicy


def run_held_two(job: FakeJob, indices, slots: int, policy: WorkerPolicy):
    Path(job.folder).mkdir(parents=True, exist_ok=True)
    lines: list[str] = []
    scheduler = Scheduler(ProcessWorkers(open_fake_worker, lambda slot: job), slots, policy, lines.append, depth=2)
    outcomes = list(scheduler.run(indices))
    log = Path(job.folder) / "renders.jsonl"
    renders = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return outcomes, renders, scheduler.workers, lines


def test_a_killed_worker_s_held_indices_are_each_rendered_exactly_once(tmp_path):
    outcomes, renders, workers, lines = run_held_two(FakeJob(str(tmp_path), die_once_on=(3,)), range(9), 2, WorkerPolicy())
    assert sorted(o.index for o in outcomes) == list(range(9)) and not any(o.error for o in outcomes)
    assert sorted(r["index"] for r in renders) == list(range(9))
    assert [w.ended for w in workers].count("died: killed by SIGKILL (out of memory, or killed by hand)") == 1
    assert any("died rendering scene 3" in line and "retry 1 of 2" in line for line in lines)


def test_a_scene_that_keeps_killing_its_worker_is_reported_and_the_others_finish(tmp_path):
    outcomes, renders, _, lines = run_held_two(FakeJob(str(tmp_path), die_on=(2,)), range(6), 1, WorkerPolicy(crash_retries=2))
    assert sorted(o.index for o in outcomes) == list(range(6))
    failed = {o.index: o.error for o in outcomes if o.error}
    assert list(failed) == [2] and "scene 2: its worker died 3 times" in failed[2]
    # Index 3, held beside 2 at the first death, was sent back and then held alone: not blamed again.
    assert sorted(r["index"] for r in renders) == [0, 1, 3, 4, 5]
    assert sum("died rendering scene 3" in line for line in lines) <= 1


def test_workers_holding_two_are_recycled_once_they_hold_nothing(tmp_path):
    outcomes, renders, workers, _ = run_held_two(FakeJob(str(tmp_path)), range(5), 1, WorkerPolicy(recycle_after=2))
    assert sorted(o.index for o in outcomes) == list(range(5))
    assert [w.scenes for w in workers] == [3, 2]  # the index sent before recycling was asked is finished first
    assert len({r["pid"] for r in renders}) == 2


def test_workers_that_cannot_start_end_the_run_reporting_every_scene(tmp_path):
    outcomes, renders, workers, _ = run_held_two(FakeJob(str(tmp_path), fail_to_start=True), range(5), 2, WorkerPolicy())
    assert sorted(o.index for o in outcomes) == list(range(5)) and not renders
    assert all("workers die before their Blender session opens" in o.error for o in outcomes)
    assert len(workers) == 4 and all(w.pid is None for w in workers)


def test_the_overlap_is_on_where_a_core_is_free_beside_each_render(monkeypatch):
    import render.farm.plan as plan
    from render.engines.devices import DeviceChoice
    from render.farm.plan import FarmPlan, overlap_pays

    monkeypatch.setattr(plan, "usable_cores", lambda: 2)
    cpu, gpu = DeviceChoice("cpu", ()), DeviceChoice("optix", ("NVIDIA H200",))

    def pays(device, workers, threads, executor="local"):
        return overlap_pays(FarmPlan(executor, device, workers, threads, WorkerPolicy()))

    assert pays(gpu, 1, 0) and pays(gpu, 4, 0)
    assert pays(cpu, 1, 1)  # one 1-thread worker on two cores
    assert not pays(cpu, 2, 1)  # the CPU default: one pinned worker per core
    assert not pays(cpu, 1, 0)  # one worker on every core
    assert not pays(gpu, 1, 0, executor="ray")  # Ray actors render serially
