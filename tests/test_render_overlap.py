"""The pipelined worker (render/farm/pipeline.py): frame k's reading, encoding and writing beside
frame k+1's render writes the bytes the serial worker writes. Real bpy renders at 64x48."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.blender

WIDTH, HEIGHT = 64, 48
SEED, INDICES = 5, range(6)


def _job(out, legible_only=False):
    from render import DeviceChoice, RenderJob, RenderSettings, SceneOptions

    settings = RenderSettings(width=WIDTH, height=HEIGHT, samples=2, threads=1)
    job = RenderJob(str(out), SEED, SceneOptions(width=WIDTH, height=HEIGHT), settings, DeviceChoice("cpu", ()), "5.0.1",
                    min_pixels=8, min_visible_fraction=0.6, legible_only=legible_only)
    job.layout.prepare()
    return job


def _half_of_frames_misread(graph, image, mask, reader):
    """A reader stand-in that rejects about half of the frames, by their pixels (the same frame, the same verdict)."""
    return ["misread"] if hashlib.sha256(image.tobytes()).digest()[0] % 2 else []


def _files(folder):
    return {path.relative_to(folder).as_posix(): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


def test_the_pipelined_worker_writes_the_serial_workers_bytes(tmp_path, monkeypatch):
    import render.farm.pipeline as pipeline
    import render.farm.worker as worker
    from render import open_session

    # Candidates rejected by the mask (visible fraction) and by the "reader" after the render, so
    # the pipeline's re-queueing of an index behind the next one's render is exercised.
    # (one reading for both: the pipeline's post-render step calls the worker's)
    monkeypatch.setattr(worker, "misread_objects", _half_of_frames_misread)
    serial, pipelined = _job(tmp_path / "serial", legible_only=True), _job(tmp_path / "pipelined", legible_only=True)
    with open_session(serial) as session:
        serial_outcomes = {index: worker.render_with_retries(session, serial, index) for index in INDICES}
    with open_session(pipelined) as session:
        pipelined_outcomes = {outcome.index: outcome for outcome in pipeline.pipelined_outcomes(session, pipelined, INDICES)}
    assert pipelined_outcomes == serial_outcomes
    assert [outcome.error for outcome in serial_outcomes.values()] == [None] * len(INDICES)
    assert max(outcome.candidates or 0 for outcome in serial_outcomes.values()) >= 2  # something was re-sampled
    written = _files(tmp_path / "serial")
    assert len(written) == 3 * len(INDICES)
    assert _files(tmp_path / "pipelined") == written


def test_a_failure_in_the_background_step_is_each_index_s_one_line_error(tmp_path, monkeypatch):
    import render.farm.pipeline as pipeline
    from render import open_session

    calls = []

    def full_disk(layout, index, files):
        calls.append(index)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pipeline, "write_encoded_scene", full_disk)
    job = _job(tmp_path / "out")
    with open_session(job) as session:
        outcomes = list(pipeline.pipelined_outcomes(session, job, [0, 1]))
    assert sorted(outcome.index for outcome in outcomes) == [0, 1]
    for outcome in outcomes:
        assert outcome.error is not None
        assert outcome.error.splitlines()[0] == f"scene {outcome.index}: OSError: [Errno 28] No space left on device"
    assert sorted(calls) == [0, 0, 0, 1, 1, 1]  # retried twice from the first candidate, as the serial worker does
    assert not any((tmp_path / "out").rglob("*.png"))


def test_pipelined_worker_processes_write_the_serial_workers_bytes(tmp_path):
    """Through the CLI's worker pool: two indices held per worker, recycled after three scenes (the
    third worker's indices follow two recycled ones), the same files as the serial worker in this process."""
    from dataclasses import replace

    import render.farm.worker as worker
    from render import open_session
    from render.farm.local_workers import worker_process_scheduler
    from render.farm.scheduler import WorkerPolicy

    serial = _job(tmp_path / "serial")
    with open_session(serial) as session:
        for index in INDICES:
            assert worker.render_with_retries(session, serial, index).error is None
    pipelined = replace(_job(tmp_path / "pipelined"), overlap=True)
    scheduler = worker_process_scheduler(pipelined, 1, WorkerPolicy(recycle_after=3))
    outcomes = list(scheduler.run(INDICES))
    assert sorted(outcome.index for outcome in outcomes) == list(INDICES)
    assert [outcome.error for outcome in outcomes] == [None] * len(INDICES)
    assert [record.scenes for record in scheduler.workers] == [4, 2]  # recycling waits for the held index
    assert _files(tmp_path / "pipelined") == _files(tmp_path / "serial")


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="a core free beside one 1-thread worker turns the overlap on")
def test_a_killed_pipelined_run_resumes_to_the_serial_runs_files(tmp_path):
    """``--workers 1 --threads 1`` on two cores pipelines (the run record says so); killed part-way and
    rerun, it holds the files the serial run (two pinned workers) makes."""
    import signal
    import subprocess
    import sys

    from helpers import run_stage_process

    from ruclevr.io import read_json

    args = ["--n", "6", "--width", "96", "--height", "64", "--samples", "2", "--seed", "5", "--device", "cpu", "--threads", "1"]
    serial, pipelined = tmp_path / "serial", tmp_path / "pipelined"
    assert run_stage_process("render", *args, "--workers", "2", "--out", str(serial)).returncode == 0
    process = subprocess.Popen([sys.executable, "-m", "render", *args, "--workers", "1", "--out", str(pipelined)],
                               cwd=Path(__file__).resolve().parents[1], stderr=subprocess.DEVNULL)
    while len(list((pipelined / "scenes").glob("*.json"))) < 2 and process.poll() is None:
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert not (pipelined / "scenes.json").exists(), "the run should have been killed part-way"
    resumed = run_stage_process("render", *args, "--workers", "1", "--out", str(pipelined))
    assert resumed.returncode == 0, resumed.stderr
    assert read_json(pipelined / "render_run.json")["overlap"] is True
    assert read_json(serial / "render_run.json")["overlap"] is False
    for folder in ("images", "masks", "scenes"):
        assert _files(pipelined / folder) == _files(serial / folder)
    assert not list(pipelined.rglob("*.tmp"))
