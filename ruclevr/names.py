"""File names the stages derive from one another, in one place.

A scene's image, mask and scene files share the stem ``{prefix}_{index:06d}``; a stage's
companions of an output (its checkpoints, progress, the filter's rejected items, report and
scores) are named by appending a suffix to the output's name (``questions.json.partial``).
"""

from __future__ import annotations

import os
from pathlib import Path

SCENE_INDEX_DIGITS = 6


def scene_stem(prefix: str, index: int) -> str:
    """``ruclevr_000042``: the stem shared by one scene's image, mask and scene files."""
    return f"{prefix}_{index:0{SCENE_INDEX_DIGITS}d}"


def beside(path: str | os.PathLike[str], suffix: str) -> Path:
    """A companion of ``path`` in its folder: its name with ``suffix`` appended."""
    target = Path(path)
    return target.with_name(target.name + suffix)
