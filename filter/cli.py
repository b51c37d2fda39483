"""``python -m filter``: keep the acceptable Russian questions, report the rest."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from filter.backends import BACKENDS, make_scorer
from filter.pipeline import BatchFailures, FilterJob, merge_shards, run_filter
from filter.rucola import DEFAULT_MAX_LENGTH, DEFAULT_MODEL, DEVICES, RucolaOptions
from filter.settings import FilterSettings
from ruclevr.cli import (
    ArgumentParser,
    add_common_options,
    configure_logging,
    output_path,
    positive_int,
    probability,
    run_cli,
    stage_logger,
)
from ruclevr.io import hold_stage_output
from ruclevr.paths import check_not_an_input, check_output_location, check_own_output
from ruclevr.shards import SHARD_SPEC_HELP, merge_target, parse_shard
from ruclevr.text_farm import TextStage, add_text_farm_arguments, run_text_stage

log = stage_logger("filter")
PROG = "python -m filter"
TEXT_STAGE = TextStage("filter", PROG, lambda out: main(["merge", "--out", str(out)]))


def build_parser() -> ArgumentParser:
    parser = ArgumentParser(
        prog=PROG,
        description=(
            "Score each Russian question (question_ru) for acceptability, keep those with "
            "score >= threshold, write the rejected ones and a report beside --out. Scores are saved "
            "as they are computed (OUT.scores.sqlite), so a rerun resumes and never scores a text twice."
        ),
    )
    add_common_options(parser)
    parser.add_argument("--in", dest="input", required=True, type=Path, metavar="PATH",
                        help="questions in Russian: the output of python -m translate")
    parser.add_argument("--out", required=True, type=output_path, metavar="PATH",
                        help="kept questions (JSON); OUT.rejected.jsonl and OUT.report.json are written beside it")
    parser.add_argument("--backend", choices=BACKENDS, default="morph",
                        help="rucola: RuCoLA classifier (transformers; downloads the model unless cached or local); "
                             "morph: offline pymorphy3 checks (placeholders, Latin, unknown words, agreement, "
                             "numerals, prepositions); none: keep everything (default: morph, offline)")
    parser.add_argument("--threshold", type=probability, default=None,
                        help="keep items whose score >= this, in [0, 1] (default: 0.5 for rucola, "
                             "1.0 for morph, meaning any problem rejects; 0 for none)")
    parser.add_argument("--batch-size", type=positive_int, default=32,
                        help="questions scored together (rucola: one padded forward pass) (default: 32)")
    parser.add_argument("--overwrite", action="store_true",
                        help="discard this backend's saved scores and score every question again")
    parser.add_argument("--shard", default=None, metavar="SPEC",
                        help=f"filter only one shard of the scenes: {SHARD_SPEC_HELP}; writes OUT.shard-I-of-N.json and its "
                             "files, and 'python -m filter merge --out OUT' then writes OUT's files, the same bytes as one run")
    add_text_farm_arguments(parser)
    rucola = parser.add_argument_group("rucola backend")
    rucola.add_argument("--model", default=DEFAULT_MODEL,
                        help=f"hub id or local folder of a sequence classifier (default: {DEFAULT_MODEL})")
    rucola.add_argument("--revision", default=None,
                        help="hub branch, tag or commit of --model, e.g. one with safetensors weights (default: main)")
    rucola.add_argument("--device", choices=DEVICES, default="auto",
                        help="auto: CUDA when available, else CPU; cuda fails if there is none (default: auto)")
    rucola.add_argument("--acceptable-label", default=None, metavar="INDEX|NAME",
                        help="output class whose probability is the score (default: the label the model config "
                             "names 'acceptable', else index 1 as in ruRoBERTa-large-rucola)")
    rucola.add_argument("--max-length", type=positive_int, default=DEFAULT_MAX_LENGTH,
                        help=f"truncate inputs to this many tokens, at most the model's limit (default: {DEFAULT_MAX_LENGTH})")
    rucola.add_argument("--local-files-only", action="store_true",
                        help="never download: use the local folder or the Hugging Face cache only")
    rucola.add_argument("--require-safetensors", action="store_true",
                        help="refuse pickle weights (pytorch_model.bin); without it safetensors are preferred")
    rucola.add_argument("--threads", type=positive_int, default=None,
                        help="CPU threads torch may use (default: torch's choice, one per core); "
                             "fewer is faster on a machine other jobs share")
    return parser


def _main(argv: Sequence[str] | None) -> int:
    args = build_parser().parse_args(argv)
    settings = settings_from_args(args)
    configure_logging(settings.verbosity)
    check_filter_paths(settings)
    on_ray = run_text_stage(args, argv or [], TEXT_STAGE)
    if on_ray is not None:
        return on_ray
    return run(settings)


def settings_from_args(args: argparse.Namespace | Sequence[str]) -> FilterSettings:
    """The settings a command line (parsed or not) gives the filter."""
    if not isinstance(args, argparse.Namespace):
        args = build_parser().parse_args(args)
    options = RucolaOptions(
        model=args.model,
        revision=args.revision,
        device=args.device,
        max_length=args.max_length,
        acceptable_label=args.acceptable_label,
        local_files_only=args.local_files_only,
        require_safetensors=args.require_safetensors,
        threads=args.threads,
    )
    return FilterSettings(input=args.input, out=args.out, backend=args.backend, threshold=args.threshold,
                          batch_size=args.batch_size, overwrite=args.overwrite, shard=args.shard, rucola=options,
                          verbosity=args.verbosity)


def check_filter_paths(settings: FilterSettings) -> None:
    check_output_location(settings.out, "file", "--out")
    check_not_an_input(settings.out, {"--in": settings.input})
    check_own_output(settings.out, "python -m filter", lambda info: info.get("stage") == "filter")


def run(settings: FilterSettings) -> int:
    """One filter run (its output held while it writes); the exit status."""
    check_filter_paths(settings)
    with hold_stage_output(settings.out, "file", shared=settings.shard is not None):
        return filter_into(settings)


def filter_into(settings: FilterSettings) -> int:
    """The filter run, once its output is held."""
    shard = parse_shard(settings.shard, os.environ) if settings.shard is not None else None
    job = FilterJob(settings.input, settings.out, settings.threshold, settings.batch_size, settings.overwrite,
                    settings.verbosity >= 0, shard)
    try:
        result = run_filter(job, lambda: make_scorer(settings.backend, settings.rucola))
    except BatchFailures as failures:
        for failure in failures.failures:
            log.error(f"{PROG}: failed: {failure}")
        log.error(f"{PROG}: finished batches are saved in the score file; rerun to retry the rest")
        return 1
    log.info(f"{PROG}: kept {result.kept} of {result.total} questions ({result.rejected} rejected, "
        f"{result.scored} scored now) -> {result.paths.kept}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["merge"]:
        return run_cli(merge_main, argv[1:], prog=f"{PROG} merge")
    return run_cli(_main, argv, prog=PROG)


def merge_main(argv: Sequence[str] | None) -> int:
    out = merge_target(argv, f"{PROG} merge", "of python -m filter --shard I/N (OUT.shard-I-of-N.json, .rejected.jsonl, .report.json)")
    result = merge_shards(out)
    log.info(f"{PROG}: merged shards: kept {result.kept} of {result.total} questions -> {result.paths.kept}")
    return 0
