"""Shards: one of N parts of a run, for job arrays (SLURM, Kubernetes indexed jobs) and many machines.

Shard ``i`` of ``N`` takes a contiguous block of the run's indices ``start .. start+n-1``: block
``i`` is ``start + floor(i*n/N) .. start + floor((i+1)*n/N) - 1``. The blocks are an exact partition
(every index in exactly one block, the remainder spread so sizes differ by at most one, blocks of
size 0 when N > n), and every stage's output for an index is a function of (seed, index) alone, so
the union of the shards is the same files as one run over the whole range.

Every stage shards the same way: ``render`` by scene index (its files per shard are
:mod:`render.farm.shard_layout`), and the text stages (questions, translate, filter) by blocks of
whole scenes, each writing ``OUT.shard-I-of-N.json`` (:func:`sharded_path`) beside the whole run's
``OUT``; the stage's ``merge`` subcommand combines them (:func:`merge_target`, :func:`consecutive_shards`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ruclevr.cli import ArgumentParser, UsageError, add_common_options, configure_logging, output_path
from ruclevr.jsonstream import JsonDocument, checked_info

SHARD_SPEC_HELP = "I/N (0-based), 'slurm' (SLURM_ARRAY_TASK_ID of SLURM_ARRAY_TASK_COUNT) or 'kubernetes/N' (JOB_COMPLETION_INDEX of N)"


@dataclass(frozen=True)
class Shard:
    index: int
    count: int

    @property
    def name(self) -> str:
        return f"shard-{self.index}-of-{self.count}"

    def indices(self, start: int, n: int) -> range:
        """This shard's block of ``start .. start+n-1`` (contiguous; see the module docstring)."""
        return range(start + self.index * n // self.count, start + (self.index + 1) * n // self.count)

    def to_dict(self, start: int, n: int) -> dict:
        block = self.indices(start, n)
        return {"index": self.index, "count": self.count, "start_index": start, "n": n, "split": "contiguous",
                "first": block.start, "stop": block.stop}


def _digits(text: str) -> bool:
    """ASCII digits only: ``"²".isdigit()`` is true, yet ``int("²")`` fails."""
    return text.isascii() and text.isdigit()


def parse_shard(spec: str, environ: Mapping[str, str]) -> Shard:
    """``--shard``: ``I/N``, ``slurm`` or ``kubernetes/N``; a bad or missing value is a UsageError."""
    spec = spec.strip()
    if spec == "slurm":
        return shard_from_slurm(environ)
    if spec.startswith("kubernetes/"):
        count = _count(spec, spec.split("/", 1)[1])
        index = _environment_int(environ, "JOB_COMPLETION_INDEX", spec)
        return _checked(Shard(index, count), spec)
    parts = spec.split("/")
    if len(parts) != 2 or not all(_digits(part.strip()) for part in parts):
        raise UsageError(f"--shard {spec!r}: expected {SHARD_SPEC_HELP}")
    return _checked(Shard(int(parts[0]), _count(spec, parts[1])), spec)


def shard_from_slurm(environ: Mapping[str, str]) -> Shard:
    """The array task's position: (ID - MIN) / STEP of COUNT, so ``--array=1-8`` and ``--array=0-30:10`` work too."""
    task = _environment_int(environ, "SLURM_ARRAY_TASK_ID", "slurm")
    count = _environment_int(environ, "SLURM_ARRAY_TASK_COUNT", "slurm")
    first = int(environ.get("SLURM_ARRAY_TASK_MIN", "0") or 0)
    step = int(environ.get("SLURM_ARRAY_TASK_STEP", "1") or 1)
    if (task - first) % step:
        raise UsageError(f"--shard slurm: SLURM_ARRAY_TASK_ID={task} is not on the array's grid (min {first}, step {step})")
    return _checked(Shard((task - first) // step, count), "slurm")


def _count(spec: str, text: str) -> int:
    if not _digits(text.strip()) or int(text) < 1:
        raise UsageError(f"--shard {spec!r}: the shard count must be a positive integer, got {text!r}")
    return int(text)


def _environment_int(environ: Mapping[str, str], name: str, spec: str) -> int:
    value = environ.get(name)
    if value is None or not _digits(value.strip()):
        shown = "is not set" if value is None else f"is {value!r}, not a number"
        raise UsageError(f"--shard {spec}: {name} {shown} (run inside the job array, or give --shard I/N)")
    return int(value)


def _checked(shard: Shard, spec: str) -> Shard:
    if not 0 <= shard.index < shard.count:
        raise UsageError(f"--shard {spec}: shard {shard.index} is not in 0..{shard.count - 1} (shards are 0-based)")
    return shard


# -- the text stages' shards: one output file per shard beside the whole run's -------------------------

def sharded_path(path: Path, shard: Shard) -> Path:
    """``DIR/questions.json`` -> ``DIR/questions.shard-I-of-N.json``: where shard I of N writes that file."""
    return path.with_name(f"{path.stem}.{shard.name}{path.suffix}")


def written_path(path: Path, spec: str | None) -> Path:
    """The file a text stage's run writes: ``path``, or with ``--shard SPEC`` its shard's file beside it
    (what must not be one of the run's inputs either)."""
    return path if spec is None else sharded_path(path, parse_shard(spec, os.environ))


def shard_outputs(path: Path) -> list[Path]:
    """The shard files of ``path`` (``sharded_path`` of shards 0..N-1), in order; UsageError unless all N of one N are there."""
    pattern = re.compile(re.escape(path.stem) + r"\.shard-(\d+)-of-(\d+)" + re.escape(path.suffix) + "$")
    found: dict[int, dict[int, Path]] = {}
    for candidate in sorted(path.parent.glob(f"{path.stem}.shard-*-of-*{path.suffix}")):
        match = pattern.match(candidate.name)
        if match:
            found.setdefault(int(match.group(2)), {})[int(match.group(1))] = candidate
    if not found:
        raise UsageError(f"no shard files {path.stem}.shard-I-of-N{path.suffix} in {path.parent}")
    if len(found) > 1:
        raise UsageError(f"{path.parent} holds shards of {sorted(found)} shard runs of {path.name}; keep one")
    count, files = next(iter(found.items()))
    missing = [index for index in range(count) if index not in files]
    if missing:
        raise UsageError(f"shards {', '.join(map(str, missing))} of {count} of {path.name} are not finished")
    return [files[index] for index in range(count)]


def scene_block_positions(shard: Shard, scene_starts: Sequence[int], count: int) -> range:
    """A shard's items of a list grouped by scene (questions): those of its contiguous block of the scenes.

    ``scene_starts`` holds the position of each scene's first item, in file order; ``count`` is the
    number of items.
    """
    scenes = shard.indices(0, len(scene_starts))
    start = scene_starts[scenes.start] if scenes.start < len(scene_starts) else count
    stop = scene_starts[scenes.stop] if scenes.stop < len(scene_starts) else count
    return range(start, stop)


def merge_target(argv: Sequence[str] | None, prog: str, what: str) -> Path:
    """``--out`` of a text stage's ``merge`` subcommand (``what``: the stage's shard files, for the help)."""
    parser = ArgumentParser(prog=prog, description=f"Combine the shard files {what} into OUT: the same bytes as one run.")
    add_common_options(parser)
    parser.add_argument("--out", required=True, type=output_path, help="the whole run's output; its shard files lie beside it")
    args = parser.parse_args(argv)
    configure_logging(args.verbosity)
    return args.out


def consecutive_shards(out: Path, key: str, split_info: Callable[[dict], tuple[dict, dict]]) -> tuple[list[Path], list[dict], int]:
    """The shard files of ``out``, their ``info``, and the end of the last one, checked to be shards
    0 … N−1 of one run, each starting where the one before stopped. ``split_info(info)`` gives
    (what every shard of the run shares, the shard's own ``{"first", "stop"}``)."""
    files = shard_outputs(out)
    infos = [checked_info(JsonDocument(path, key), str(path)) for path in files]
    common = split_info(infos[0])[0]
    stop = 0
    for path, info in zip(files, infos, strict=True):
        shared, own = split_info(info)
        if shared != common:
            raise UsageError(f"{path} was made with other settings or input than {files[0]}")
        if own.get("first") != stop:
            raise UsageError(f"{path} does not start where the shard before it stopped (at {stop})")
        stop = own["stop"]
    return files, infos, stop
