"""What one translate run is made with: :class:`TranslateSettings`, read from the command line by
``translate.cli.settings_from_args`` or composed by ``dataset build``, and run by ``translate.cli.run``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from questions import FamilySources
from ruclevr.secret_seed import StageSeed
from translate.base import DEFAULT_BACKOFF_S, DEFAULT_RETRIES, DEFAULT_TIMEOUT_S
from translate.spelling import DEFAULT_YO_POLICY

DEFAULT_BATCH_SIZE = 32


@dataclass(frozen=True)
class TranslateSettings:
    questions: Path
    out: Path
    backend: str = "native"
    model: str | None = None  # marian: hub id or local folder
    cache: Path | None = None  # google, marian: the SQLite translation cache
    batch_size: int = DEFAULT_BATCH_SIZE
    yo: str = DEFAULT_YO_POLICY
    timeout: float = DEFAULT_TIMEOUT_S
    retries: int = DEFAULT_RETRIES
    backoff: float = DEFAULT_BACKOFF_S
    seed: StageSeed = StageSeed()
    families: FamilySources | None = None  # native: None reads the input's recorded families
    shard: str | None = None  # one shard of the scenes (ruclevr.shards spec)
    overwrite: bool = False
    verbosity: int = 0
