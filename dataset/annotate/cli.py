"""``python -m dataset annotate export|import``: the argument parsing, wired into :mod:`dataset.cli`."""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path

from dataset.annotate.aggregate import METHODS
from dataset.annotate.crowd_kit import CROWD_KIT_METHODS
from ruclevr.cli import UsageError, add_common_options, non_negative_int, output_path, positive_int, probability
from ruclevr.cli import seed as seed_type
from ruclevr.io import hold_output_folder
from ruclevr.paths import check_apart_from, check_output_location, check_real_folders

SPLIT_CHOICES = ("test", "shots")
AGGREGATE_CHOICES = METHODS + CROWD_KIT_METHODS


def id_list(text: str) -> tuple[int, ...]:
    """argparse type: comma-separated item ids."""
    try:
        ids = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be comma-separated item ids, got {text}") from None
    if not ids:
        raise argparse.ArgumentTypeError("needs at least one item id")
    return ids


def add_annotate_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "annotate", help="tasks for people (Label Studio, crowd TSV, an offline page) and their answers back",
        description="export: write annotation tasks with gold answers hidden; import: read people's answers and "
                    "write the human baseline, agreement, annotator accuracy and disputed items.")
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    export = actions.add_parser(
        "export", help="write Label Studio tasks, a crowd TSV and an offline page for the items of a split",
        description="Write TASKS/label_studio/{tasks.json,config.xml}, TASKS/crowd.tsv, TASKS/assignments.tsv, "
                    "TASKS/annotate.html (self-contained, offline) and TASKS/images/.")
    add_common_options(export)
    export.add_argument("--data", type=Path, required=True, help="build folder, export folder, or ruclevr.json")
    export.add_argument("--out", type=output_path, required=True, help="tasks folder (created)")
    export.add_argument("--split", choices=SPLIT_CHOICES, default="test", help="split people answer; default test")
    export.add_argument("--overlap", type=positive_int, default=3, help="answers wanted per item; default 3")
    export.add_argument("--annotators", type=positive_int, default=None,
                        help="annotators to spread the items over (each item goes to --overlap of them); "
                             "default: as many as --overlap, so everybody answers everything")
    export.add_argument("--controls", type=non_negative_int, default=None,
                        help="control items (known answers) drawn from the other split and given to every "
                             "annotator; default 5, or all the other split has if fewer")
    export.add_argument("--control-ids", type=id_list, default=None, metavar="ID,ID,...",
                        help="use these items (of the other split) as controls instead of a draw")
    export.add_argument("--image-url-prefix", default="",
                        help="prefix of crowd.tsv's image column, e.g. the URL where TASKS/ is hosted; default none "
                             "(paths relative to TASKS)")
    export.add_argument("--page-per-annotator", action="store_true",
                        help="also write TASKS/pages/<annotator>.html holding only that annotator's tasks (smaller "
                             "pages when many annotators share the items)")
    export.add_argument("--seed", type=seed_type, default=0,
                        help="seed of the control draw, the task order and each annotator's order; default 0")

    imported = actions.add_parser(
        "import", help="people's answers → human baseline, agreement, annotators, disputed items",
        description="Read Label Studio JSON exports, crowd TSVs and the page's JSON files; write REPORT/human.json "
                    "(the human baseline by MERA's rule, at least 3 of 5 answers agreeing, every item counted; the "
                    "plurality or --aggregate answer beside it), REPORT/disputed.html, REPORT/human_baseline.md (the "
                    "card section) and REPORT/answers_crowd_kit.csv (every answer as crowd-kit's task, worker, label).")
    add_common_options(imported)
    imported.add_argument("--data", type=Path, required=True, help="the dataset the tasks were exported from")
    imported.add_argument("--answers", type=Path, nargs="+", required=True, metavar="FILE",
                          help="answer files, any mix of the three formats")
    imported.add_argument("--out", type=output_path, required=True, help="report folder (created)")
    imported.add_argument("--split", choices=SPLIT_CHOICES, default="test",
                          help="the split people answered (answers to other items are controls); default test")
    imported.add_argument("--min-agreement", type=probability, default=0.0,
                          help="items whose share of answers equal to the majority is below this are disputed; "
                               "default 0 (only a majority differing from gold, or a tie)")
    imported.add_argument("--min-control-accuracy", type=probability, default=0.8,
                          help="annotators below this accuracy on control items are flagged; default 0.8")
    imported.add_argument("--exclude-flagged", action="store_true",
                          help="leave the flagged annotators' answers out of every figure")
    imported.add_argument("--write-filtered", type=Path, default=None, metavar="OUT",
                          help="also write a MERA export without the removed items (and the card section in its info)")
    imported.add_argument("--aggregate", choices=AGGREGATE_CHOICES, default="majority",
                          help="how an item's answers become one: the majority (ties give none), Dawid-Skene or GLAD "
                               "(both learn each annotator from the control items), or crowd-kit's Dawid-Skene or "
                               "GLAD (the optional extra [crowd]); every own method's baseline is reported in "
                               "human.json either way; default majority")
    imported.add_argument("--jglue", type=positive_int, default=None, metavar="M",
                          help="with --write-filtered: keep an item only if at least M of its answers equal gold "
                               "(JGLUE's rule) instead of dropping the disputed items")


def command_annotate(args: argparse.Namespace) -> int:
    from dataset.mera import load_document

    document = load_document(args.data)
    if args.action == "export":
        return export_command(document, args)
    return import_command(document, args)


#: The most annotators (or answers per item) one export spreads the items over: each gets a line of
#: assignments.json (and a page with --page-per-annotator).
MAX_ANNOTATORS = 10_000


def export_command(document, args: argparse.Namespace) -> int:
    from dataset.annotate.tasks import ExportSettings, export_tasks

    for flag, value in (("--annotators", args.annotators), ("--overlap", args.overlap)):
        if value is not None and value > MAX_ANNOTATORS:
            raise UsageError(f"{flag} {value} is more than the limit of {MAX_ANNOTATORS}")

    settings = ExportSettings(split=args.split, overlap=args.overlap, annotators=args.annotators,
                              controls=args.controls, control_ids=args.control_ids, seed=args.seed,
                              image_url_prefix=args.image_url_prefix, page_per_annotator=args.page_per_annotator)
    record = export_tasks(document, args.out, settings)
    print(f"{args.out}: {record['counts']['items']} items and {record['settings']['controls']} controls for "
          f"{record['settings']['annotators']} annotators, {record['settings']['overlap']} answers per item")
    return 0


def check_filtered_output(filtered: Path, data: Path, args: argparse.Namespace) -> None:
    """``--write-filtered`` is checked like ``--out``: writable, apart from the dataset, ``--out`` and the
    answers, its ``samples/`` a real folder, and no export there but an earlier filtered copy."""
    from ruclevr.jsonstream import DocumentError, JsonDocument

    check_output_location(filtered, "dir", "--write-filtered")
    if filtered.resolve() == data.resolve():
        raise UsageError(f"--write-filtered {str(filtered)!r} is the dataset's own folder; name another folder")
    answers = {f"--answers {path}": path for path in args.answers}
    check_apart_from(filtered, {"--data": data, "--out": args.out, **answers}, "--write-filtered")
    check_real_folders(filtered, ["samples"], "--write-filtered")
    record = filtered / "provenance.json"
    if record.is_file():
        try:
            info = JsonDocument(record, "provenance").info()
        except (DocumentError, UnicodeDecodeError, ValueError):
            info = None
        if not isinstance(info, dict) or "human_review" not in info:
            raise UsageError(f"--write-filtered {str(filtered)!r} holds an export that is not a filtered copy; "
                             "writing it would replace that export: choose another folder")


def import_command(document, args: argparse.Namespace) -> int:
    from dataset.annotate.answers import read_answers
    from dataset.annotate.report import ImportSettings, import_answers

    if args.jglue is not None and args.write_filtered is None:
        raise UsageError("--jglue chooses what --write-filtered keeps; pass --write-filtered OUT too")
    if args.aggregate.startswith("crowd-kit-"):
        from dataset.annotate.crowd_kit import crowd_kit_modules

        crowd_kit_modules()  # one line naming the extra, before anything is read or written
    if args.write_filtered is not None:
        check_filtered_output(args.write_filtered, document.folder, args)
    settings = ImportSettings(split=args.split, min_agreement=args.min_agreement,
                              min_control_accuracy=args.min_control_accuracy, exclude_flagged=args.exclude_flagged,
                              jglue=args.jglue, aggregate=args.aggregate)
    answers = read_answers(args.answers)
    held = hold_output_folder(args.write_filtered, "--write-filtered") if args.write_filtered is not None \
        else contextlib.nullcontext()
    with held:
        report = import_answers(document, answers, args.out, settings, args.write_filtered)
    mera = report["human_baseline"]  # MERA's rule
    beside = report["aggregated_baseline"]
    baseline = beside["overall"]
    alpha = report["agreement"]["krippendorff_alpha"]["overall"]
    others = ", ".join(f"{name} {row['exact_match']:.4f}" for name, row in report["baselines"].items())
    print(f"{args.out / 'human.json'}: human baseline ({mera['rule']}) "
          f"{mera['overall']['exact_match']:.4f} on {mera['overall']['total']} items ({mera['no_majority']} without "
          f"a majority); beside it, {beside['method']} exact match {baseline['exact_match']:.4f} on "
          f"{baseline['total']} answered items [{others}]; "
          f"honeypots {report['honeypots']['share_of_answers']:.1%} of the answers; "
          f"Krippendorff's alpha {'undefined' if alpha is None else f'{alpha:.4f}'}; "
          f"{report['items']['disputed']} disputed; flagged annotators: {', '.join(report['flagged_annotators']) or 'none'}"
          + (f"; {args.write_filtered}: {report['items']['removed_by_filter']} items removed"
             if args.write_filtered is not None else ""))
    return 0
