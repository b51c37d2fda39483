"""Device choice, --gpu-ids and one GPU per worker, without a GPU: Blender's probe is the only part
that needs one, so the rules are tested on what a probe returns, and the CLI on this GPU-less machine."""

from __future__ import annotations

from functools import partial

import pytest
from helpers import run_stage_process

from render.devices import DeviceChoice, choose_device, parse_gpu_ids, select_gpus, visibility_environment, worker_gpus
from ruclevr.cli import UsageError
from ruclevr.io import read_json

TWO_H200 = {"optix": ["NVIDIA H200", "NVIDIA H200"], "cuda": ["NVIDIA H200", "NVIDIA H200"], "hip": [], "oneapi": []}
NOTHING = {"optix": [], "cuda": [], "hip": [], "oneapi": []}


run_render = partial(run_stage_process, "render")


def test_auto_prefers_optix_and_gpu_ids_pick_devices_by_position():
    choice = select_gpus(choose_device("auto", TWO_H200), (1,), TWO_H200)
    assert choice == DeviceChoice("optix", ("NVIDIA H200",), None, (1,))
    everything = select_gpus(choose_device("cuda", TWO_H200), None, TWO_H200)
    assert everything.backend == "cuda" and everything.gpu_ids == (0, 1)


@pytest.mark.parametrize(
    "requested, gpu_ids, found, message",
    [
        ("cuda", None, NOTHING, "--device cuda: no CUDA device found (found: no GPU (CPU only))"),
        ("hip", None, TWO_H200, "--device hip: no HIP device found (found: OPTIX: NVIDIA H200, NVIDIA H200; CUDA: NVIDIA H200, NVIDIA H200)"),
        ("cuda", (2,), TWO_H200, "--gpu-ids 2: CUDA has no device 2 (it has 0 = NVIDIA H200, 1 = NVIDIA H200)"),
        ("auto", (0,), NOTHING, "--gpu-ids 0: no GPU is used (rendering on the CPU; found: no GPU (CPU only))"),
        ("cpu", (0,), TWO_H200, "--gpu-ids 0: no GPU is used"),
    ],
)
def test_impossible_device_choices_name_what_was_found(requested, gpu_ids, found, message):
    with pytest.raises(UsageError) as error:
        select_gpus(choose_device(requested, found), gpu_ids, found)
    assert message in str(error.value)


def test_gpu_ids_are_parsed_strictly():
    assert parse_gpu_ids("0, 2") == (0, 2)
    for bad in ("0,0", "a", "-1", "", "1,,2"):
        with pytest.raises(UsageError):
            parse_gpu_ids(bad)


def test_each_worker_sees_only_its_gpu():
    choice = DeviceChoice("cuda", ("A", "B", "C"), None, (0, 1, 2))
    seen = [worker_gpus(choice, slot, 3, environ={}) for slot in range(3)]
    assert [env for _, env in seen] == [{"CUDA_VISIBLE_DEVICES": "0"}, {"CUDA_VISIBLE_DEVICES": "1"}, {"CUDA_VISIBLE_DEVICES": "2"}]
    assert [device.devices for device, _ in seen] == [("A",), ("B",), ("C",)]
    # More workers than GPUs: round robin; fewer: the GPUs are dealt out.
    assert worker_gpus(choice, 4, 6, environ={})[1] == {"CUDA_VISIBLE_DEVICES": "1"}
    device, env = worker_gpus(choice, 0, 2, environ={})
    assert env == {"CUDA_VISIBLE_DEVICES": "0,2"} and device.devices == ("A", "C")
    # On the CPU nothing is hidden or changed.
    cpu = DeviceChoice("cpu", ())
    assert worker_gpus(cpu, 1, 2, environ={}) == (cpu, {})


def test_gpu_ids_count_the_gpus_this_process_sees():
    # Inside a SLURM allocation of physical GPUs 4 and 6, id 1 is physical 6.
    assert visibility_environment("optix", (1,), {"CUDA_VISIBLE_DEVICES": "4,6"}) == {"CUDA_VISIBLE_DEVICES": "6"}
    assert visibility_environment("hip", (0,), {}) == {"HIP_VISIBLE_DEVICES": "0"}
    assert visibility_environment("oneapi", (0, 1), {}) == {"ONEAPI_DEVICE_SELECTOR": "level_zero:0,1"}
    with pytest.raises(UsageError, match="not among CUDA_VISIBLE_DEVICES=4"):
        visibility_environment("cuda", (1,), {"CUDA_VISIBLE_DEVICES": "4"})


@pytest.mark.blender
def test_explicit_cuda_without_a_gpu_exits_2_with_one_line(tmp_path):
    from render.executors import probe_gpu_devices_isolated

    if any(probe_gpu_devices_isolated().values()):
        pytest.skip("this machine has a GPU")
    out = tmp_path / "OUT"
    for args, line in (
        (["--device", "cuda"], "python -m render: error: --device cuda: no CUDA device found (found: no GPU (CPU only))"),
        (["--device", "optix", "--gpu-ids", "0"], "python -m render: error: --device optix: no OPTIX device found (found: no GPU (CPU only))"),
        (["--device", "cpu", "--gpu-ids", "1"], "python -m render: error: --gpu-ids 1: no GPU is used (rendering on the CPU; found: no GPU (CPU only))"),
    ):
        result = run_render("--n", "2", *args, "--out", str(out))
        assert result.returncode == 2 and result.stderr.strip() == line
        assert not out.exists()


@pytest.mark.blender
def test_auto_without_a_gpu_warns_naming_what_it_found_and_renders_on_the_cpu(tmp_path):
    from render.executors import probe_gpu_devices_isolated

    if any(probe_gpu_devices_isolated().values()):
        pytest.skip("this machine has a GPU")
    out = tmp_path / "OUT"
    result = run_render("--n", "1", "--width", "48", "--height", "32", "--samples", "1", "--device", "auto", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert "python -m render: warning: --device auto: found no GPU (CPU only); rendering on the CPU" in result.stderr.splitlines()
    assert read_json(out / "scenes.json")["scenes"][0]["render"]["device"] == "cpu"


@pytest.mark.parametrize(
    "args, message",
    [
        (["--gpu-ids", "0,0"], "--gpu-ids: '0,0': device 0 is listed twice"),
        (["--gpu-ids", "x"], "--gpu-ids: 'x': expected comma-separated device numbers"),
        (["--address", "auto"], "--address 'auto' needs --executor ray"),
        (["--executor", "ray", "--gpu-ids", "0"], "--gpu-ids does not apply to --executor ray"),
        (["--recycle-after", "-1"], "--recycle-after: must be a non-negative integer, got -1"),
    ],
)
def test_bad_farm_flags_are_one_line_exit_2_and_nothing_written(tmp_path, args, message):
    out = tmp_path / "OUT"
    result = run_render("--n", "2", "--device", "cpu", *args, "--out", str(out))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.stderr
    assert not out.exists()


def test_the_cli_plans_one_worker_per_chosen_gpu_and_logs_each(monkeypatch):
    """The CLI's planning with Blender's probe answering as on a two-GPU node inside a SLURM
    allocation of physical GPUs 4 and 6 (the probe is the one part that needs a GPU)."""
    import render.executors
    from render.cli import build_parser
    from render.farm import plan_farm

    monkeypatch.setattr(render.executors, "probe_gpu_devices_isolated", lambda: TWO_H200)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4,6")
    lines: list[str] = []
    plan = plan_farm(build_parser().parse_args(["--n", "8"]), "render", lines.append)
    assert (plan.device.backend, plan.device.gpu_ids, plan.workers, plan.threads) == ("optix", (0, 1), 2, 0)
    assert lines == ["render: rendering on OPTIX: GPU 0 (NVIDIA H200), GPU 1 (NVIDIA H200)",
                     "render: worker 0: OPTIX: GPU 0 (NVIDIA H200) (CUDA_VISIBLE_DEVICES=4)",
                     "render: worker 1: OPTIX: GPU 1 (NVIDIA H200) (CUDA_VISIBLE_DEVICES=6)"]
    lines.clear()
    one = plan_farm(build_parser().parse_args(["--n", "8", "--device", "cuda", "--gpu-ids", "1"]), "render", lines.append)
    assert (one.device.backend, one.device.gpu_ids, one.workers) == ("cuda", (1,), 1)
    assert lines[-1] == "render: worker 0: CUDA: GPU 1 (NVIDIA H200) (CUDA_VISIBLE_DEVICES=6)"
