"""What one questions run is made with: :class:`QuestionSettings`, read from the command line by
``questions.cli.settings_from_args`` or composed by ``dataset build``, and run by ``questions.cli.run``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from questions.family_sources import FamilySources
from questions.generate import CHUNK_SCENES
from questions.scene_questions import Settings
from ruclevr.secret_seed import StageSeed


@dataclass(frozen=True)
class QuestionSettings:
    scenes: Path
    out: Path
    per_image: int = Settings.per_image
    seed: StageSeed = StageSeed()
    families: FamilySources | None = None  # None: the shipped families alone
    budget: int = Settings.budget
    split_repeats: int = Settings.split_repeats
    checkpoint_every: int = CHUNK_SCENES
    balance_block: int = Settings.balance_block
    unique_across_blocks: bool = False
    shard: str | None = None  # one shard of the scenes (ruclevr.shards spec)
    mix: str | None = None  # CLASS=SHARE,... as given; read against the families when they are loaded
    mix_by: str = "type"
    overwrite: bool = False
    verbosity: int = 0
