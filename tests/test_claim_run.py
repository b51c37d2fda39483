"""The one resume protocol (:func:`ruclevr.records.claim_run` with a :class:`ruclevr.records.RunUnit`):
a rerun of the same settings resumes, one of other settings is refused in one line (exit status 2)
with nothing written, ``--overwrite`` starts over, and a run killed mid-write is repaired by a rerun.
The stages' own units (render's folder, augment's, pairs', the questions checkpoints) are claimed
through it."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from render.farm.outputs import OutputLayout
from render.farm.runs import claim_output
from ruclevr.cli import USAGE_EXIT, UsageError, run_cli
from ruclevr.io import atomic_open, remove_stale_temporaries
from ruclevr.records import RunUnit, claim_run

COUNT = 5


def item_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("item_*.txt"))


def items_unit(folder: Path) -> RunUnit:
    """A folder of numbered items, claimed like a stage's output folder."""

    def start_over() -> None:
        for path in item_files(folder):
            path.unlink()

    return RunUnit(folder / "run.json", has_work=lambda: item_files(folder),
                   refusal=lambda differences: f"{folder} holds items of another run ({'; '.join(differences)})",
                   start_over=start_over, prepare=lambda: remove_stale_temporaries(folder))


def run_items(folder: Path, record: Mapping[str, Any], overwrite: bool = False, kill_at: int | None = None) -> None:
    """Claim ``folder`` and write the items not there yet, each atomically; ``kill_at``: the process kills
    itself (SIGKILL, no cleanup) half-way through writing that item."""
    claim_run(items_unit(folder), record, overwrite=overwrite)
    for index in range(COUNT):
        path = folder / f"item_{index}.txt"
        if path.exists():
            continue
        with atomic_open(path) as handle:
            handle.write(f"seed {record['seed']} item {index}\n")
            if index == kill_at:
                handle.flush()
                os.kill(os.getpid(), signal.SIGKILL)


def killed_run(folder: Path, record: Mapping[str, Any], kill_at: int) -> int | None:
    process = multiprocessing.get_context("fork").Process(target=run_items, args=(folder, record, False, kill_at))
    process.start()
    process.join(60)
    return process.exitcode


def test_a_killed_run_is_repaired_and_resumed_by_a_rerun_of_the_same_settings(tmp_path: Path) -> None:
    folder = tmp_path / "out"
    assert killed_run(folder, {"seed": 1}, kill_at=2) == -signal.SIGKILL
    assert [path.name for path in item_files(folder)] == ["item_0.txt", "item_1.txt"]
    leftovers = list(folder.glob(".item_2.txt.*.tmp"))
    assert len(leftovers) == 1 and leftovers[0].read_text() == "seed 1 item 2\n"  # half a run's work, never visible
    first = (folder / "item_0.txt").stat().st_ino
    run_items(folder, {"seed": 1})
    assert not list(folder.glob(".*.tmp"))
    assert [path.read_text() for path in item_files(folder)] == [f"seed 1 item {index}\n" for index in range(COUNT)]
    assert (folder / "item_0.txt").stat().st_ino == first  # resumed: the finished item was not made again
    assert json.loads((folder / "run.json").read_text()) == {"seed": 1}


def test_a_run_of_other_settings_is_refused_in_one_line_and_writes_nothing(tmp_path: Path, capsys) -> None:
    folder = tmp_path / "out"
    run_items(folder, {"seed": 1, "size": [4, 3]})
    before = {path.name: path.read_bytes() for path in folder.iterdir()}
    with pytest.raises(UsageError, match=r"holds items of another run \(seed: 1 -> 2; size: \[4, 3\] -> \[4, 4\]\)$"):
        run_items(folder, {"seed": 2, "size": (4, 4)})
    assert run_cli(lambda argv: run_items(folder, {"seed": 2, "size": [4, 3]}) or 0, [], "items") == USAGE_EXIT
    assert capsys.readouterr().err == f"items: error: {folder} holds items of another run (seed: 1 -> 2)\n"
    assert {path.name: path.read_bytes() for path in folder.iterdir()} == before
    run_items(folder, {"seed": 1, "size": (4, 3)})  # the same settings, read back from JSON, resume
    assert {path.name: path.read_bytes() for path in folder.iterdir()} == before


def test_overwrite_starts_over_with_the_new_settings(tmp_path: Path) -> None:
    folder = tmp_path / "out"
    assert killed_run(folder, {"seed": 1}, kill_at=3) == -signal.SIGKILL
    run_items(folder, {"seed": 2}, overwrite=True)
    assert not list(folder.glob(".*.tmp"))
    assert [path.read_text() for path in item_files(folder)] == [f"seed 2 item {index}\n" for index in range(COUNT)]
    assert json.loads((folder / "run.json").read_text()) == {"seed": 2}


def test_a_folder_without_finished_work_is_taken_over_by_another_run(tmp_path: Path) -> None:
    folder = tmp_path / "out"
    assert killed_run(folder, {"seed": 1}, kill_at=0) == -signal.SIGKILL  # killed before its first item
    run_items(folder, {"seed": 2})
    assert [path.read_text() for path in item_files(folder)] == [f"seed 2 item {index}\n" for index in range(COUNT)]


def test_a_render_folder_is_claimed_through_the_same_protocol(tmp_path: Path) -> None:
    """Render's unit: scene files are its work, only the drawn settings are compared (the device is not),
    --overwrite removes the earlier renders, and claiming prepares the folders and drops temporaries."""
    layout = OutputLayout(tmp_path / "render", "clevr")
    info = {"seed": 0, "min_pixels": 10, "render": {"look": 3, "device": "cpu", "width": 32, "height": 24}}
    claim_output(layout, info)
    assert all((layout.root / name).is_dir() for name in ("images", "masks", "scenes"))
    layout.scene_path(0).write_text("{}", encoding="utf-8")
    stale = layout.root / "images" / ".clevr_000001.png.123.tmp"
    stale.write_bytes(b"half")
    claim_output(layout, {**info, "render": {**info["render"], "device": "gpu"}})  # another device resumes
    assert not stale.exists() and layout.scene_path(0).exists()
    other = {**info, "seed": 1}
    with pytest.raises(UsageError, match=r"holds scenes made with other settings \(seed: 0 -> 1\).*--overwrite$"):
        claim_output(layout, other)
    claim_output(layout, other, overwrite=True)
    assert not layout.scene_path(0).exists()
    assert json.loads(layout.run_record.read_text())["seed"] == 1
