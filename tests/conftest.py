"""Fixtures shared across test modules."""

from __future__ import annotations

import pytest

from render import sample_scene_graph
@pytest.fixture(scope="session")
def thousand_scenes() -> list[dict]:
    """1,000 scene graphs sampled with seed 0 (no rendering); several modules check questions on them."""
    return [sample_scene_graph(0, index) for index in range(1000)]
