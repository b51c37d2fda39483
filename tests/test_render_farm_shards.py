"""Shards as an exact partition, and where their index comes from (no Blender here)."""

from __future__ import annotations

import pytest

from render.farm.shard_layout import ShardLayout
from ruclevr.cli import UsageError
from ruclevr.shards import Shard, parse_shard


@pytest.mark.parametrize("n", [1, 2, 5, 7, 10, 97, 1000])
@pytest.mark.parametrize("count", [1, 2, 3, 4, 8, 13])
@pytest.mark.parametrize("start", [0, 1000])
def test_shards_partition_the_range_exactly(n, count, start):
    blocks = [list(Shard(index, count).indices(start, n)) for index in range(count)]
    flat = [i for block in blocks for i in block]
    assert flat == list(range(start, start + n))  # every index once, in order: contiguous blocks
    sizes = [len(block) for block in blocks]
    assert max(sizes) - min(sizes) <= 1  # the remainder is spread, never dropped


def test_shard_specs_from_the_flag_slurm_and_kubernetes():
    assert parse_shard("2/5", {}) == Shard(2, 5)
    slurm = {"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "4"}
    assert parse_shard("slurm", slurm) == Shard(3, 4)
    # --array=1-4: ids start at 1; --array=0-30:10: ids step by 10.
    assert parse_shard("slurm", {**slurm, "SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_MIN": "1"}) == Shard(3, 4)
    stepped = {"SLURM_ARRAY_TASK_ID": "20", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_STEP": "10"}
    assert parse_shard("slurm", stepped) == Shard(2, 4)
    assert parse_shard("kubernetes/6", {"JOB_COMPLETION_INDEX": "5"}) == Shard(5, 6)


@pytest.mark.parametrize(
    "spec, environ, message",
    [
        ("3/3", {}, "--shard 3/3: shard 3 is not in 0..2 (shards are 0-based)"),
        ("1/0", {}, "the shard count must be a positive integer, got '0'"),
        ("a/b", {}, "expected I/N (0-based)"),
        ("slurm", {}, "--shard slurm: SLURM_ARRAY_TASK_ID is not set (run inside the job array, or give --shard I/N)"),
        ("slurm", {"SLURM_ARRAY_TASK_ID": "7", "SLURM_ARRAY_TASK_COUNT": "4"}, "shard 7 is not in 0..3"),
        ("kubernetes/4", {"JOB_COMPLETION_INDEX": "x"}, "JOB_COMPLETION_INDEX is 'x', not a number"),
    ],
)
def test_bad_shard_specs_say_what_is_wrong(spec, environ, message):
    with pytest.raises(UsageError) as error:
        parse_shard(spec, environ)
    assert message in str(error.value)


def test_a_shard_layout_names_its_own_files_and_overwrites_only_them(tmp_path):
    layout = ShardLayout(tmp_path, "ruclevr", Shard(1, 3), 0, 7)
    assert list(layout.indices) == [2, 3]
    assert layout.scenes_json.name == "scenes.shard-1-of-3.json"
    assert layout.run_record.name == "render_run.shard-1-of-3.json"
    layout.prepare()
    for index in range(7):
        for path in (layout.image_path(index), layout.mask_path(index), layout.scene_path(index)):
            path.write_text("x")
    layout.scenes_json.write_text("{}")
    assert [p.name for p in layout.finished_scene_files()] == ["ruclevr_000002.json", "ruclevr_000003.json"]
    assert layout.remove_outputs() == 7
    left = sorted(p.name for p in (tmp_path / "scenes").iterdir())
    assert left == [f"ruclevr_{i:06d}.json" for i in (0, 1, 4, 5, 6)]
