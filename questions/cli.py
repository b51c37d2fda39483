"""``python -m questions``: write questions.json for a scenes file; ``python -m questions validate``: check family files."""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from assets.vocabulary import ATTRIBUTES, load_vocabulary
from questions.families import families_digest, family_files, load_families
from questions.family_sources import FamilySources, add_family_arguments, sources_from_arguments
from questions.generate import CHUNK_SCENES, SceneFailed, SplitWideUnique, generate_chunks
from questions.image_geometry import ImageError, image_placement
from questions.scene_questions import MIX_AXES, Settings, mix_class
from questions.settings import QuestionSettings
from questions.validator import FAMILY_SUFFIXES, FamilyError, validate_files
from ruclevr import __version__
from ruclevr.cli import (
    MAX_SEED,
    ArgumentParser,
    UsageError,
    add_common_options,
    add_renamed_argument,
    configure_logging,
    non_negative_int,
    output_path,
    positive_int,
    run_cli,
    stage_logger,
)
from ruclevr.cli import seed as seed_type
from ruclevr.io import hold_stage_output, is_regular_or_missing, remove_temporaries_of
from ruclevr.jsonstream import (
    DocumentError,
    DocumentWriter,
    JsonDocument,
    checked_items,
    input_error,
)
from ruclevr.names import beside
from ruclevr.paths import check_not_an_input, check_output_location, check_own_output, path_from_output
from ruclevr.records import same_record
from ruclevr.secret_seed import add_seed_file_option, stage_seed
from ruclevr.shards import (
    SHARD_SPEC_HELP,
    Shard,
    consecutive_shards,
    merge_target,
    parse_shard,
    sharded_path,
    written_path,
)
from ruclevr.text_farm import TextStage, add_text_farm_arguments, run_text_stage

log = stage_logger("questions")
PROG = "questions"
TEXT_STAGE = TextStage("questions", PROG, lambda out: main(["merge", "--out", str(out)]))


def main(argv: Sequence[str] | None = None) -> int:
    return run_cli(_main, argv, prog=f"python -m {PROG}")


def _main(argv: Sequence[str] | None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["validate"]:
        return validate_command(arguments[1:])
    if arguments[:1] == ["merge"]:
        return merge_command(arguments[1:])
    return generate_command(arguments)


# -- python -m questions --scenes ... --out ... ------------------------------------------------------


def generation_parser() -> ArgumentParser:
    parser = ArgumentParser(
        prog=f"python -m {PROG}",
        description="Generate English questions with programs and answers for the scenes of a scenes.json file. "
        "Every answer is computed by executing the question's program on its scene graph.",
        epilog="To check family files instead: python -m questions validate FILE_OR_DIR... "
        "(see python -m questions validate --help). To combine shards: python -m questions merge --out OUT.",
    )
    add_common_options(parser)
    add_renamed_argument(parser, "--in", "--scenes", dest="scenes", required=True, type=Path, metavar="PATH",
                         help="scenes.json written by `python -m render` ({info, scenes}).")
    parser.add_argument("--out", required=True, type=output_path, help="questions.json to write ({info, questions}).")
    parser.add_argument("--per-image", type=positive_int, default=10, help="questions per image, at most one per family (default 10).")
    parser.add_argument("--seed", type=seed_type, default=0, help="seed of all random choices; same seed, same file (default 0).")
    add_family_arguments(parser)
    add_seed_file_option(parser)
    parser.add_argument(
        "--budget", type=positive_int, default=Settings.budget,
        help=f"search steps per scene across all families; a hard scene ends with fewer questions instead of stalling (default {Settings.budget}).",
    )
    parser.add_argument(
        "--split-repeats", type=non_negative_int, default=Settings.split_repeats,
        help="how many images of one split may get the same question (same program or same normalised text), within a "
        "balance block (across blocks too with --unique-across-blocks); 0 = no limit "
        f"(default {Settings.split_repeats}: every question of a block is different).",
    )
    parser.add_argument(
        "--checkpoint-every", type=positive_int, default=CHUNK_SCENES,
        help=f"save progress every N scenes under OUT.partial/; a stopped run resumes from there (default {CHUNK_SCENES}).",
    )
    parser.add_argument(
        "--balance-block", type=positive_int, default=Settings.balance_block,
        help="scenes whose answers are balanced together and within which --split-repeats holds; each block is made on its own "
        f"(default {Settings.balance_block}).",
    )
    parser.add_argument(
        "--unique-across-blocks", action="store_true",
        help="hold --split-repeats across balance blocks too: a question an earlier block asked is dropped when the file is "
        "written (fewer questions, since a block cannot ask another instead).",
    )
    parser.add_argument(
        "--shard", default=None, metavar="SPEC",
        help=f"make only one shard of the scenes: {SHARD_SPEC_HELP}; a shard is a contiguous run of whole balance blocks and "
        "writes OUT.shard-I-of-N.json; 'python -m questions merge --out OUT' then writes OUT, the same bytes as one run.",
    )
    parser.add_argument(
        "--mix", default=None, metavar="CLASS=SHARE,...",
        help="the mix of questions to reach, e.g. binary=0.3,count=0.2,colors=0.2,shapes=0.1,materials=0.1,size=0.1 "
        "(shares sum to 1; classes not named get no questions); default: every family in turn.",
    )
    parser.add_argument(
        "--mix-by", choices=MIX_AXES, default="type",
        help="what --mix names: MERA question types (default), family groups, hops (relations in the program: 0, 1, 2, 3), "
        "skills (MERA's names, e.g. 'hypothetical reasoning') or difficulties (reasoning steps: 1, 2, ...).",
    )
    parser.add_argument("--overwrite", action="store_true", help="replace an existing output (and any stopped run's checkpoints).")
    add_text_farm_arguments(parser)
    return parser


def generate_command(argv: Sequence[str]) -> int:
    args = generation_parser().parse_args(argv)
    configure_logging(args.verbosity)
    settings = settings_from_args(args)
    check_question_paths(settings)
    on_ray = run_text_stage(args, argv, TEXT_STAGE)
    if on_ray is not None:
        return on_ray
    return run(settings)


def settings_from_args(args: argparse.Namespace | Sequence[str]) -> QuestionSettings:
    """The settings a command line (parsed or not) gives the questions stage."""
    if not isinstance(args, argparse.Namespace):
        args = generation_parser().parse_args(args)
    return QuestionSettings(
        scenes=args.scenes, out=args.out, per_image=args.per_image, seed=stage_seed(args.seed, args.seed_file, "questions"),
        families=sources_from_arguments(args), budget=args.budget, split_repeats=args.split_repeats,
        checkpoint_every=args.checkpoint_every, balance_block=args.balance_block,
        unique_across_blocks=args.unique_across_blocks, shard=args.shard, mix=args.mix, mix_by=args.mix_by,
        overwrite=args.overwrite, verbosity=args.verbosity,
    )


def check_question_paths(settings: QuestionSettings) -> None:
    check_output_location(settings.out, "file", "--out")
    for written in {settings.out, written_path(settings.out, settings.shard)}:
        check_not_an_input(written, {"--in": settings.scenes})
    check_own_output(settings.out, "python -m questions", lambda info: info.get("stage") == "questions" and "translate" not in info)


def run(settings: QuestionSettings) -> int:
    """One questions run (its output held while it writes); the exit status."""
    check_question_paths(settings)
    with hold_stage_output(settings.out, "file", shared=settings.shard is not None):
        return generate_into(settings)


def generate_into(run_settings: QuestionSettings) -> int:
    """The questions run, once its output is held."""
    sources = run_settings.families or FamilySources()
    families = _load_families(sources)
    scene_count, scenes_info = check_scenes(run_settings.scenes)
    mix = parse_mix(run_settings.mix, run_settings.mix_by, families) if run_settings.mix is not None else ()
    settings = Settings(seed=run_settings.seed.value, per_image=run_settings.per_image, budget=run_settings.budget,
                        split_repeats=run_settings.split_repeats, balance_block=run_settings.balance_block,
                        unique_across_blocks=run_settings.unique_across_blocks, mix=mix, mix_by=run_settings.mix_by)
    record = run_record(run_settings, settings, sources, families, scenes_info)
    shard = parse_shard(run_settings.shard, os.environ) if run_settings.shard is not None else None
    positions = shard_positions(shard, scene_count, settings.balance_block) if shard else range(scene_count)
    out, file_record = run_settings.out, record
    if shard:
        out = sharded_path(run_settings.out, shard)
        file_record = {**record, "shard": {"index": shard.index, "count": shard.count, "first": positions.start, "stop": positions.stop}}
    checkpoints = beside(out, ".partial")
    if out.exists() and not run_settings.overwrite:
        if same_record(_existing_record(out), file_record):
            log.info(f"{PROG}: {out} is up to date")
            return 0
        raise UsageError(f"{out} exists and was made with other settings or inputs; pass --overwrite to replace it")
    if run_settings.overwrite and checkpoints.exists():
        shutil.rmtree(checkpoints)
    remove_temporaries_of(out)  # only its own: shards of the run may be writing beside it
    refusals: Counter[str] = Counter()
    chunks = generate_chunks(
        checked_items(JsonDocument(run_settings.scenes, "scenes"), f"--in: {run_settings.scenes}"), families, settings,
        positions=positions, run_record=file_record, checkpoint_dir=checkpoints,
        chunk_scenes=run_settings.checkpoint_every, progress=run_settings.verbosity >= 0, refusals=refusals,
    )
    try:
        if shard:
            info = write_shard(out, file_record, chunks, len(positions), refusals)
        else:
            questions = (question for chunk in chunks for question in chunk)
            info = write_questions(out, record, settings, questions, scene_count, refusals)
    except SceneFailed as error:
        kept = f"; finished chunks are kept in {checkpoints}" if any(checkpoints.glob("scenes_*.json")) else ""
        log.error(f"{PROG}: failed on {error}{kept}")
        return 1
    shutil.rmtree(checkpoints, ignore_errors=True)
    log.info(f"{PROG}: wrote {info['question_count']} questions for {info['scene_count']} scenes to {out}"
          + (f" ({info['scenes_with_fewer_questions']} scenes got fewer than {settings.per_image})" if not shard else ""))
    return 0


def parse_mix(text: str, axis: str, families: dict) -> tuple[tuple[str, float], ...]:
    """``binary=0.3,count=0.7`` as (class, share) pairs; UsageError for an unknown class or shares not summing to 1."""
    known = sorted({mix_class(family, axis) for family in families.values()})
    shares: dict[str, float] = {}
    for part in text.split(","):
        name, _, value = part.partition("=")
        name = name.strip()
        try:
            share = float(value)
        except ValueError:
            raise UsageError(f"--mix: {part.strip()!r} is not CLASS=SHARE") from None
        if name not in known:
            raise UsageError(f"--mix: unknown {axis} {name!r}; the families have: {', '.join(known)}")
        if name in shares or not 0 <= share <= 1:
            raise UsageError(f"--mix: {name} is given twice or its share {value} is not between 0 and 1")
        shares[name] = share
    if abs(sum(shares.values()) - 1) > 1e-6:
        raise UsageError(f"--mix: the shares sum to {sum(shares.values()):g}, not 1")
    return tuple(shares.items())


def shard_positions(shard: Shard, scene_count: int, balance_block: int) -> range:
    """A shard's scenes: a contiguous run of whole balance blocks (so its questions do not depend on other shards)."""
    blocks = shard.indices(0, -(-scene_count // balance_block))
    return range(min(blocks.start * balance_block, scene_count), min(blocks.stop * balance_block, scene_count))


def write_questions(
    out: Path, record: Mapping[str, Any], settings: Settings, questions: Iterable[dict[str, Any]], scene_count: int,
    refusals: Counter[str],
) -> dict[str, Any]:
    """questions.json from the run's questions in scene order (one run's, or its shards' one after
    another), and ``refusals`` (complete once ``questions`` is); return its info."""
    unique = SplitWideUnique(settings)
    with DocumentWriter(out, "questions") as writer:
        for question in unique.questions(questions):
            writer.write(question)
        info = {**record, "scene_count": scene_count, "question_count": unique.kept,
                "scenes_with_fewer_questions": scene_count - unique.full_scenes,
                "refused_realisations": dict(sorted(refusals.items())), "repeats_dropped": unique.dropped}
        writer.finish(info)
    return info


def write_shard(
    out: Path, record: Mapping[str, Any], chunks: Iterable[list[dict[str, Any]]], scene_count: int, refusals: Counter[str]
) -> dict[str, Any]:
    """A shard's questions as made (numbered within each balance block, repeats across blocks not yet dropped)."""
    with DocumentWriter(out, "questions") as writer:
        for chunk in chunks:
            for question in chunk:
                writer.write(question)
        info = {**record, "scene_count": scene_count, "question_count": writer.count,
                "refused_realisations": dict(sorted(refusals.items()))}
        writer.finish(info)
    return info


def merge_command(argv: Sequence[str]) -> int:
    out = merge_target(argv, f"python -m {PROG} merge", "OUT.shard-I-of-N.json written by python -m questions --shard I/N")
    files, infos, stop = consecutive_shards(
        out, "questions", lambda info: ({k: v for k, v in info.items() if k not in SHARD_KEYS}, info.get("shard", {})))
    record = {key: value for key, value in infos[0].items() if key not in SHARD_KEYS}
    settings = Settings(**{name: record[name] for name in ("seed", "per_image", "budget", "family_steps", "tries", "split_repeats", "balance_block", "unique_across_blocks")})
    questions = (question for path in files for question in checked_items(JsonDocument(path, "questions"), str(path)))
    refusals = sum((Counter(info.get("refused_realisations", {})) for info in infos), Counter())
    info = write_questions(out, record, settings, questions, stop, refusals)
    log.info(f"{PROG}: merged {len(files)} shards: {info['question_count']} questions for {stop} scenes in {out}")
    return 0


#: What a shard's info has beyond the run's record.
SHARD_KEYS = ("shard", "scene_count", "question_count", "refused_realisations")


def _load_families(sources: FamilySources) -> dict:
    try:
        return load_families(sources)
    except FamilyError as error:
        raise UsageError(f"bad family files: {error}") from None


def run_record(run_settings: QuestionSettings, settings: Settings, sources: FamilySources, families: dict,
               scenes_info: Any) -> dict[str, Any]:
    """What the output is made of and with: enough to tell whether an existing file or checkpoint matches."""
    return {
        "stage": "questions",
        "version": __version__,
        "seed": run_settings.seed.record,
        "per_image": settings.per_image,
        "budget": settings.budget,
        "family_steps": settings.family_steps,
        "tries": settings.tries,
        "split_repeats": settings.split_repeats,
        "balance_block": settings.balance_block,
        "unique_across_blocks": settings.unique_across_blocks,
        **({"mix": {"by": settings.mix_by, "shares": dict(settings.mix)}} if settings.mix else {}),
        "families": sources.record(),
        "families_digest": families_digest(sources),
        "family_count": len(families),
        "scenes_file": path_from_output(run_settings.scenes, run_settings.out),
        "scenes_digest": _file_sha256(run_settings.scenes),
        "scenes_info": scenes_info,
    }


def _file_sha256(path: Path) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _existing_record(path: Path) -> dict[str, Any] | None:
    try:
        info = JsonDocument(path, "questions").info()
    except (OSError, ValueError):
        return None
    keys = ("scene_count", "question_count", "scenes_with_fewer_questions", "refused_realisations", "repeats_dropped")
    return {key: value for key, value in info.items() if key not in keys}


# -- reading and checking scenes ---------------------------------------------------------------------


def check_scenes(path: Path) -> tuple[int, Any]:
    """Check every scene of a scenes.json file for what programs need, one at a time; return the
    count and the file's info. UsageError naming the first problem (before any question is made)."""
    label = f"--in: {path}"
    if not is_regular_or_missing(path) and not path.is_dir():  # a FIFO would wait for a writer forever
        raise UsageError(f"--in: {path} is not a regular file")
    try:
        with open(path, "rb"):
            pass
    except FileNotFoundError:
        raise UsageError(f"--in: no such file: {path}") from None
    except OSError as error:
        raise UsageError(f"--in: cannot read {path}: {error}") from None
    document = JsonDocument(path, "scenes")
    seen: set[tuple[str, int]] = set()
    count = 0
    try:
        for position, scene in enumerate(document.items()):
            problem = scene_problem(scene)
            if problem is None:
                key = (scene["split"], scene["image_index"])
                problem = f"image_index {key[1]} appears twice in split {key[0]!r}" if key in seen else None
                seen.add(key)
            if problem is not None:
                raise UsageError(f"{label}: scene {position}: {problem}")
            count = position + 1
        info = document.info()
    except (DocumentError, UnicodeDecodeError) as error:
        shape = f"--in: {path} must be {{\"info\": ..., \"scenes\": [...]}} as written by python -m render"
        raise input_error(error, label, shape) from None
    return count, info


def scene_problem(scene: Any) -> str | None:
    """What makes a scene unusable for questions, or None."""
    if not isinstance(scene, dict):
        return "not a JSON object"
    for key, kind in (("split", str), ("image_index", int), ("image_filename", str), ("objects", list), ("relationships", dict)):
        if not isinstance(scene.get(key), kind) or isinstance(scene.get(key), bool):
            return f"missing or invalid {key!r}"
    if not 0 <= scene["image_index"] <= MAX_SEED:  # the index is one word of the scene's random stream
        return f"image_index {scene['image_index']} is not in [0, 2**32 - 1]"
    vocabulary = load_vocabulary()
    objects = scene["objects"]
    for index, obj in enumerate(objects):
        if not isinstance(obj, dict):
            return f"object {index} is not a JSON object"
        for attribute in ATTRIBUTES:
            allowed = vocabulary.names(attribute)
            if obj.get(attribute) not in allowed:
                return f"object {index} has unknown {attribute} {obj.get(attribute)!r}; allowed: {', '.join(allowed)}"
    for relation in vocabulary.relations:
        lists = scene["relationships"].get(relation)
        if not isinstance(lists, list) or len(lists) != len(objects):
            return f"relationships[{relation!r}] must list one entry per object"
        for i, members in enumerate(lists):
            if not isinstance(members, list) or any(not isinstance(j, int) or not 0 <= j < len(objects) or j == i for j in members):
                return f"relationships[{relation!r}][{i}] must list indices of other objects"
    try:
        image_placement(scene)  # a recorded camera must place every object in the image
    except ImageError as error:
        return str(error)
    return None


# -- python -m questions validate ----------------------------------------------------------------------

#: Where the check that needs the other stages (realise, read back with the filter) lives now.
REALISE_MOVED = ("--realise is the cross-stage check now: python -m dataset families validate PATH... --realise N "
                 "(the realiser's Russian rules, every family said in every language and read back by the filter)")


def validation_parser() -> ArgumentParser:
    parser = ArgumentParser(
        prog=f"python -m {PROG} validate",
        description="Check family files as the question engine reads them and report every problem with its file, line "
        "and place (unknown functions, wrong arity or types, undeclared placeholders, unknown parameter types, English "
        "templates, ...). Exit status 0 when all are valid, 2 otherwise. Russian templates by the realiser's rules, and "
        "realising every family, are 'python -m dataset families validate'.",
    )
    add_common_options(parser)
    parser.add_argument("paths", nargs="+", type=Path, metavar="FILE_OR_DIR",
                        help="family files, or folders of them (their *.yaml and *.yml files); ids must be unique across all given")
    parser.add_argument("--realise", nargs="?", const="", default=None, metavar="N",
                        help="moved: python -m dataset families validate PATH... --realise N")
    return parser


def validate_command(argv: Sequence[str]) -> int:
    parser = validation_parser()
    args, unknown = parser.parse_known_args(argv)
    if args.realise is not None:
        raise UsageError(REALISE_MOVED)
    if unknown:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    configure_logging(args.verbosity)
    files = given_family_files(args.paths)
    families, problems = validate_files(files)
    for problem in problems:
        log.error(f"{PROG}: {problem}")
    if problems:
        log.error(f"{PROG}: {len(problems)} problem(s) in {len(files)} file(s)")
        return 2
    print(f"{PROG}: ok: {len(families)} families in {len(files)} file(s)")
    return 0


def given_family_files(paths: Sequence[Path]) -> list[Path]:
    """The family files named on a command line: files as given, folders by their ``*.yaml``/``*.yml`` files."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = family_files(path)
            if not found:
                raise UsageError(f"{path}: no family files ({', '.join('*' + s for s in FAMILY_SUFFIXES)})")
            files.extend(found)
        else:
            files.append(path)
    return files
