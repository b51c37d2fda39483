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

from render.engines.devices import DEVICE_CHOICES
from render.engines.registry import engine_names
from render.model.looks import DRAWABLE_LOOKS
from ruclevr.cli import UsageError
from ruclevr.cluster import EXECUTORS
from ruclevr.io import atomic_write_json, read_json
from ruclevr.jsonlimits import JsonLimitError
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
        document = read_json(path)  # a regular file only (a FIFO would wait forever), held to the JSON limits
    except FileNotFoundError:
        raise UsageError(f"--settings {path}: no such file") from None
    except OSError as error:
        raise UsageError(f"--settings {path}: cannot be read ({error.strerror or error})") from None
    except JsonLimitError as error:
        raise UsageError(f"--settings {path}: {str(error).removeprefix(str(path) + ' ')}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise UsageError(f"--settings {path}: not a JSON file ({error})") from None
    names = {field.name for field in dataclasses.fields(RenderRunSettings)}
    if not isinstance(document, dict) or document.get("format") != SETTINGS_FORMAT \
            or not isinstance(document.get("settings"), dict) or set(document["settings"]) != names:
        raise UsageError(f"--settings {path}: not a render settings file ({SETTINGS_FORMAT})")
    record = dict(document["settings"])
    problem = value_problem(record)
    if problem:
        raise UsageError(f"--settings {path}: {problem}")
    seed_file = Path(record["seed_file"]) if record["seed_file"] is not None else None
    record["seed_file"] = seed_file
    record["seed"] = stage_seed(record["seed"], seed_file, "render")
    record["gpu_ids"] = tuple(record["gpu_ids"]) if record["gpu_ids"] is not None else None
    return RenderRunSettings(**record)


#: What each value of a settings file must be, as the command line's own types make them: integers >= 1 or
#: >= 0, a closed set of words, text, a flag; ``None`` allowed where the option has no default value.
_POSITIVE = ("n", "width", "height", "samples", "min_objects", "max_objects", "workers")
_NON_NEGATIVE = ("start_index", "min_pixels", "threads", "recycle_after", "max_worker_rss", "crash_retries")
_TEXT = ("out", "split", "condition", "address", "shard", "seed_file")
_FLAGS = ("no_denoise", "overwrite", "graphs_only", "legible_only")
_OPTIONAL = frozenset({"samples", "min_pixels", "min_visible_fraction", "legible_only", "condition", "workers",
                       "threads", "gpu_ids", "address", "shard", "seed_file", "seed"})


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def value_problem(record: dict[str, Any]) -> str | None:
    """What is wrong with a settings file's values (the first problem), or None."""
    choices = {"look": DRAWABLE_LOOKS, "engine": engine_names(), "device": DEVICE_CHOICES, "executor": EXECUTORS}
    if record.get("seed") is None and record.get("seed_file") is None:
        return "seed: neither a seed nor a seed file"
    for name, value in record.items():
        if value is None and name in _OPTIONAL:
            continue
        if name in _POSITIVE and not (_whole(value) and value >= 1):
            return f"{name} must be an integer >= 1, got {value!r}"
        if name in _NON_NEGATIVE and not (_whole(value) and value >= 0):
            return f"{name} must be an integer >= 0, got {value!r}"
        if name in _TEXT and not isinstance(value, str):
            return f"{name} must be text, got {value!r}"
        if name in _FLAGS and not isinstance(value, bool):
            return f"{name} must be true or false, got {value!r}"
        if name in choices and value not in choices[name]:
            return f"{name} must be one of {', '.join(map(str, choices[name]))}, got {value!r}"
        if name in ("seed", "verbosity") and not _whole(value):
            return f"{name} must be an integer, got {value!r}"
        if name == "min_visible_fraction" and not (isinstance(value, (int, float)) and not isinstance(value, bool)):
            return f"{name} must be a number, got {value!r}"
        if name == "gpu_ids" and not (isinstance(value, list) and all(_whole(i) and i >= 0 for i in value)):
            return f"{name} must be a list of GPU indices, got {value!r}"
    return None
