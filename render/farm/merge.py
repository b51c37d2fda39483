"""``python -m render merge OUT [FOLDER ...]``: combine the shards of a job array into one output.

Shards that wrote into one shared folder are merged in place (``merge OUT``); shards rendered
into folders of their own (pods without a shared volume, other machines) are named after OUT and
their files are copied in first. Before anything is written, merge checks that the shards fit:
shards ``0 .. N-1`` of one count N are each there once, were made with the same settings, and
each holds every scene of its block (a shard that stopped early must be rerun, which resumes).
Then ``OUT/scenes.json`` and ``OUT/render_run.json`` are written exactly as a single run over the
whole range writes them, so the merged folder is the same files as that run.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from render.farm.outputs import SUBFOLDERS, OutputLayout, merge_scenes
from render.farm.runs import claim_output, output_defining
from render.farm.shard_layout import shard_files
from ruclevr.cli import (
    ArgumentParser,
    UsageError,
    add_common_options,
    configure_logging,
    progress_disabled,
    run_cli,
    stage_logger,
)
from ruclevr.io import atomic_write_bytes, hold_stage_output, read_json
from ruclevr.paths import check_output_location, check_real_folders
from ruclevr.shards import Shard

PROG = "python -m render merge"


@dataclass(frozen=True)
class ShardOutput:
    shard: Shard
    folder: Path
    info: dict
    indices: list[int]  # the image_index of every scene in its scenes.shard-I-of-N.json


def build_parser() -> ArgumentParser:
    parser = ArgumentParser(
        prog=PROG,
        description="Combine the shards of 'python -m render --shard ...' into OUT/scenes.json, as one run over the whole "
        "range writes it. Checks first that shards 0..N-1 are all there, complete and made with the same settings.",
    )
    add_common_options(parser)
    parser.add_argument("out", help="the output folder; shards that wrote here are merged in place")
    parser.add_argument("folders", nargs="*", help="other folders holding shards; their images, masks and scene files are copied into OUT")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    return run_cli(_main, argv, PROG)


def _main(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.verbosity)
    check_output_location(args.out, "dir", "OUT")
    check_real_folders(args.out, SUBFOLDERS, "OUT")  # shards' files are copied in: never through a link
    out = Path(args.out)
    sources = [Path(folder) for folder in args.folders]
    for folder in sources or [out]:  # OUT itself may be new when shards are copied into it
        if not folder.is_dir():
            raise UsageError(f"{folder} is not a folder")
    with hold_stage_output(out, "dir"):  # not while shards (or another merge) still write into it
        shards = find_shards([out] + sources)
        info = check_shards(shards)
        layout = OutputLayout(out, info["scene_options"]["filename_prefix"])
        copies = plan_copies(shards, layout)
        copy_files(copies)
        claim_output(layout, info)
        merged = merge_scenes(layout, info)
    count = shards[0].shard.count
    stage_logger("render").info(f"{PROG}: {count} shard(s), {merged} scenes in {layout.scenes_json} "
                                f"({len(copies)} files copied); check them with: python -m render verify {out}")
    return 0


def find_shards(folders: Sequence[Path]) -> list[ShardOutput]:
    found: dict[Shard, ShardOutput] = {}
    for folder in folders:
        if not folder.is_dir():
            continue
        for shard, path in shard_files(folder).items():
            try:
                record = read_json(path)
                output = ShardOutput(shard, folder, record["info"], [scene["image_index"] for scene in record["scenes"]])
            except (OSError, ValueError, KeyError, TypeError) as error:
                raise UsageError(f"{path} is not a readable shard file ({error})") from None
            if shard in found:
                raise UsageError(f"{shard.name} is in two folders ({found[shard].folder} and {folder}); keep one")
            found[shard] = output
    if not found:
        raise UsageError(f"no scenes.shard-I-of-N.json in {', '.join(str(f) for f in folders)}: nothing to merge")
    return sorted(found.values(), key=lambda output: output.shard.index)


def check_shards(shards: list[ShardOutput]) -> dict:
    """The common run record of the shards (without ``shard``), or a UsageError naming what does not fit."""
    counts = sorted({output.shard.count for output in shards})
    if len(counts) > 1:
        raise UsageError(f"shards of different counts ({', '.join(map(str, counts))}) cannot be merged: "
                         + ", ".join(output.shard.name for output in shards))
    count = counts[0]
    problems = []
    present = {output.shard.index for output in shards}
    missing = [index for index in range(count) if index not in present]
    if missing:
        files = ", ".join(f"scenes.{Shard(index, count).name}.json" for index in missing[:3]) + (", ..." if len(missing) > 3 else "")
        problems.append(f"{len(missing)} of {count} shards missing (no {files})")
    first = shards[0]
    reference = output_defining(first.info)
    ranges = {(output.info["shard"]["start_index"], output.info["shard"]["n"]) for output in shards}
    if len(ranges) > 1:
        problems.append("shards cover different ranges (start index, n): " + ", ".join(map(str, sorted(ranges))))
    for output in shards:
        if output_defining(output.info) != reference:
            problems.append(f"{output.shard.name} was made with other settings than {first.shard.name}")
        start, n = output.info["shard"]["start_index"], output.info["shard"]["n"]
        expected = list(output.shard.indices(start, n))
        if sorted(output.indices) != expected:
            lacking = sorted(set(expected) - set(output.indices))
            extra = sorted(set(output.indices) - set(expected))
            detail = f"lacks {len(lacking)} scene(s) ({_some(lacking)}): rerun it to resume" if lacking else f"holds scenes outside its block ({_some(extra)})"
            problems.append(f"{output.shard.name} {detail}")
    if problems:
        raise UsageError("cannot merge: " + "; ".join(problems))
    return {key: value for key, value in first.info.items() if key != "shard"}


@dataclass(frozen=True)
class Copy:
    source: Path
    target: Path


def plan_copies(shards: list[ShardOutput], layout: OutputLayout) -> list[Copy]:
    """Files of shards in other folders that OUT lacks; a file OUT holds with other bytes is a conflict."""
    copies, problems = [], []
    for output in shards:
        source = OutputLayout(output.folder, layout.prefix)
        if source.root.resolve() == layout.root.resolve():
            continue
        for index in output.indices:
            for path, target in ((source.image_path(index), layout.image_path(index)), (source.mask_path(index), layout.mask_path(index)),
                                 (source.scene_path(index), layout.scene_path(index))):
                if not path.is_file():
                    problems.append(f"{path} is missing")
                elif not target.exists():
                    copies.append(Copy(path, target))
                elif target.read_bytes() != path.read_bytes():
                    problems.append(f"{target} differs from {path}")
    if problems:
        raise UsageError(f"cannot merge: {'; '.join(problems[:3])}" + (f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""))
    return copies


def copy_files(copies: list[Copy]) -> None:
    """Images and masks before scene files, so a scene file in OUT always has its image and mask."""
    ordered = sorted(copies, key=lambda copy: copy.target.suffix == ".json")
    for copy in tqdm(ordered, desc="merge", unit="file", file=sys.stderr,
                     disable=progress_disabled() if ordered else True):
        copy.target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(copy.target, copy.source.read_bytes())


def _some(indices: list[int], shown: int = 5) -> str:
    text = ", ".join(map(str, indices[:shown]))
    return text + (", ..." if len(indices) > shown else "")
