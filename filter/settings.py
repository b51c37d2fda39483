"""What one filter run is made with: :class:`FilterSettings`, read from the command line by
``filter.cli.settings_from_args`` or composed by ``dataset build``, and run by ``filter.cli.run``."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from filter.rucola import RucolaOptions


@dataclass(frozen=True)
class FilterSettings:
    input: Path
    out: Path
    backend: str = "morph"
    threshold: float | None = None  # None: the backend's default
    batch_size: int = 32
    overwrite: bool = False
    shard: str | None = None  # one shard of the scenes (ruclevr.shards spec)
    rucola: RucolaOptions = field(default_factory=RucolaOptions)
    verbosity: int = 0
