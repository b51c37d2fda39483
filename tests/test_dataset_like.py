"""A fresh set like an earlier one: the same item count, type and family mix, objects per scene."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dataset.mera.document import stream_document
from dataset.mera.export import ExportSettings, export_dataset
from dataset.mera.stats import compute_statistics
from dataset.releases.like import LikeSelection, LikeTarget, closeness, format_closeness, scaled_counts, scenes_like
from ruclevr.io import atomic_write_bytes
from tests.helpers import run_stage
from tests.sample_outputs import tiny_png


def graph_only_stages(folder: Path, scenes: int, seed: int) -> dict[str, Path]:
    """Real scene graphs (no rendering), questions, Russian and filter; a placeholder image per scene."""
    render = folder / "render"
    assert run_stage("render", "--n", scenes, "--out", render, "--seed", seed, "--graphs-only") == 0
    assert run_stage("questions", "--in", render / "scenes.json", "--out", folder / "q.json", "--seed", seed) == 0
    assert run_stage("translate", "--in", folder / "q.json", "--out", folder / "q_ru.json", "--seed", seed) == 0
    assert run_stage("filter", "--in", folder / "q_ru.json", "--out", folder / "kept.json") == 0
    for scene in json.loads((render / "scenes.json").read_text())["scenes"]:
        atomic_write_bytes(render / "images" / scene["image_filename"], tiny_png(scene["image_index"]))
    return {"scenes": render / "scenes.json", "questions": folder / "kept.json", "images": render / "images"}


def test_scaled_counts_keep_the_total_and_the_proportions() -> None:
    assert scaled_counts({"a": 1, "b": 1, "c": 2}, 8) == {"a": 2, "b": 2, "c": 4}
    scaled = scaled_counts({"a": 5, "b": 3, "c": 3}, 7)
    assert sum(scaled.values()) == 7 and scaled["a"] == 3


@pytest.mark.slow
def test_a_fresh_thousand_item_set_matches_the_earlier_mix(tmp_path, capsys) -> None:
    earlier_inputs = graph_only_stages(tmp_path / "a", 112, seed=1)
    export_dataset(earlier_inputs["questions"], earlier_inputs["scenes"], tmp_path / "a" / "mera", ExportSettings(shots=10, seed=1))
    target = LikeTarget.read(tmp_path / "a" / "mera")
    assert target.test["items"] >= 1000
    new_inputs = graph_only_stages(tmp_path / "b", scenes_like(target, 1.3), seed=2)
    selection = LikeSelection(target)
    info = export_dataset(new_inputs["questions"], new_inputs["scenes"], tmp_path / "b" / "mera",
                          ExportSettings(shots=target.shots, seed=2, select=selection))
    assert info["like"]["chosen"]["test_items"] == target.test["items"]
    report = closeness(target.statistics, compute_statistics(stream_document(tmp_path / "b" / "mera")))
    assert report["items"]["new"] == report["items"]["earlier"]
    assert report["question_type_share_points"]["largest"] < 1.0
    assert report["family_share_points"]["largest"] < 1.0
    assert report["objects_per_scene_tv"] < 0.2  # two independent samples of ~100 images differ by ~0.15
    assert "largest family share difference" in format_closeness(report)
    # Without the selection the same new scenes give a set of another size and mix.
    plain = export_dataset(new_inputs["questions"], new_inputs["scenes"], tmp_path / "b" / "plain",
                           ExportSettings(shots=target.shots, seed=2))
    assert plain["counts"]["test"] != target.test["items"]


@pytest.mark.blender
@pytest.mark.slow
def test_build_like_prints_how_close_it_came_and_refuses_the_earlier_seed(tmp_path) -> None:
    def build(*argv: object) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "dataset", "build", *map(str, argv)], capture_output=True,
                              text=True, check=False, env=dict(os.environ))

    earlier = build("--n", 4, "--out", tmp_path / "a", "--width", 48, "--height", 32, "--samples", 2, "--shots", 1,
                    "--seed", 7, "--render-args", "--min-objects 4")
    assert earlier.returncode == 0, earlier.stderr[-3000:]
    same = build("--like", tmp_path / "a", "--out", tmp_path / "same", "--seed", 7)
    assert same.returncode == 2 and "this very seed" in same.stderr and not (tmp_path / "same").exists()
    fresh = build("--like", tmp_path / "a", "--out", tmp_path / "b", "--seed", 8)
    assert fresh.returncode == 0, fresh.stderr[-3000:]
    assert "like: test items" in fresh.stdout and "objects-per-scene histogram total variation distance" in fresh.stdout
    record = json.loads((tmp_path / "b" / "build.json").read_text())["info"]["settings"]
    assert record["render"]["n"] == 6 and record["render"]["width"] == 48 and record["export"]["shots"] == 1
    assert record["render"]["argv"] == ["--min-objects", "4"] and record["render"]["args"] == {"min_objects": 4}
    assert json.loads((tmp_path / "b" / "like.json").read_text())["closeness"]["items"]["earlier"]["shots"] == 1


def test_the_earlier_seed_is_refused_even_behind_its_commitment() -> None:
    from dataset.releases.like import check_new_seed
    from ruclevr.cli import UsageError
    from ruclevr.secret_seed import SecretSeed

    seed = (1 << 127) + 12345
    secret = LikeTarget("OLD", {}, {}, SecretSeed(seed).record("build"))
    with pytest.raises(UsageError, match="this very seed"):
        check_new_seed(secret, seed)
    check_new_seed(secret, seed + 1)
    with pytest.raises(UsageError, match="this very seed"):
        check_new_seed(LikeTarget("OLD", {}, {}, 7), 7)


def test_like_carries_the_extra_arguments_an_earlier_build_was_given(tmp_path) -> None:
    import argparse

    from dataset import build as build_module
    from dataset.build import Build, BuildPaths, BuildSettings
    from dataset.releases.like import checked_settings, like_build_options
    from dataset.stage_settings import StageComposer

    earlier = Build(BuildPaths(tmp_path / "a"), BuildSettings(n=4, render_args=("--min-objects", "4")), False)
    plans = StageComposer(earlier, build_module.shipped_stages()).plans()
    options = {stage: plan.arguments.recorded() for stage, plan in plans.items() if plan.arguments is not None}
    recorded = json.loads(json.dumps(earlier.settings.by_stage(build_module.stage_defaults(earlier.stages), options)))
    assert recorded["render"]["args"] == {"min_objects": 4}  # what the resume check compares
    settings = checked_settings(recorded, "build.json")  # accepted: no "not a valid list"
    statistics = {"splits": {"shots": {"items": 1}}}
    args = argparse.Namespace(like_oversample=1.0, width=None, height=None, samples=None, per_image=None,
                              backend="native", filter_backend="morph")
    given = {f"{stage}_args": () for stage in ("render", "questions", "translate", "filter")}
    options = like_build_options(args, LikeTarget("a", statistics, settings, 1), given)
    assert options["render_args"] == ("--min-objects", "4") and options["questions_args"] == ()
    # Extra arguments given to the new build are its own.
    given["render_args"] = ("--max-objects", "5")
    assert like_build_options(args, LikeTarget("a", statistics, settings, 1), given)["render_args"] == ("--max-objects", "5")
