"""``python -m dataset COMMAND``: build, export, hf, stats, evaluate, submission, augment, pairs, gallery, annotate, seed, leak-check.

Every command reads files and writes files atomically; bad input ends with one line on stderr
and exit status 2. ``families validate`` checks family files as every stage reads them, above the
stages (docs/architecture.md).
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path

from dataset.annotate import add_annotate_parser, command_annotate
from dataset.augment import add_rerender_options
from dataset.build_cli import add_build_parser, add_contact_option, add_export_options, command_build
from dataset.families import add_families_parser, command_families
from dataset.pairs import add_pairs_parser, command_pairs
from dataset.publish import (
    MARK_FILE,
    add_submission_parser,
    add_watermark_options,
    command_submission,
    hf_copies,
    watermark_from_args,
    write_public_export,
)
from dataset.releases import add_leak_check_parser, add_seed_parser, check_no_seed_in, command_leak_check, command_seed
from filter import BACKENDS as FILTER_BACKENDS
from questions import add_family_arguments, sources_from_arguments
from ruclevr import __version__
from ruclevr.cli import (
    ArgumentParser,
    UsageError,
    add_common_options,
    add_renamed_argument,
    configure_logging,
    output_path,
    positive_int,
    probability,
    run_cli,
    stage_logger,
)
from ruclevr.cli import seed as seed_type
from ruclevr.io import hold_output_folder
from ruclevr.paths import (
    check_apart_from,
    check_not_an_input,
    check_not_another_export,
    check_output_location,
    check_own_output,
    check_real_folders,
)
from ruclevr.secret_seed import add_seed_file_option, apply_seed_file

PROG = "python -m dataset"  # also dataset.build_cli.PROG
log = stage_logger("dataset")


def add_export_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "export", help="filtered Russian questions → MERA ruCLEVR items (shots and test)",
        description="Write MERA's layout: OUT/shots.json and OUT/test.json ({\"data\": [items]}), "
                    "OUT/samples/*.png (the images they use) and OUT/provenance.json (how each item was made).")
    add_common_options(parser)
    parser.add_argument("--questions", type=Path, required=True,
                        help="Russian questions, normally the filter stage's output (questions_ru_kept.json)")
    parser.add_argument("--scenes", type=Path, required=True, help="the render stage's scenes.json")
    parser.add_argument("--images", type=Path, default=None,
                        help="folder of the rendered images; default: images/ beside the scenes file")
    parser.add_argument("--out", type=output_path, required=True, help="export folder (created)")
    add_export_options(parser)
    parser.add_argument("--provenance", action="append", default=[], metavar="NAME=FILE",
                        help="another stage's output whose info record goes into the export (and the card); "
                             "repeatable, e.g. --provenance translate=questions_ru.json")
    add_watermark_options(parser)
    parser.add_argument("--overwrite", action="store_true", help="export again even if OUT/provenance.json exists")


def add_hf_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "hf", help="MERA items → Hugging Face parquet copy with a generated README card",
        description="Write OUT/data/{shots,test}-00000-of-00001.parquet (images embedded) and OUT/README.md.")
    add_common_options(parser)
    add_renamed_argument(parser, "--data", "--mera", type=Path, required=True,
                         help="the export folder (MERA's shots.json/test.json), a build folder, or a legacy ruclevr.json")
    parser.add_argument("--out", type=output_path, required=True, help="folder for the copy (created)")
    parser.add_argument("--license", default="cc-by-4.0", help="licence id written in the card; default cc-by-4.0")
    add_contact_option(parser)
    parser.add_argument("--rejected", type=Path, default=None,
                        help="the filter's .rejected.jsonl, so the card's score histogram shows rejected questions too")
    parser.add_argument("--seed-file", type=Path, default=None, metavar="PATH",
                        help="the secret seed the data was built with: refuse to write a copy any file of which would "
                             "hold it (decimal or hexadecimal)")
    add_watermark_options(parser)
    parser.add_argument("--overwrite", action="store_true", help="write again even if OUT/README.md exists")


def add_stats_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "stats", help="answer distributions per question type and family, objects per scene, degenerate shares, "
        "majority baselines, MERA's rules",
        description="Print statistics of an exported dataset; with --out also write them as JSON.")
    add_common_options(parser)
    add_renamed_argument(parser, "--data", "--mera", type=Path, required=True,
                         help="the export folder (MERA's shots.json/test.json), a build folder, or a legacy ruclevr.json")
    parser.add_argument("--out", type=output_path, default=None, help="write the statistics to this JSON file")


def add_evaluate_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "evaluate", help="exact match of predictions, and blind baselines",
        description="Score predictions as MERA's published ruCLEVR task does (lm-eval's exact_match with ignore_case "
                    "and ignore_punctuation on the whole reply: the headline), and beside it, labelled, the MERA Multi "
                    "paper's «ОТВЕТ»-split EM and the newer task files' compute_exact EM, overall and per question "
                    "type, next to blind baselines (majority answer per question type and per family).")
    add_common_options(parser)
    parser.add_argument("--data", type=Path, required=True,
                        help="build folder, export folder, or a legacy ruclevr.json")
    parser.add_argument("--predictions", type=Path, default=None,
                        help='JSON lines {"id": <meta.id>, "prediction": "<answer>"}, MERA\'s submission JSON or zip, '
                             "or lm-eval's logged samples; without it only the baselines are shown")
    parser.add_argument("--split", choices=("test", "shots"), default="test", help="split to score; default test")
    parser.add_argument("--judge", default=None, metavar="MODEL",
                        help="also score each prediction with this answer-judge classifier (a local folder or a hub "
                             "id, e.g. MERA-evaluation/MERA_Answer_judge; needs the [ml] extra) and report the judge "
                             "score JS and MERA's (EM + JS) / 2")
    parser.add_argument("--out", type=output_path, default=None, help="write the results to this JSON file")


def add_augment_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "augment", help="colour-swap augmentation: recolour scene graphs, re-render, re-answer, re-filter",
        description="Recolour objects in the scene graphs (a fixed --map or a seeded --random permutation per scene), "
                    "render each scene again from its record (same geometry, camera, lights and seed), carry every "
                    "question over with its colour words mapped and its answer re-computed, drop questions that "
                    "became ill-posed, realise them in Russian and run the acceptability filter. Rerunning the same "
                    "command resumes; OUT/questions_ru_kept.json and OUT/scenes.json go straight into export.")
    add_common_options(parser)
    parser.add_argument("--scenes", type=Path, required=True, help="the render stage's scenes.json")
    parser.add_argument("--questions", type=Path, required=True,
                        help="questions about those scenes: the questions stage's questions.json (or any later "
                             "stage's file; only the English program, family and parameters are read)")
    swap = parser.add_mutually_exclusive_group(required=True)
    swap.add_argument("--map", dest="color_map", metavar="FROM=TO,...",
                      help="fixed colour map for every scene, e.g. blue=red,cyan=purple (colours from the vocabulary; "
                           "colours not named stay as they are)")
    swap.add_argument("--random", action="store_true",
                      help="per scene, a random permutation of all colours drawn from --seed and the scene index")
    parser.add_argument("--out", type=output_path, required=True, help="output folder (created); see docs for its layout")
    parser.add_argument("--seed", type=seed_type, default=0,
                        help="seed of the random permutations, of English synonyms and of the Russian realiser; default 0")
    add_seed_file_option(parser)
    parser.add_argument("--n", type=positive_int, default=None,
                        help="augment only the first N scenes of --scenes (default: all)")
    parser.add_argument("--masks", type=Path, default=None,
                        help="folder of the source masks, to check that each re-render has its source's mask; "
                             "default: masks/ beside --scenes (skipped when absent)")
    parser.add_argument("--prefix", default="ruclevr_swap",
                        help="file name prefix of the augmented images, masks and scene files; default ruclevr_swap")
    add_family_arguments(parser, recorded=True)
    parser.add_argument("--yo", choices=("e", "yo"), default="e",
                        help="ё spelling of Russian questions and answers: e (as MERA writes, default) or yo")
    parser.add_argument("--filter-backend", choices=FILTER_BACKENDS, default="morph",
                        help="acceptability filter: morph (offline, default), rucola, none")
    parser.add_argument("--threshold", type=probability, default=None,
                        help="keep items whose filter score >= this (default: the backend's own)")
    parser.add_argument("--filter-model", default=None,
                        help="rucola only: hub id or local folder of the classifier (default: the filter's)")
    parser.add_argument("--batch-size", type=positive_int, default=32, help="questions scored together; default 32")
    add_rerender_options(parser, "the recoloured scenes")
    parser.add_argument("--overwrite", action="store_true",
                        help="delete this folder's earlier augmentation and start over")


def add_gallery_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "gallery", help="a static HTML page of images with their questions, answers and scores, and plots",
        description="Write a static page: per image a thumbnail and its questions in English and Russian with "
                    "answers, question type, family and acceptability score, filterable by type and family; plus "
                    "the answer, objects-per-scene and score plots. Every piece of text is escaped.")
    add_common_options(parser)
    parser.add_argument("--data", type=Path, required=True,
                        help="a build folder, an export folder (or a legacy ruclevr.json), or a questions file with "
                             "question_ru (e.g. augment's questions_ru_kept.json)")
    parser.add_argument("--images", type=Path, default=None,
                        help="for a questions file: folder of its images; default images/ beside it, or "
                             "render/images/ beside it in a build folder")
    parser.add_argument("--out", type=output_path, required=True,
                        help="the page to write, e.g. gallery.html (thumbnails and plots go to gallery_files/ beside it)")
    parser.add_argument("--per-page", type=positive_int, default=50, help="images shown per page; default 50")
    parser.add_argument("--thumb-size", type=positive_int, default=240,
                        help="thumbnail width in pixels (the height keeps the aspect ratio); default 240")
    parser.add_argument("--max-images", type=positive_int, default=None,
                        help="show only the first N images (default: all)")


def build_parser() -> ArgumentParser:
    parser = ArgumentParser(prog=PROG, description="Make, export, describe and score ruCLEVR-format datasets.")
    parser.add_argument("--version", action="version", version=f"ruclevr {__version__}")  # also on each command
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_build_parser(commands)
    add_export_parser(commands)
    add_hf_parser(commands)
    add_stats_parser(commands)
    add_evaluate_parser(commands)
    add_submission_parser(commands)
    add_augment_parser(commands)
    add_pairs_parser(commands)
    add_gallery_parser(commands)
    add_annotate_parser(commands)
    add_seed_parser(commands)
    add_leak_check_parser(commands)
    add_families_parser(commands)
    return parser


def parse_provenance(values: Sequence[str]) -> dict[str, Path]:
    files = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name or not path:
            raise UsageError(f"--provenance {value!r} must look like NAME=FILE")
        files[name] = Path(path)
    return files


def command_export(args: argparse.Namespace) -> int:
    from dataset.mera import PROVENANCE_NAME, ExportSettings, PromptSet, export_dataset

    prompts = PromptSet.from_paths(args.prompt)
    apply_seed_file(args, "export")
    watermark = watermark_from_args(args)
    provenance = parse_provenance(args.provenance)
    target = args.out / PROVENANCE_NAME
    if target.exists() and not args.overwrite:
        log.info(f"{PROG} export: {target} exists; nothing to do (pass --overwrite to export again)")
        if watermark is not None and not (args.public_out / MARK_FILE).exists():
            print(f"{args.public_out}: public copy, {write_public_export(args.out, args.public_out, watermark)} images watermarked")
        return 0
    info = export_dataset(args.questions, args.scenes, args.out, ExportSettings(args.shots, args.seed, prompts, args.seed_record),
                          images_dir=args.images, provenance_files=provenance)
    counts = info["counts"]
    print(f"{args.out}: {counts['shots']} shots, {counts['test']} test "
          f"(from {counts['input_questions']} questions; dropped {counts['dropped_duplicates']} duplicates, "
          f"{counts['dropped_sharing_shot_image']} on shot images, "
          f"{counts['dropped_sharing_shot_question']} repeating a shot question)")
    if watermark is not None:
        print(f"{args.public_out}: public copy, {write_public_export(args.out, args.public_out, watermark)} images watermarked")
    return 0


def command_hf(args: argparse.Namespace) -> int:
    from dataset.mera import stream_document
    from dataset.publish import CARD_NAME, check_contact, check_hf_inputs, write_card_plots, write_hf_copy

    contact = check_contact(args.contact)
    document = stream_document(args.data)
    survey = check_hf_inputs(document, args.license)
    if args.seed_file is not None:
        check_no_seed_in(document.folder, args.seed_file)
    copies = hf_copies(args, document.folder)
    if all((copy.out / CARD_NAME).exists() for copy in copies) and not args.overwrite:
        log.info(f"{PROG} hf: {args.out / CARD_NAME} exists; nothing to do (pass --overwrite to write again)")
        return 0
    for copy in copies:
        survey.card.copy = copy.notice
        plots = write_card_plots(survey.plots, copy.out, args.rejected)
        result = write_hf_copy(document, copy.out, args.license, plots=plots, show_progress=True, survey=survey,
                               transform=copy.transform, contact=contact)
        sizes = ", ".join(f"{split['name']} {split['num_examples']}" for split in result["dataset_info"]["splits"])
        print(f"{copy.out}: {copy.label()}{sizes}; load with datasets.load_dataset({str(copy.out)!r})")
    return 0


def command_stats(args: argparse.Namespace) -> int:
    from dataset.mera import compute_statistics, format_quality, format_statistics, stream_document
    from ruclevr.io import atomic_write_json

    document = stream_document(args.data)
    statistics = compute_statistics(document)
    print(format_statistics(statistics))
    print()
    print(format_quality(statistics))
    if args.out is not None:
        info = {"stage": "dataset.stats", "version": __version__, "data": document.path.name}
        atomic_write_json(args.out, {"info": info, "statistics": statistics})
    return 0


def command_evaluate(args: argparse.Namespace) -> int:
    from dataset.evaluation import dataset_ids, format_results, read_predictions
    from dataset.evaluation import evaluate_predictions as evaluate
    from dataset.mera import stream_document
    from ruclevr.jsonstream import write_json

    if args.judge is not None and args.predictions is None:
        raise UsageError("--judge scores predictions; pass --predictions FILE too")
    document = stream_document(args.data)
    predictions = read_predictions(args.predictions, dataset_ids(document)) if args.predictions is not None else None
    result = evaluate(document, args.split, predictions)
    print(format_results(result, args.split))
    if args.judge is not None and predictions is not None:
        from dataset.evaluation import format_judge, judge_predictions

        exact = {row["id"]: row["exact_match"] for row in result["predictions"]["items"]}
        result["predictions"]["judge"] = judge_predictions(document, args.split, predictions, exact, args.judge)
        print(format_judge(result["predictions"]["judge"]))
    if args.out is not None:
        info = {
            "stage": "dataset.evaluate",
            "version": __version__,
            "data": document.path.name,
            "predictions": args.predictions.name if args.predictions is not None else None,
            "split": args.split,
            "metric": "exact_match: MERA's published task (lm-eval exact_match, ignore_case, ignore_punctuation, the "
                      "whole reply); other_rules: answer_split (the paper's «ОТВЕТ» split), compute_exact (transformers, "
                      "MERA's custom_metrics.py)" + (f"; judge_score by {args.judge}" if args.judge else ""),
        }
        write_json(args.out, {"info": info, "results": result})
    return 0


def command_augment(args: argparse.Namespace) -> int:
    from dataset.augment import AugmentSettings, AugmentSources, ColorSwap, augment, parse_color_map
    from ruclevr.paths import check_name_part

    apply_seed_file(args, "augment")
    swap = ColorSwap(parse_color_map(args.color_map) if args.color_map else None, args.seed, args.seed_record)
    settings = AugmentSettings(
        swap=swap, n=args.n, prefix=check_name_part(args.prefix, "--prefix"), families=sources_from_arguments(args), yo=args.yo,
        filter_backend=args.filter_backend, threshold=args.threshold, filter_model=args.filter_model,
        batch_size=args.batch_size, device=args.device, workers=args.workers, threads=args.threads,
    )
    result = augment(AugmentSources(args.scenes, args.questions, args.masks), args.out, settings, args.overwrite)
    if result.failures:
        for failure in result.failures:
            log.error(f"{PROG} augment: failed: {failure}")
        log.error(f"{PROG} augment: finished scenes are kept; rerun the same command to retry the rest")
        return 1
    counts = result.counts
    print(f"{args.out}: {counts['augmented_scenes']} of {counts['source_scenes']} scenes recoloured; "
          f"{counts['well_posed']} of {counts['source_questions_on_augmented_scenes']} questions still well posed, "
          f"{counts['realised_in_russian']} in Russian, {counts['kept_by_filter']} kept by the filter "
          f"-> {result.paths.kept if result.paths else args.out}")
    return 0


def command_gallery(args: argparse.Namespace) -> int:
    from dataset.publish import GallerySettings, write_gallery

    settings = GallerySettings(per_page=args.per_page, thumb_size=args.thumb_size, max_images=args.max_images)
    summary = write_gallery(args.data, args.out, settings, images_dir=args.images)
    print(f"{args.out}: {summary['images']} images, {summary['questions']} questions, {summary['plots']} plots")
    return 0


#: What each command's --out names: a folder it fills, or a file it writes.
OUTPUT_KINDS = {"build": "dir", "export": "dir", "hf": "dir", "stats": "file", "evaluate": "file", "augment": "dir", "pairs": "dir",
                "gallery": "file", "annotate": "dir", "seed": "file", "submission": "file"}

COMMANDS = {
    "build": command_build,
    "export": command_export,
    "hf": command_hf,
    "stats": command_stats,
    "evaluate": command_evaluate,
    "submission": command_submission,
    "augment": command_augment,
    "pairs": command_pairs,
    "gallery": command_gallery,
    "annotate": command_annotate,
    "seed": command_seed,
    "leak-check": command_leak_check,
    "families": command_families,
}


def _main(argv: Sequence[str] | None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as stop:  # --help, --version, or a one-line argparse error (status 2)
        return stop.code if isinstance(stop.code, int) else 0
    configure_logging(args.verbosity)
    if getattr(args, "out", None) is not None:
        check_output_location(args.out, OUTPUT_KINDS[args.command])
        check_output_of(args)
        check_output_folders_of(args)
        if OUTPUT_KINDS[args.command] == "dir":
            with hold_output_folder(args.out), hold_public_folder(args):
                return COMMANDS[args.command](args)
    return COMMANDS[args.command](args)


#: The folders each command fills and cleans inside its output (never through a symbolic link).
OUTPUT_SUBFOLDERS = {"export": ("samples",), "hf": ("data", "plots"), "augment": ("images", "masks", "scenes"),
                     "pairs": ("images", "masks", "scenes"), "annotate": ("images", "pages", "label_studio"),
                     "build": ("render/images", "render/masks", "render/scenes", "mera/samples", "hf/data", "hf/plots")}


def check_output_folders_of(args: argparse.Namespace) -> None:
    """The folders a command fills are real folders of the output, an output folder other than export's
    holds no export, and ``--public-out`` lies apart from ``--out`` and every input, holds no export of
    its own, and no private copy (checked before any work)."""
    subfolders = OUTPUT_SUBFOLDERS.get(args.command, ())
    if OUTPUT_KINDS[args.command] == "dir":
        check_real_folders(args.out, subfolders)
        if args.command != "export":  # export replaces its own export (another one's with --overwrite)
            check_not_another_export(args.out, "--out", None)
    check_outside_the_export_read(args)
    public = getattr(args, "public_out", None)
    if public is None:
        return
    check_output_location(public, "dir", "--public-out")
    inputs = {"--out": args.out, **input_paths_of(args)}
    check_apart_from(public, inputs, "--public-out")
    check_real_folders(public, subfolders, "--public-out")
    check_not_another_export(public, "--public-out", MARK_FILE, args.out)


def check_outside_the_export_read(args: argparse.Namespace) -> None:
    """The folder ``hf`` or ``annotate`` writes (``gallery``: its page's ``_files`` folder) neither is,
    contains nor lies inside the export folder ``--data`` names: a copy or a report written into an
    export would be published with it (``hf --data B/mera --out B/mera/hf``)."""
    from dataset.mera import locate_document

    if args.command not in ("hf", "annotate", "gallery") or getattr(args, "data", None) is None:
        return
    try:
        export = locate_document(args.data)
    except UsageError:
        return  # the command itself says so, in its own words
    if export.is_dir() and args.command == "gallery":
        page = Path(args.out)
        check_apart_from(page.with_name(f"{page.stem}_files"), {"--data's export folder": export}, "--out's folder")
    elif export.is_dir():
        check_apart_from(args.out, {"--data's export folder": export})


def input_paths_of(args: argparse.Namespace) -> dict[str, Path | None]:
    """The files and folders a command reads, by the flag that names them."""
    if args.command == "export":
        images = args.images if args.images is not None else args.scenes.parent / "images"
        return {"--questions": args.questions, "--scenes": args.scenes, "--images": images,
                **{f"--provenance {name}": path for name, path in parse_provenance(args.provenance).items()}}
    return {"--data": getattr(args, "data", None)}


@contextlib.contextmanager
def hold_public_folder(args: argparse.Namespace) -> Iterator[None]:
    """The folder lock on ``--public-out`` too, when given."""
    public = getattr(args, "public_out", None)
    if public is None:
        yield
        return
    with hold_output_folder(public, "--public-out"):
        yield


#: The stage of each command that writes one file, as its ``info.stage`` names it.
FILE_STAGES = {"stats": "dataset.stats", "evaluate": "dataset.evaluate"}


def check_output_of(args: argparse.Namespace) -> None:
    """A file output is none of the run's inputs and, if it exists, a file the same command wrote."""
    if args.command == "submission":
        check_submission_output(args.out, args.samples)
    if args.command in ("augment", "pairs"):  # OUT/scenes.json, images/, masks/ ... must not land on the sources
        check_apart_from(args.out, {"--scenes": args.scenes, "--questions": args.questions, "--masks": args.masks})
    stage = FILE_STAGES.get(args.command)
    if stage is None:
        return
    data = args.data
    check_not_an_input(args.out, {"--predictions": getattr(args, "predictions", None), "--data": data,
                                  **{f"--data's {name}": data / name for name in ("test.json", "shots.json", "provenance.json")}})
    check_own_output(args.out, f"{PROG} {args.command}", lambda info: info.get("stage") == stage)


def check_submission_output(out: Path, samples: Path) -> None:
    """The zip lies apart from lm-eval's logs and, if it exists, is a submission zip (never a dataset's file)."""
    from dataset.evaluation import is_submission_zip

    check_apart_from(out, {"--samples": samples})
    if out.exists() and not is_submission_zip(out):
        raise UsageError(f"--out {str(out)!r} exists and is not a submission zip; it may be an input or another "
                         "stage's file: remove it yourself or name another file")


def main(argv: Sequence[str] | None = None) -> int:
    return run_cli(_main, argv, prog=PROG)
