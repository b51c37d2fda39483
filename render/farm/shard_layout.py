"""A render shard's files: its own block of scene indices, and ``scenes.shard-I-of-N.json`` /
``render_run.shard-I-of-N.json`` instead of ``scenes.json`` / ``render_run.json``, so shards can
share one output folder. ``python -m render merge`` combines them. The shards themselves (which
block is whose, ``--shard`` specs) are :mod:`ruclevr.shards`, shared with the text stages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from render.farm.outputs import OutputLayout
from ruclevr.shards import Shard

SHARD_FILE_PATTERN = re.compile(r"^scenes\.shard-(\d+)-of-(\d+)\.json$")


@dataclass(frozen=True)
class ShardLayout(OutputLayout):
    """The output layout seen by one shard: its own block of indices and its own merged files."""

    shard: Shard = Shard(0, 1)
    start_index: int = 0
    n: int = 0

    @property
    def indices(self) -> range:
        return self.shard.indices(self.start_index, self.n)

    @property
    def scenes_json(self) -> Path:
        return self.root / f"scenes.{self.shard.name}.json"

    @property
    def run_record(self) -> Path:
        return self.root / f"render_run.{self.shard.name}.json"

    def finished_scene_files(self) -> list[Path]:
        return [self.scene_path(index) for index in self.indices if self.scene_path(index).exists()]

    def remove_outputs(self) -> int:
        """For --overwrite: delete this shard's files only; other shards' files stay."""
        removed = 0
        paths = [self.scenes_json, self.run_record]
        for index in self.indices:
            paths += [self.image_path(index), self.mask_path(index), self.scene_path(index)]
        for path in paths:
            if path.exists():
                path.unlink()
                removed += 1
        return removed


def shard_files(folder: Path) -> dict[Shard, Path]:
    """The ``scenes.shard-I-of-N.json`` files in ``folder``, by shard."""
    found = {}
    for path in sorted(folder.glob("scenes.shard-*-of-*.json")):
        match = SHARD_FILE_PATTERN.match(path.name)
        if match:
            found[Shard(int(match.group(1)), int(match.group(2)))] = path
    return found


def layout_for(root: Path, prefix: str, shard: Shard | None, start_index: int, n: int) -> OutputLayout:
    """The whole folder's layout, or the one shard's view of it."""
    if shard is None:
        return OutputLayout(root, prefix)
    return ShardLayout(root, prefix, shard, start_index, n)
