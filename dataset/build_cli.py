"""``python -m dataset build``: render → questions → translate → filter → export → Hugging Face copy
in one command (dataset/build.py runs the stages), and the options it shares with ``export``."""

from __future__ import annotations

import argparse
import signal
from pathlib import Path

from dataset.releases import add_like_options, like_build_options, like_target, report_closeness
from filter import BACKENDS as FILTER_BACKENDS
from questions import FamilyError, add_family_arguments, load_families, sources_from_arguments
from ruclevr.cli import UsageError, add_common_options, output_path, positive_int, stage_logger
from ruclevr.cli import seed as seed_type
from ruclevr.secret_seed import add_seed_file_option, stage_seed
from translate import BACKENDS as TRANSLATE_BACKENDS

PROG = "python -m dataset"
log = stage_logger("dataset")


def add_contact_option(parser: argparse.ArgumentParser) -> None:
    """``--contact`` of ``hf`` and ``build``: who maintains the copy, named in the card."""
    parser.add_argument("--contact", default=None, metavar="TEXT",
                        help="who maintains this copy (one line: a name, an e-mail or an issue tracker's address), "
                             "named in the card; default: the card says where to report problems")


def add_export_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by ``export`` and ``build``."""
    parser.add_argument("--shots", type=positive_int, default=10,
                        help="items in the shots split (few-shot examples), each on its own image; default 10 "
                             "(at least 1: datasets cannot load an empty split)")
    parser.add_argument("--seed", type=seed_type, default=0,
                        help="seed for every random choice (the shot draw here; rendering and questions in build); "
                             "default 0")
    add_seed_file_option(parser)
    parser.add_argument("--prompt", type=Path, action="append", default=None, metavar="FILE|DIR",
                        help="Jinja instruction template, or a folder of *.j2 templates; repeatable. Rendered in a "
                             "sandbox with the variables question_type and split; each must produce <image> and the "
                             "literal {question} and no other str.format field. Templates share the items evenly "
                             "within every question type. Default: the shipped set mera-blocks (MERA's block prompts, "
                             "dataset/mera/prompts/blocks.json, those that ask for the answer alone, which MERA's task "
                             "scores); mera-blocks-reasoning names those that ask for «РАССУЖДЕНИЕ: … ОТВЕТ: …» "
                             "(MERA's task scores such replies 0), mera-blocks-all both, single-style the earlier "
                             "one-file-per-prompt set")


def add_build_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "build", help="render, ask, realise in Russian, filter and export a dataset in one command",
        description="Run render → questions → translate → filter → export → Hugging Face copy into --out. "
                    "A stage whose output exists and is newer than its input is skipped, so rerunning the same "
                    "command resumes.")
    add_common_options(parser)
    parser.add_argument("--n", type=positive_int, default=None,
                        help="number of scenes to render (required unless --like gives it)")
    parser.add_argument("--out", type=output_path, required=True, help="build folder (created); see docs for its layout")
    add_export_options(parser)
    parser.add_argument("--width", type=positive_int, help="image width in pixels (render's default if not given)")
    parser.add_argument("--height", type=positive_int, help="image height in pixels (render's default if not given)")
    parser.add_argument("--samples", type=positive_int, help="render samples per pixel (render's default if not given)")
    parser.add_argument("--per-image", type=positive_int,
                        help="questions asked per image (the questions stage's default if not given)")
    parser.add_argument("--backend", choices=TRANSLATE_BACKENDS, default="native",
                        help="how questions become Russian: native realiser (offline, default), google, marian")
    parser.add_argument("--filter-backend", choices=FILTER_BACKENDS, default="morph",
                        help="acceptability filter: morph (morphological checker, offline, default), rucola, none")
    parser.add_argument("--license", default="cc-by-4.0", help="licence id written in the card; default cc-by-4.0")
    add_contact_option(parser)
    add_family_arguments(parser)
    for stage in ("render", "questions", "translate", "filter"):
        parser.add_argument(f"--{stage}-args", default="", metavar="ARGS",
                            help=f"more options passed to the {stage} stage as they are, in one quoted string "
                                 f"(e.g. --{stage}-args \"--flag value\")")
    add_like_options(parser)
    parser.add_argument("--overwrite", action="store_true",
                        help="redo every stage from scratch (passed on to each stage) instead of resuming")


def command_build(args: argparse.Namespace) -> int:
    from dataset.build import Build, BuildPaths, BuildSettings, StageFailed, format_summary
    from dataset.mera import PromptSet, check_prompts
    from dataset.publish import check_contact, check_license
    from dataset.stage_args import split_extra_args
    from dataset.stage_processes import Terminated, terminate_on_sigterm
    from render import render_limit_problem

    seed = stage_seed(args.seed, args.seed_file, "build")
    options = dict(
        n=args.n, width=args.width, height=args.height, samples=args.samples,
        per_image=args.per_image, backend=args.backend, filter_backend=args.filter_backend, shots=args.shots,
        render_args=split_extra_args(args.render_args, "--render-args"),
        questions_args=split_extra_args(args.questions_args, "--questions-args"),
        translate_args=split_extra_args(args.translate_args, "--translate-args"),
        families=family_folders(args),
        filter_args=split_extra_args(args.filter_args, "--filter-args"),
    )
    like = like_target(argparse.Namespace(**vars(args) | {"seed": seed.value}))  # checked against the seed drawn from
    if like is not None:
        options.update(like_build_options(args, like, options))
    elif args.n is None:
        raise UsageError("--n is required (or --like DATA, which takes it from an earlier set)")
    settings = BuildSettings(
        seed=seed.value, prompt=tuple(args.prompt or ()), license=check_license(args.license),
        contact=check_contact(args.contact),
        seed_file=args.seed_file.resolve() if args.seed_file is not None else None, like=like, **options,
    )
    check_prompts(PromptSet.from_paths(args.prompt))
    problem = render_limit_problem(settings.n, settings.width, settings.height, settings.samples)
    if problem:
        raise UsageError(problem)
    n, shots = settings.n, settings.shots
    if shots >= n:
        fits = f"with --n {n} at most {n - 1} fit" if n > 1 else "render at least 2 scenes"
        raise UsageError(f"--shots {shots} needs at least {shots + 1} scenes (each shot on its own image, "
                         f"and images left for the test split); {fits}")
    paths = BuildPaths(args.out)
    try:
        with terminate_on_sigterm():
            report = Build(paths, settings, args.overwrite).run()
    except StageFailed as failure:
        log.error(f"{PROG} build: {failure}")
        return failure.status or 1
    except Terminated:
        log.error(f"{PROG} build: terminated; finished work is kept: rerun the same command to resume")
        return 128 + signal.SIGTERM
    print(format_summary(paths, report))
    if like is not None:
        print(report_closeness(like, paths))
    for line in build_warnings(paths.stats):
        log.warning(f"{PROG} build: {line}")
    return 0


def family_folders(args: argparse.Namespace) -> tuple[tuple[Path, ...], bool]:
    """build: the --families folders (absolute: the stages run from the build folder's parent too) and --families-only."""
    sources = sources_from_arguments(args)
    if sources is None:
        return (), False
    try:
        load_families(sources)  # the questions stage's check, before anything is rendered
    except FamilyError as error:
        raise UsageError(f"bad family files: {error}") from None
    return tuple(folder.resolve() for folder in sources.folders), not sources.shipped


def build_warnings(stats: Path) -> list[str]:
    """One line per MERA rule the build's items do not meet (from its stats.json)."""
    from dataset.mera import unmet_rules
    from ruclevr.io import read_json

    if not stats.exists():
        return []
    return unmet_rules(read_json(stats)["statistics"].get("mera_rules", []))
