"""``python -m dataset pairs``: its options and its command."""

from __future__ import annotations

import argparse
from pathlib import Path

from dataset.augment import add_rerender_options
from questions import add_family_arguments, sources_from_arguments
from ruclevr.cli import add_common_options, output_path, positive_int, stage_logger
from ruclevr.cli import seed as seed_type

PROG = "python -m dataset pairs"


def add_pairs_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "pairs", help="minimal pairs: re-render each scene with one change and ask its questions again, as groups",
        description="For each scene, remove, recolour, re-material or move one object (a change that flips an answer), "
                    "render the scene again from its record, check the change in the pixels, and write every question "
                    "that stays well posed as a group of two items (source and edited scene) with its answer "
                    "re-computed. OUT/questions_ru_kept.json and OUT/scenes.json go straight into export.")
    add_common_options(parser)
    parser.add_argument("--scenes", type=Path, required=True, help="the render stage's scenes.json (images/ and masks/ beside it)")
    parser.add_argument("--questions", type=Path, required=True,
                        help="the filter stage's questions_ru_kept.json about those scenes")
    parser.add_argument("--out", type=output_path, required=True, help="output folder (created); see docs for its layout")
    parser.add_argument("--seed", type=seed_type, default=0, help="seed of the choice of each scene's change; default 0")
    parser.add_argument("--n", type=positive_int, default=None, help="only the first N scenes of --scenes (default: all)")
    parser.add_argument("--masks", type=Path, default=None, help="folder of the source masks; default masks/ beside --scenes")
    add_family_arguments(parser, recorded=True)
    parser.add_argument("--yo", choices=("e", "yo"), default="e",
                        help="ё spelling of the re-computed Russian answers (as the source's translate stage); default e")
    add_rerender_options(parser, "the edited scenes")
    parser.add_argument("--overwrite", action="store_true", help="delete this folder's earlier re-renders and start over")


def command_pairs(args: argparse.Namespace) -> int:
    from dataset.augment import AugmentSources
    from dataset.pairs.run import PairsSettings, pairs

    settings = PairsSettings(seed=args.seed, n=args.n, families=sources_from_arguments(args), yo=args.yo, device=args.device,
                             workers=args.workers, threads=args.threads)
    result = pairs(AugmentSources(args.scenes, args.questions, args.masks), args.out, settings, args.overwrite)
    log = stage_logger("dataset")
    if result.failures:
        for failure in result.failures:
            log.error(f"{PROG}: failed: {failure}")
        log.error(f"{PROG}: finished scenes are kept; rerun the same command to retry the rest")
        return 1
    counts = result.counts
    refused = sum(counts["refused_by_pixels"].values())
    print(f"{args.out}: {counts['groups']} groups ({counts['groups_answer_flips']} with the answer flipped) from "
          f"{counts['edited_scenes']} edited scenes of {counts['source_scenes']} ({refused} refused by the pixel checks); "
          f"by change {counts['groups_by_change']}")
    return 0
