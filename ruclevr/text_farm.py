"""The text stages' farm (questions, translate, filter): a whole run as shards on a Ray cluster.

``--executor ray`` runs the stage's own command with ``--shard I/N`` for every shard, each a Ray
task in a process of its own, then the stage's merge: the same bytes as a local run. The stage that
owns the command hands its parts in as a :class:`TextStage` (its module, for ``python -m MODULE``,
and its merge as a function), so this module knows no stage by name. Shards themselves are
:mod:`ruclevr.shards`; the cluster :mod:`ruclevr.cluster`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ruclevr.cli import ArgumentParser, UsageError, positive_int
from ruclevr.cluster import EXECUTORS, connect, disconnect, usable_cores


@dataclass(frozen=True)
class TextStage:
    """What the farm needs of a text stage, given by the stage itself."""

    module: str  # each shard runs ``python -m MODULE ARGV --shard I/N``
    prog: str  # the prefix of its log lines
    merge: Callable[[Path], int]  # combines the shard files of OUT into OUT; returns the exit status


def add_text_farm_arguments(parser: ArgumentParser) -> None:
    """``--executor ray`` for a text stage: every shard of the run as a Ray task, then the merge."""
    parser.add_argument("--executor", choices=EXECUTORS, default="local",
                        help="local: this process; ray: run the stage as --shards shards, each a Ray task (the nodes share a "
                             "file system), then merge them into --out (the same bytes as a local run)")
    parser.add_argument("--address", default=None,
                        help="with --executor ray: the cluster to join (host:port, or 'auto'); default $RAY_ADDRESS, else a "
                             "private local cluster with one CPU per core")
    parser.add_argument("--shards", type=positive_int, default=None,
                        help="with --executor ray: how many shards (default: one per CPU of the cluster)")


def run_text_stage(args, argv: Sequence[str], stage: TextStage) -> int | None:
    """With ``--executor ray``, run the whole stage as shards on Ray and return its exit status;
    None for a local run (the caller goes on). ``args.out`` is the whole run's output."""
    if args.executor != "ray":
        if args.address is not None or args.shards is not None:
            raise UsageError("--address and --shards need --executor ray")
        return None
    if args.shard is not None:
        raise UsageError("--shard is one shard of a run; --executor ray runs them all: give one or the other")
    return run_text_shards_on_ray(stage, strip_farm_flags(argv), Path(args.out), args.shards, args.address,
                                  log=lambda line: print(f"{stage.prog}: {line}", file=sys.stderr))


def strip_farm_flags(argv: Sequence[str]) -> list[str]:
    """``argv`` without --executor, --address and --shards (and their values)."""
    kept: list[str] = []
    skip = False
    for argument in argv:
        if skip:
            skip = False
            continue
        name = argument.split("=", 1)[0]
        if name in ("--executor", "--address", "--shards"):
            skip = "=" not in argument
            continue
        kept.append(argument)
    return kept


def run_text_shards_on_ray(stage: TextStage, argv: Sequence[str], out: Path, shards: int | None, address: str | None,
                           log: Callable[[str], None]) -> int:
    """Run ``python -m MODULE ARGV --shard I/N`` for every shard as a Ray task, then the stage's merge into ``out``.

    Each task runs the stage's command in a process of its own on whichever node Ray picks, and
    reads and writes the paths in ``argv`` there: the nodes need one shared file system (unlike
    rendering, whose actors return their files' bytes). ``shards``: default one per CPU of the
    cluster. Returns the exit status: the first failing shard's, or merge's.
    """
    import ray

    started_cluster = connect(address or os.environ.get("RAY_ADDRESS"), usable_cores())
    try:
        count = shards or max(1, int(ray.cluster_resources().get("CPU", 1)))
        task = ray.remote(_run_text_shard).options(num_cpus=1, max_retries=0)
        search_path = os.pathsep.join(entry for entry in sys.path if entry)
        runs = [task.remote(stage.module, [*argv, "--shard", f"{index}/{count}"], search_path) for index in range(count)]
        results = ray.get(runs)
    finally:
        if started_cluster:
            disconnect()
    failed = [(index, status, tail) for index, (status, tail) in enumerate(results) if status != 0]
    for index, status, tail in failed:
        log(f"shard {index}/{count} exited with {status}: {tail}")
    if failed:
        return failed[0][1]
    return stage.merge(out)


def _run_text_shard(module: str, argv: Sequence[str], search_path: str) -> tuple[int, str]:
    """One shard's command in its own process; its exit status and the last line it wrote to stderr."""
    environment = {**os.environ, "PYTHONPATH": search_path, "TQDM_DISABLE": "1"}
    done = subprocess.run([sys.executable, "-m", module, *argv], env=environment, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, check=False)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    return done.returncode, lines[-1] if lines else ""
