"""``python -m dataset families validate PATH... [--realise N]``: family files checked by every stage that reads them.

``python -m questions validate`` checks what the question engine reads (programs, parameters,
constraints, English templates, placeholders). This command, above the stages, also checks the
Russian templates by the native realiser's rules (``translate``), and with ``--realise N`` makes N
questions of each family, says each in every language the family has and reads the Russian back
with the ``morph`` filter (:mod:`dataset.families.realise_check`). A problem is named with its file and
line; the exit status is 2 when there is one.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from questions import TemplateCheck, check_scenes, given_family_files, validate_files
from ruclevr.cli import UsageError, add_common_options, non_negative_int, positive_int, stage_logger
from ruclevr.jsonstream import JsonDocument

PROG = "dataset families"
log = stage_logger("dataset")
#: --realise: at most this many questions a family (and so SCENES_PER_QUESTION times as many scenes).
MAX_REALISE = 1_000


def language_checkers() -> Mapping[str, TemplateCheck]:
    """The template checker of each language whose realiser is a stage of this project (loaded
    when the command runs: pymorphy3's dictionaries are not every ``python -m dataset`` command's)."""
    from translate import validate_template

    return {"ru": validate_template}


def add_families_parser(commands: argparse._SubParsersAction) -> None:
    families = commands.add_parser("families", help="check family files with every stage that reads them")
    actions = families.add_subparsers(dest="families_command", required=True, metavar="ACTION")
    parser = actions.add_parser(
        "validate", help="check family files, Russian templates by the realiser's rules; --realise N: say them too",
        description="Check family files as every stage reads them: the question engine's checks (python -m questions "
        "validate) and the Russian templates by the native realiser's rules, each problem with its file, line and place; "
        "with --realise N, also realise each family and read its Russian back with the morph filter. Exit status 0 "
        "when all are valid, 2 otherwise.")
    add_common_options(parser)
    parser.add_argument("paths", nargs="+", type=Path, metavar="FILE_OR_DIR",
                        help="family files, or folders of them (their *.yaml and *.yml files); ids must be unique across all given")
    parser.add_argument(
        "--realise", type=positive_int, default=None, metavar="N",
        help="also make N questions of each family on scene graphs and say each in every language the family has: "
        "report per family what was realised, refused by the reading check and rejected by the morph filter, and the "
        "answers' balance, with the file and line of each template at fault",
    )
    parser.add_argument("--scenes", type=Path, default=None, metavar="FILE",
                        help="with --realise: the scenes.json to ask on (default: scene graphs sampled without rendering, "
                        "from --seed)")
    parser.add_argument("--seed", type=non_negative_int, default=0,
                        help="with --realise: seed of the sampled scenes, the questions and the Russian words (default 0)")


def command_families(args: argparse.Namespace) -> int:
    """``families validate``: the only action so far."""
    files = given_family_files(args.paths)
    if args.realise is None and args.scenes is not None:
        raise UsageError("--scenes applies only with --realise N")
    if args.realise is not None and args.realise > MAX_REALISE:
        raise UsageError(f"--realise {args.realise}: at most {MAX_REALISE} questions a family (each needs scenes held "
                         "in memory)")
    families, problems = validate_files(files, language_checkers())
    for problem in problems:
        log.error(f"{PROG}: {problem}")
    if problems:
        log.error(f"{PROG}: {len(problems)} problem(s) in {len(files)} file(s)")
        return 2
    if args.realise is not None:
        return realise_families({family.id: family for family in families}, files, args)
    print(f"{PROG}: ok: {len(families)} families in {len(files)} file(s)")
    return 0


def realise_families(families: Mapping[str, Any], files: Sequence[Path], args: Any) -> int:
    """validate --realise: each family's questions said in its languages and checked; exit 2 on a problem."""
    import dataset.families.realise_check as realise_check
    from translate import NativeRealiser

    scenes = realise_scenes(args.scenes, args.seed, args.realise * realise_check.SCENES_PER_QUESTION)
    realiser = NativeRealiser(families=families.values(), seed=args.seed)
    locations = realise_check.family_locations(files)
    problems: list[str] = []
    for report in realise_check.check_families(families, locations, scenes, args.realise, args.seed, realiser):
        print(f"{PROG}: {report.summary()}")
        for problem in report.problems:
            log.error(f"{PROG}: {problem}")
        problems += report.problems
    if problems:
        log.error(f"{PROG}: {len(problems)} problem(s) realising {len(families)} families")
        return 2
    print(f"{PROG}: ok: {len(families)} families in {len(files)} file(s), each realised and checked on up to "
          f"{args.realise} questions")
    return 0


def realise_scenes(path: Path | None, seed: int, count: int) -> list[dict[str, Any]]:
    """The first ``count`` scenes of ``path`` (checked), or ``count`` scene graphs sampled from ``seed``."""
    if path is None:
        from render import SceneOptions, sample_scene_graph

        options = SceneOptions(min_objects=3, max_objects=10)
        return [sample_scene_graph(seed, index, options) for index in range(count)]
    check_scenes(path)
    scenes: list[dict[str, Any]] = []
    for scene in JsonDocument(path, "scenes").items():
        if len(scenes) == count:
            break
        scenes.append(scene)
    return scenes
