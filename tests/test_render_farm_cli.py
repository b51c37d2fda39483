"""The render farm end to end with real Blender (tiny images, 1 sample): shards of a job array and
their merge, the SLURM script of docs/, Ray actors, a worker killed mid-run, and verify."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import psutil
import pytest
from helpers import run_stage_process

from ruclevr.io import read_json, remove_scratch_of_dead_processes

pytestmark = pytest.mark.blender

ROOT = Path(__file__).resolve().parents[1]
N = 7  # three shards of 7 scenes: blocks of 2, 2 and 3
TINY = ["--width", "64", "--height", "48", "--samples", "1", "--device", "cpu", "--seed", "11"]


run = partial(run_stage_process, "render")


def files_of(folder: Path) -> dict[str, bytes]:
    """Every image, mask and scene file, and the merged files, by path relative to ``folder``."""
    paths = [p for p in folder.rglob("*") if p.is_file()]
    return {str(p.relative_to(folder)): p.read_bytes() for p in paths}


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    """One uninterrupted local run over all indices, with two worker processes."""
    out = tmp_path_factory.mktemp("farm") / "single"
    result = run("--n", str(N), *TINY, "--workers", "2", "--out", str(out))
    assert result.returncode == 0, result.stderr
    return out


@pytest.fixture(scope="module")
def shards(tmp_path_factory) -> dict[str, Path]:
    """Shards 0 and 1 into one shared folder (by --shard 0/3 and by the SLURM script of docs/),
    shard 2 into a folder of its own (a Kubernetes indexed job's pod)."""
    root = tmp_path_factory.mktemp("shards")
    shared, pod = root / "shared", root / "pod-2"
    first = run("--n", str(N), *TINY, "--shard", "0/3", "--out", str(shared))
    assert first.returncode == 0, first.stderr
    slurm_env = {"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_MIN": "0", "N": str(N),
                 "OUT": str(shared), "SEED": "11", "DEVICE": "cpu", "RENDER_ARGS": "--width 64 --height 48 --samples 1",
                 "PYTHON": sys.executable}
    second = subprocess.run(["bash", str(ROOT / "docs" / "slurm_array.sh")], cwd=ROOT, capture_output=True, text=True,
                            timeout=300, env={**os.environ, **slurm_env})
    assert second.returncode == 0, second.stderr
    third = run("--n", str(N), *TINY, "--shard", "kubernetes/3", "--out", str(pod), env={"JOB_COMPLETION_INDEX": "2"})
    assert third.returncode == 0, third.stderr
    return {"shared": shared, "pod": pod}


def test_each_shard_writes_only_its_own_files(shards):
    names = {path.name for path in shards["shared"].iterdir() if path.is_file()}
    assert names == {"scenes.shard-0-of-3.json", "render_run.shard-0-of-3.json", "scenes.shard-1-of-3.json", "render_run.shard-1-of-3.json"}
    assert sorted(p.name for p in (shards["shared"] / "images").iterdir()) == [f"ruclevr_{i:06d}.png" for i in range(4)]
    assert sorted(p.name for p in (shards["pod"] / "scenes").iterdir()) == [f"ruclevr_{i:06d}.json" for i in range(4, 7)]
    record = read_json(shards["pod"] / "scenes.shard-2-of-3.json")
    assert record["info"]["shard"] == {"index": 2, "count": 3, "start_index": 0, "n": N, "split": "contiguous", "first": 4, "stop": 7}
    assert [scene["image_index"] for scene in record["scenes"]] == [4, 5, 6]


def test_merged_shards_are_the_files_of_a_single_run(shards, reference, tmp_path):
    shared = tmp_path / "shared"
    shutil.copytree(shards["shared"], shared)
    result = run("merge", str(shared), str(shards["pod"]))
    assert result.returncode == 0, result.stderr
    merged, single = files_of(shared), files_of(reference)
    merged = {name: data for name, data in merged.items() if ".shard-" not in name}
    assert sorted(merged) == sorted(single)
    for name in single:
        assert merged[name] == single[name], name  # scenes.json and render_run.json included
    assert run("verify", str(shared), "--start-index", "0", "--n", str(N)).returncode == 0
    again = run("merge", str(shared), str(shards["pod"]))  # merging twice changes nothing
    assert again.returncode == 0 and (shared / "scenes.json").read_bytes() == (reference / "scenes.json").read_bytes()


def test_merge_refuses_missing_or_incomplete_shards(shards, tmp_path):
    shared = tmp_path / "shared"
    shutil.copytree(shards["shared"], shared)
    missing = run("merge", str(shared))
    assert missing.returncode == 2 and "1 of 3 shards missing (no scenes.shard-2-of-3.json)" in missing.stderr
    pod = tmp_path / "pod"
    shutil.copytree(shards["pod"], pod)
    record = read_json(pod / "scenes.shard-2-of-3.json")
    record["scenes"] = [scene for scene in record["scenes"] if scene["image_index"] != 5]  # as a shard that failed scene 5
    (pod / "scenes.shard-2-of-3.json").write_text(json.dumps(record))
    incomplete = run("merge", str(shared), str(pod))
    assert incomplete.returncode == 2
    assert incomplete.stderr.strip().splitlines() == ["python -m render merge: error: cannot merge: shard-2-of-3 lacks 1 scene(s) (5): rerun it to resume"]
    assert not (shared / "scenes.json").exists() and not (shared / "images" / "ruclevr_000004.png").exists()


def test_ray_actors_render_the_files_of_a_local_run_even_when_one_dies(reference, tmp_path):
    """A private local Ray cluster (one CPU per core: 2 here) with two long-lived Blender actors;
    one actor is killed mid-run, its scene goes to a fresh actor, and the files are a local run's."""
    out = tmp_path / "ray"
    process = subprocess.Popen([sys.executable, "-m", "render", "--n", str(N), *TINY, "--executor", "ray", "--workers", "2",
                                "--out", str(out)], cwd=ROOT, stderr=subprocess.PIPE, text=True)
    wait_for_first_scene(out, process)
    rendering = wait_for_process(process, lambda cmdline: cmdline.startswith("ray::RenderActor.render"))
    rendering.send_signal(signal.SIGKILL)  # an actor in the middle of a render call
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == 0, stderr
    assert "Ray: 2 Blender actor(s) on CPU" in stderr
    assert "died rendering scene" in stderr and "ActorDiedError" in stderr
    assert files_of(out) == files_of(reference)
    assert no_scratch_left_by_dead_workers("ruclevr-ray-", "ruclevr-blender-")  # the fresh actor cleared the dead one's


def descendants(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def wait_for_process(process: subprocess.Popen, wanted, timeout: float = 120) -> psutil.Process:
    """The first descendant of ``process`` whose command line (process title) ``wanted`` accepts."""
    deadline = time.monotonic() + timeout
    while True:
        for child in descendants(process.pid):
            try:
                if wanted(" ".join(child.cmdline())):
                    return child
            except psutil.Error:
                pass
        assert time.monotonic() < deadline and process.poll() is None, "no such process while the run lasted"
        time.sleep(0.01)


def wait_for_first_scene(out: Path, process: subprocess.Popen, timeout: float = 120) -> None:
    """Until a scene file exists: then every worker has opened Blender and is rendering."""
    deadline = time.monotonic() + timeout
    while not list(out.glob("scenes/*.json")):
        assert time.monotonic() < deadline and process.poll() is None, "the run made no progress"
        time.sleep(0.02)


def test_a_worker_killed_mid_run_still_ends_with_every_scene_once(reference, tmp_path):
    out = tmp_path / "killed"
    process = subprocess.Popen([sys.executable, "-m", "render", "--n", str(N), *TINY, "--workers", "2", "--out", str(out)],
                               cwd=ROOT, stderr=subprocess.PIPE, text=True)
    wait_for_first_scene(out, process)
    workers = [child for child in descendants(process.pid) if "spawn_main" in " ".join(child.cmdline())]
    assert len(workers) == 2, "two worker processes"
    # The busier one has surely opened Blender (the other may still be starting under load); a
    # worker that has opened Blender always holds a scene, so it dies mid-task.
    max(workers, key=lambda worker: sum(worker.cpu_times()[:2])).send_signal(signal.SIGKILL)
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == 0, stderr
    assert "died rendering scene" in stderr and "retrying the scene on a fresh worker" in stderr
    assert files_of(out) == files_of(reference)  # every scene once, nothing half-written left behind
    assert len(read_json(out / "scenes.json")["scenes"]) == N
    assert no_scratch_left_by_dead_workers("ruclevr-blender-")  # the fresh worker cleared the dead one's


def no_scratch_left_by_dead_workers(*prefixes: str) -> bool:
    return all(remove_scratch_of_dead_processes(prefix) == 0 for prefix in prefixes)


def test_verify_names_a_deleted_image_a_truncated_png_and_a_duplicated_index(reference, tmp_path):
    clean = run("verify", str(reference))
    assert clean.returncode == 0 and f"{N} scenes verified, no problems" in clean.stderr
    broken = tmp_path / "broken"
    shutil.copytree(reference, broken)
    (broken / "images" / "ruclevr_000002.png").unlink()
    png = broken / "images" / "ruclevr_000004.png"
    png.write_bytes(png.read_bytes()[: png.stat().st_size // 2])
    merged = read_json(broken / "scenes.json")
    merged["scenes"].append(merged["scenes"][1])
    (broken / "scenes.json").write_text(json.dumps(merged))
    shutil.copy(broken / "masks" / "ruclevr_000005.png", broken / "masks" / "ruclevr_000006.png")  # another scene's mask
    result = run("verify", str(broken))
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert "index 1: appears 2 times in scenes.json" in lines
    assert "index 2: images/ruclevr_000002.png is missing" in lines
    assert any(line.startswith("index 4: images/ruclevr_000004.png does not decode") for line in lines)
    assert any(line.startswith("index 6: ") and "do not match masks/ruclevr_000006.png" in line or
               line.startswith("index 6: masks/ruclevr_000006.png holds mask id") for line in lines)
    assert not any(line.startswith(("index 0:", "index 3:")) for line in lines)
    assert result.stderr.strip().endswith(f"problem(s) in {broken} ({N} indices checked)")


def test_verify_catches_an_unknown_colour_a_swapped_image_and_a_png_without_iend(reference, tmp_path):
    broken = tmp_path / "damaged"
    shutil.copytree(reference, broken)
    # An unknown colour, edited consistently into the scene file and scenes.json.
    merged = read_json(broken / "scenes.json")
    merged["scenes"][0]["objects"][0]["color"] = "chartreuse"
    (broken / "scenes.json").write_text(json.dumps(merged))
    (broken / "scenes" / "ruclevr_000000.json").write_text(json.dumps(merged["scenes"][0]))
    # Images 2 and 3 swapped: each is a valid PNG of the right size.
    images = broken / "images"
    two, three = (images / "ruclevr_000002.png").read_bytes(), (images / "ruclevr_000003.png").read_bytes()
    (images / "ruclevr_000002.png").write_bytes(three)
    (images / "ruclevr_000003.png").write_bytes(two)
    # Image 5 without its final IEND chunk (12 bytes): Pillow alone still decodes it.
    five = images / "ruclevr_000005.png"
    five.write_bytes(five.read_bytes()[:-12])
    result = run("verify", str(broken))
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert any(line.startswith("index 0: object 0's color 'chartreuse' is not in the vocabulary") for line in lines)
    for index in (2, 3):
        assert f"index {index}: images/ruclevr_00000{index}.png is not the image its scene recorded " \
               "(SHA-256 differs: swapped or edited)" in lines
    assert "index 5: images/ruclevr_000005.png does not decode (ends without an IEND chunk (cut off))" in lines
    assert not any(line.startswith(("index 1:", "index 4:", "index 6:")) for line in lines)


def test_recycled_blender_workers_render_the_same_files(reference, tmp_path):
    out = tmp_path / "recycled"
    result = run("--n", str(N), *TINY, "--workers", "1", "--recycle-after", "3", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("recycled after scene") == 2  # scenes 0-2, 3-5, 6: three Blender processes
    assert files_of(out) == files_of(reference)
