"""Fixtures shared across test modules (plain helper functions are in ``helpers.py``)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from helpers import run_stage

from render.scene_graph import sample_scene_graph


@pytest.fixture(scope="session")
def thousand_scenes() -> list[dict]:
    """1,000 scene graphs sampled with seed 0 (no rendering); several modules check questions on them."""
    return [sample_scene_graph(0, index) for index in range(1000)]


@pytest.fixture()
def run_captured(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """:func:`helpers.run_stage`, then what the command printed: ``(status, stdout, stderr)``."""

    def run(stage: str, *argv: object) -> tuple[int, str, str]:
        capsys.readouterr()
        status = run_stage(stage, *argv)
        captured = capsys.readouterr()
        return status, captured.out, captured.err

    return run
