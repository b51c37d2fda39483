"""``python -m render`` end to end: a small run, resume after a kill, and bad input."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import pytest
from helpers import run_stage_process

from ruclevr.io import atomic_write_json, read_json

pytestmark = pytest.mark.blender

ROOT = Path(__file__).resolve().parents[1]
SMALL = ["--width", "160", "--height", "120", "--samples", "4"]
CLEVR_SCENE_KEYS = {"split", "image_index", "image_filename", "objects", "directions", "relationships"}


run_render = partial(run_stage_process, "render")


def test_small_run_makes_images_masks_scene_files_and_scenes_json(tmp_path):
    out = tmp_path / "OUT"
    result = run_render("--n", "4", *SMALL, "--out", str(out))
    assert result.returncode == 0, result.stderr
    for folder, suffix in (("images", ".png"), ("masks", ".png"), ("scenes", ".json")):
        assert sorted(p.name for p in (out / folder).iterdir()) == [f"ruclevr_{i:06d}{suffix}" for i in range(4)]
    merged = read_json(out / "scenes.json")
    assert [scene["image_index"] for scene in merged["scenes"]] == [0, 1, 2, 3]
    for scene in merged["scenes"]:
        assert CLEVR_SCENE_KEYS <= scene.keys()
        assert scene == read_json(out / "scenes" / f"ruclevr_{scene['image_index']:06d}.json")
    info = merged["info"]
    assert info["seed"] == 0 and info["render"]["samples"] == 4 and info["version"] and info["blender_version"]
    # No GPU here: auto falls back to the CPU and says what it found.
    if "no GPU" in result.stderr:
        assert "warning: --device auto: found no GPU" in result.stderr
    assert not list(out.rglob("*.tmp"))

    # A rerun of the same command has nothing to do and leaves every file as it was.
    before = {p: p.stat().st_mtime_ns for p in out.rglob("ruclevr_*")}
    again = run_render("--n", "4", *SMALL, "--out", str(out))
    assert again.returncode == 0, again.stderr
    assert {p: p.stat().st_mtime_ns for p in out.rglob("ruclevr_*")} == before


def _wait_for_scene_files(folder: Path, at_least: int, process: subprocess.Popen, timeout: float = 240) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        count = len(list(folder.glob("ruclevr_*.json"))) if folder.is_dir() else 0
        if count >= at_least or process.poll() is not None:
            return count
        time.sleep(0.05)
    raise AssertionError("the run made no progress")


def test_a_killed_run_resumes_to_what_an_uninterrupted_run_makes(tmp_path):
    n = "8"
    args = ["--n", n, "--width", "96", "--height", "64", "--samples", "2", "--workers", "1", "--seed", "5", "--device", "cpu"]
    reference = tmp_path / "reference"
    assert run_render(*args, "--out", str(reference)).returncode == 0

    out = tmp_path / "killed"
    process = subprocess.Popen([sys.executable, "-m", "render", *args, "--out", str(out)], cwd=ROOT, stderr=subprocess.DEVNULL)
    done = _wait_for_scene_files(out / "scenes", 2, process)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert 0 < done < int(n), "the run should have been killed part-way"
    assert not (out / "scenes.json").exists()

    resumed = run_render(*args, "--out", str(out))
    assert resumed.returncode == 0, resumed.stderr
    assert (out / "scenes.json").read_bytes() == (reference / "scenes.json").read_bytes()
    for folder in ("images", "masks", "scenes"):
        for path in sorted((reference / folder).iterdir()):
            assert (out / folder / path.name).read_bytes() == path.read_bytes(), path.name
    assert not list(out.rglob("*.tmp"))


def test_a_changed_setting_is_refused_unless_overwrite(tmp_path):
    out = tmp_path / "OUT"
    tiny = ["--n", "1", "--width", "64", "--height", "48", "--device", "cpu", "--out", str(out)]
    assert run_render(*tiny, "--samples", "1").returncode == 0
    refused = run_render(*tiny, "--samples", "2")
    assert refused.returncode == 2
    assert "samples: 1 -> 2" in refused.stderr and "--overwrite" in refused.stderr
    overwritten = run_render(*tiny, "--samples", "2", "--overwrite")
    assert overwritten.returncode == 0, overwritten.stderr
    assert read_json(out / "scenes.json")["info"]["render"]["samples"] == 2


def _spell_engine_as_old_records(folder: Path) -> None:
    """Rewrite a render folder's records as runs before the engine registry wrote them: engine "CYCLES"."""
    for path in [folder / "render_run.json", folder / "scenes.json", *sorted((folder / "scenes").glob("*.json"))]:
        record = read_json(path)
        for render in [record.get("render"), record.get("info", {}).get("render"),
                       *(scene["render"] for scene in record.get("scenes", []))]:
            if render is not None:
                assert render["engine"] == "cycles"
                render["engine"] = "CYCLES"
        atomic_write_json(path, record)


def test_a_folder_whose_records_spell_the_engine_cycles_resumes_and_verifies(tmp_path):
    """Records made before engines were registered by name say "CYCLES": the same engine, so a rerun
    resumes (no settings change reported) and verify accepts the folder that mixes both spellings."""
    out = tmp_path / "OUT"
    tiny = ["--width", "64", "--height", "48", "--samples", "1", "--device", "cpu", "--workers", "1", "--out", str(out)]
    assert run_render("--n", "1", *tiny).returncode == 0
    _spell_engine_as_old_records(out)
    first = (out / "scenes" / "ruclevr_000000.json").read_bytes()

    resumed = run_render("--n", "2", *tiny)
    assert resumed.returncode == 0, resumed.stderr
    assert "other settings" not in resumed.stderr
    assert (out / "scenes" / "ruclevr_000000.json").read_bytes() == first  # kept, not rendered again
    assert [scene["image_index"] for scene in read_json(out / "scenes.json")["scenes"]] == [0, 1]
    verified = run_render("verify", str(out))  # scene 0 says "CYCLES", the others "cycles"
    assert verified.returncode == 0, verified.stdout + verified.stderr


def _gpu_found() -> bool:
    code = "from render.farm.blender_process import probe_gpu_devices_isolated as p; print(any(p().values()))"
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True).stdout.strip() == "True"


@pytest.mark.parametrize(
    "args, message",
    [
        (["--n", "0"], "--n: must be a positive integer, got 0"),
        (["--n", "-3"], "--n: must be a positive integer, got -3"),
        (["--n", "2", "--min-objects", "5", "--max-objects", "3"], "--min-objects 5 is greater than --max-objects 3"),
        (["--n", "2", "--width", "0"], "--width: must be a positive integer, got 0"),
        (["--n", "2", "--device", "vulkan"], "--device: invalid choice: 'vulkan'"),
        (["--n", "2", "--min-objects", "40", "--max-objects", "40"], "could not place 40 objects"),
        (["--n", "2", "--no-denoise"], "--no-denoise below 128 samples with the legibility check on"),
        (["--n", "2", "--no-denoise", "--width", "64", "--height", "48", "--legible-only"], "add --no-legible-only, --samples 128 or more"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_nothing_written(tmp_path, args, message):
    out = tmp_path / "OUT"
    result = run_render(*args, "--out", str(out))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in result.stderr
    assert not out.exists()


def test_unwritable_out_is_one_line_exit_2(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    result = run_render("--n", "2", "--device", "cpu", "--out", str(blocker / "OUT"))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot write to --out" in lines[0]
    assert blocker.read_text() == "not a folder"


def test_explicit_gpu_without_one_fails_naming_what_was_found(tmp_path):
    if _gpu_found():
        pytest.skip("this machine has a GPU, so --device cuda may well succeed")
    out = tmp_path / "OUT"
    result = run_render("--n", "2", "--device", "cuda", "--out", str(out))
    assert result.returncode == 2
    assert result.stderr.strip() == "python -m render: error: --device cuda: no CUDA device found (found: no GPU (CPU only))"
    assert not out.exists()


def test_help_explains_every_flag():
    result = run_render("--help")
    assert result.returncode == 0
    for flag in ("--n", "--out", "--seed", "--start-index", "--width", "--height", "--samples", "--min-objects",
                 "--max-objects", "--min-pixels", "--device", "--workers", "--overwrite"):
        assert flag in result.stdout
