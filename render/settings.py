"""What one render run is made with: :class:`RenderRunSettings`, read from the command line by
``render.cli.settings_from_args``, or from the file ``python -m render --settings FILE`` reads
(:func:`write_settings_file`, which ``dataset build`` writes), and run by ``render.cli.run``.

A secret seed's value is never written: the file then names the seed file instead, and the
render process reads it again.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruclevr.cli import UsageError
from ruclevr.io import atomic_write_json
from ruclevr.secret_seed import StageSeed, stage_seed

SETTINGS_FORMAT = "ruclevr.render.settings.v1"


@dataclass(frozen=True)
class RenderRunSettings:
    """The options of ``python -m render``, by their names there (``--min-objects``: ``min_objects``)."""

    n: int
    out: str
    seed: StageSeed
    seed_file: Path | None  # a secret seed's file (``seed`` holds its value and commitment)
    start_index: int
    width: int
    height: int
    samples: int | None  # None: the default of the device the run renders on
    look: int
    engine: str
    no_denoise: bool
    min_objects: int
    max_objects: int
    min_pixels: int | None
    min_visible_fraction: float | None
    legible_only: bool | None
    split: str
    condition: str | None
    device: str
    workers: int | None
    threads: int | None
    overwrite: bool
    graphs_only: bool
    gpu_ids: tuple[int, ...] | None
    executor: str
    address: str | None
    shard: str | None
    recycle_after: int
    max_worker_rss: int
    crash_retries: int
    verbosity: int


def settings_record(settings: RenderRunSettings) -> dict[str, Any]:
    """The settings as the settings file holds them: a secret seed by its file, never its value."""
    record = {field.name: getattr(settings, field.name) for field in dataclasses.fields(settings)}
    record["seed"] = settings.seed.value if settings.seed_file is None else None
    record["seed_file"] = None if settings.seed_file is None else str(settings.seed_file)
    record["gpu_ids"] = None if settings.gpu_ids is None else list(settings.gpu_ids)
    return {"format": SETTINGS_FORMAT, "settings": record}


def write_settings_file(path: Path, settings: RenderRunSettings) -> None:
    atomic_write_json(path, settings_record(settings))


def read_settings_file(path: Path) -> RenderRunSettings:
    """The settings in a file :func:`write_settings_file` wrote; UsageError for anything else."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"--settings {path}: no such file") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise UsageError(f"--settings {path}: not a JSON file ({error})") from None
    names = {field.name for field in dataclasses.fields(RenderRunSettings)}
    if not isinstance(document, dict) or document.get("format") != SETTINGS_FORMAT \
            or not isinstance(document.get("settings"), dict) or set(document["settings"]) != names:
        raise UsageError(f"--settings {path}: not a render settings file ({SETTINGS_FORMAT})")
    record = dict(document["settings"])
    seed_file = Path(record["seed_file"]) if record["seed_file"] is not None else None
    record["seed_file"] = seed_file
    record["seed"] = stage_seed(record["seed"], seed_file, "render")
    record["gpu_ids"] = tuple(record["gpu_ids"]) if record["gpu_ids"] is not None else None
    return RenderRunSettings(**record)
