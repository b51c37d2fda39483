"""The build with the real stages (tiny images): damage repaired by a rerun to the same bytes, no
machine path in published files, and SIGTERM leaving no process behind."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

pytestmark = pytest.mark.blender

ROOT = Path(__file__).resolve().parents[1]
TINY = ["--width", "64", "--height", "48", "--samples", "1", "--seed", "5", "--render-args", "--device cpu"]


def build_command(out: Path, n: int, *extra: str) -> list[str]:
    return [sys.executable, "-m", "dataset", "build", "--n", str(n), "--out", str(out), "--shots", "1", *TINY, *extra]


def files_of(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_deleted_image_and_sample_are_rebuilt_to_identical_bytes_and_no_machine_path_is_published(tmp_path):
    root = (tmp_path / "DATA").resolve()  # an absolute --out
    first = subprocess.run(build_command(root, 3), cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr[-3000:]
    untouched = files_of(root)
    machine_paths = (str(root).encode(), str(tmp_path.resolve()).encode(), str(Path.home()).encode() + b"/")
    published = [name for name in untouched if name.startswith(("mera/", "hf/"))]
    assert published
    for name in published:
        assert not any(path in untouched[name] for path in machine_paths), name

    (root / "render" / "images" / "ruclevr_000001.png").unlink()
    sample = sorted((root / "mera" / "samples").glob("*.png"))[0]
    sample.unlink()
    again = subprocess.run(build_command(root, 3), cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    statuses = dict(line.split()[:2] for line in again.stdout.splitlines()[2:8])
    assert statuses == {"render": "ran", "questions": "skipped", "translate": "skipped", "filter": "skipped",
                        "export": "ran", "hf": "skipped"}
    assert files_of(root) == untouched


def test_sigterm_during_rendering_leaves_no_process_of_the_build(tmp_path):
    out = tmp_path / "DATA"
    build = subprocess.Popen(build_command(out, 40, "--render-args", "--device cpu --workers 2"), cwd=ROOT,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    family: list[psutil.Process] = []
    while time.monotonic() < deadline and build.poll() is None:
        family = psutil.Process(build.pid).children(recursive=True)
        # The render stage and at least one Blender worker under it are running, and a scene is done.
        if len(family) >= 2 and any((out / "render" / "scenes").glob("*.json")):
            break
        time.sleep(0.2)
    assert build.poll() is None and len(family) >= 2, "the build never reached rendering"
    family = psutil.Process(build.pid).children(recursive=True)
    build.send_signal(signal.SIGTERM)
    _, stderr = build.communicate(timeout=120)
    assert build.returncode == 128 + signal.SIGTERM, stderr[-2000:]
    assert "terminated; finished work is kept" in stderr and "Traceback" not in stderr
    time.sleep(0.5)
    alive = []
    for process in family:
        try:
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                alive.append((process.pid, process.cmdline()))
        except psutil.NoSuchProcess:
            pass
    assert alive == []


def test_two_builds_started_together_into_one_folder_one_finishes_the_other_stops_in_one_line(tmp_path):
    """The folder lock (issue 24): of two builds started at the same moment into one --out, one
    finishes and the other stops at once with one line, and the folder holds exactly the bytes of
    a build nobody raced."""
    root = (tmp_path / "DATA").resolve()
    alone = subprocess.run(build_command(root, 2), cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert alone.returncode == 0, alone.stderr[-3000:]
    untouched = files_of(root)
    shutil.rmtree(root)
    racers = [subprocess.Popen(build_command(root, 2), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True) for _ in range(2)]
    results = [(racer.wait(timeout=600), *racer.communicate()) for racer in racers]
    statuses = sorted(status for status, _, _ in results)
    assert statuses == [0, 2], [err[-2000:] for _, _, err in results]
    loser_err = next(err for status, _, err in results if status == 2)
    lines = [line for line in loser_err.splitlines() if line.strip()]
    assert len(lines) == 1 and "is being written by another run" in lines[0] and "Traceback" not in loser_err, loser_err
    assert files_of(root) == untouched
