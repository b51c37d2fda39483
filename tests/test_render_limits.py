"""Bounded work in the render stage: the documented limits, and planning that never lists --n indices."""

from __future__ import annotations

import itertools
import tracemalloc
from pathlib import Path

from render import OutputLayout
from render.cli import plan
from render.farm.scheduler import PendingIndices
from render.model.settings import MAX_SCENES, MAX_SIDE, render_limit_problem


def test_limits_are_checked_by_one_function() -> None:
    assert render_limit_problem(MAX_SCENES, MAX_SIDE, MAX_SIDE) is None
    assert "beyond the limit of 10000000 scenes" in render_limit_problem(10**12, None, None)
    assert "from index 5" in render_limit_problem(MAX_SCENES, None, None, start_index=5)
    assert "--height 100000 is larger than the limit of 8192 pixels" in render_limit_problem(1, 480, 100_000)


def test_planning_a_huge_range_holds_no_list(tmp_path: Path) -> None:
    layout = OutputLayout(tmp_path / "out")
    (layout.root / "scenes").mkdir(parents=True)
    layout.scene_path(1).write_text("{}", encoding="utf-8")
    layout.image_path(1).parent.mkdir()
    layout.mask_path(1).parent.mkdir()
    layout.image_path(1).write_bytes(b"png")
    layout.mask_path(1).write_bytes(b"png")
    tracemalloc.start()
    try:
        pending = PendingIndices(plan(layout, range(10**12)))
        first = list(itertools.islice(pending, 5))
        pending.appendleft(99)  # a retried index comes first
        again = pending.popleft()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert first == [0, 2, 3, 4, 5] and again == 99  # index 1 is finished
    assert peak < 1_000_000
    assert pending and pending.popleft() == 6


def test_a_scene_whose_image_is_gone_is_planned_again(tmp_path: Path) -> None:
    layout = OutputLayout(tmp_path)
    for folder in ("scenes", "images", "masks"):
        (tmp_path / folder).mkdir()
    for index in (0, 1):
        for path in (layout.scene_path(index), layout.image_path(index), layout.mask_path(index)):
            path.write_bytes(b"x")
    layout.image_path(1).unlink()
    assert list(plan(layout, range(3))) == [1, 2]
