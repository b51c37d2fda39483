"""``python -m questions``: write questions.json for a scenes file; ``python -m questions validate``: check family files."""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

from assets.vocabulary import ATTRIBUTES, load_vocabulary
from ruclevr import __version__
from ruclevr.cli import ArgumentParser, UsageError, non_negative_int, positive_int, run_cli
from ruclevr.io import atomic_write_json, remove_stale_temporaries
from ruclevr.paths import check_output_location

from questions.families import families_digest, family_files, load_families
from questions.generate import CHUNK_SCENES, MIX_AXES, ResumeMismatch, SceneFailed, Settings, generate, mix_class
from questions.validator import FAMILY_SUFFIXES, FamilyError, validate_files

PROG = "questions"


def main(argv: Sequence[str] | None = None) -> int:
    return run_cli(_main, argv, prog=f"python -m {PROG}")


def _main(argv: Sequence[str] | None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["validate"]:
        return validate_command(arguments[1:])
    return generate_command(arguments)


# -- python -m questions --scenes ... --out ... ------------------------------------------------------


def generation_parser() -> ArgumentParser:
    parser = ArgumentParser(
        prog=f"python -m {PROG}",
        description="Generate English questions with programs and answers for the scenes of a scenes.json file. "
        "Every answer is computed by executing the question's program on its scene graph.",
        epilog="To check family files instead: python -m questions validate FILE_OR_DIR... "
        "(see python -m questions validate --help).",
    )
    parser.add_argument("--scenes", required=True, type=Path, help="scenes.json written by `python -m render` ({info, scenes}).")
    parser.add_argument("--out", required=True, type=Path, help="questions.json to write ({info, questions}).")
    parser.add_argument("--per-image", type=positive_int, default=10, help="questions per image, at most one per family (default 10).")
    parser.add_argument("--seed", type=non_negative_int, default=0, help="seed of all random choices; same seed, same file (default 0).")
    parser.add_argument(
        "--families", type=Path, default=None, help="folder of family files (*.yaml, *.yml, *.json); default: the shipped questions/families."
    )
    parser.add_argument(
        "--budget", type=positive_int, default=Settings.budget,
        help=f"search steps per scene across all families; a hard scene ends with fewer questions instead of stalling (default {Settings.budget}).",
    )
    parser.add_argument(
        "--split-repeats", type=non_negative_int, default=Settings.split_repeats,
        help="how many images of one split may get the same question (same program or same normalised text); 0 = no limit "
        f"(default {Settings.split_repeats}: every question of a split is different).",
    )
    parser.add_argument(
        "--checkpoint-every", type=positive_int, default=CHUNK_SCENES,
        help=f"save progress every N scenes under OUT.partial/; a stopped run resumes from there (default {CHUNK_SCENES}).",
    )
    parser.add_argument(
        "--mix", default=None, metavar="CLASS=SHARE,...",
        help="the mix of questions to reach, e.g. binary=0.3,count=0.2,colors=0.2,shapes=0.1,materials=0.1,size=0.1 "
        "(shares sum to 1; classes not named get no questions); default: every family in turn.",
    )
    parser.add_argument(
        "--mix-by", choices=MIX_AXES, default="type",
        help="what --mix names: MERA question types (default), family groups, or hops (relations in the program: 0, 1, 2, 3).",
    )
    parser.add_argument("--overwrite", action="store_true", help="replace an existing output (and any stopped run's checkpoints).")
    parser.add_argument("--quiet", action="store_true", help="no progress bar.")
    return parser


def generate_command(argv: Sequence[str]) -> int:
    args = generation_parser().parse_args(argv)
    check_output_location(args.out, "file", "--out")
    families = _load_families(args.families)
    scenes, scenes_info = read_scenes(args.scenes)
    mix = parse_mix(args.mix, args.mix_by, families) if args.mix is not None else ()
    settings = Settings(
        seed=args.seed, per_image=args.per_image, budget=args.budget, split_repeats=args.split_repeats, mix=mix, mix_by=args.mix_by
    )
    record = run_record(args, settings, families, scenes_info)
    checkpoints = args.out.with_name(args.out.name + ".partial")
    if args.out.exists() and not args.overwrite:
        if _existing_record(args.out) == record:
            print(f"{PROG}: {args.out} is up to date", file=sys.stderr)
            return 0
        raise UsageError(f"{args.out} exists and was made with other settings or inputs; pass --overwrite to replace it")
    if args.overwrite and checkpoints.exists():
        shutil.rmtree(checkpoints)
    remove_stale_temporaries(args.out.parent)
    refusals: Counter[str] = Counter()
    try:
        questions = generate(
            scenes, families, settings, run_record=record, checkpoint_dir=checkpoints,
            chunk_scenes=args.checkpoint_every, progress=not args.quiet, refusals=refusals,
        )
    except ResumeMismatch as error:
        raise UsageError(str(error)) from None
    except SceneFailed as error:
        kept = f"; finished chunks are kept in {checkpoints}" if any(checkpoints.glob("scenes_*.json")) else ""
        print(f"{PROG}: failed on {error}{kept}", file=sys.stderr)
        return 1
    per_image = Counter((q["split"], q["image_index"]) for q in questions)
    short = sum(1 for scene in scenes if per_image[(scene["split"], scene["image_index"])] < settings.per_image)
    info = {**record, "scene_count": len(scenes), "question_count": len(questions), "scenes_with_fewer_questions": short,
            "refused_realisations": dict(sorted(refusals.items()))}
    atomic_write_json(args.out, {"info": info, "questions": questions})
    shutil.rmtree(checkpoints, ignore_errors=True)
    print(f"{PROG}: wrote {len(questions)} questions for {len(scenes)} scenes to {args.out}"
          f" ({short} scenes got fewer than {settings.per_image})", file=sys.stderr)
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


def _load_families(directory: Path | None) -> dict:
    try:
        return load_families(directory)
    except FamilyError as error:
        raise UsageError(f"bad family files: {error}") from None


def run_record(args: Any, settings: Settings, families: dict, scenes_info: Any) -> dict[str, Any]:
    """What the output is made of and with: enough to tell whether an existing file or checkpoint matches."""
    return {
        "stage": "questions",
        "version": __version__,
        "seed": settings.seed,
        "per_image": settings.per_image,
        "budget": settings.budget,
        "family_steps": settings.family_steps,
        "tries": settings.tries,
        "split_repeats": settings.split_repeats,
        **({"mix": {"by": settings.mix_by, "shares": dict(settings.mix)}} if settings.mix else {}),
        "families": "builtin" if args.families is None else str(args.families),
        "families_digest": families_digest(args.families),
        "family_count": len(families),
        "scenes_file": str(args.scenes),
        "scenes_digest": hashlib.sha256(args.scenes.read_bytes()).hexdigest(),
        "scenes_info": scenes_info,
    }


def _existing_record(path: Path) -> dict[str, Any] | None:
    try:
        with open(path, encoding="utf-8") as handle:
            info = json.load(handle).get("info", {})
    except (OSError, ValueError, AttributeError):
        return None
    keys = ("scene_count", "question_count", "scenes_with_fewer_questions", "refused_realisations")
    return {key: value for key, value in info.items() if key not in keys}


# -- reading and checking scenes ---------------------------------------------------------------------


def read_scenes(path: Path) -> tuple[list[dict[str, Any]], Any]:
    """The scenes of a scenes.json file, each checked for what programs need; UsageError naming the first problem."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        raise UsageError(f"--scenes: no such file: {path}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"--scenes: cannot read {path}: {error}") from None
    except json.JSONDecodeError as error:
        raise UsageError(f"--scenes: {path} is not valid JSON: {error.msg} at line {error.lineno}") from None
    if not isinstance(data, dict) or not isinstance(data.get("scenes"), list):
        raise UsageError(f"--scenes: {path} must be {{\"info\": ..., \"scenes\": [...]}} as written by python -m render")
    seen: set[tuple[str, int]] = set()
    for position, scene in enumerate(data["scenes"]):
        problem = scene_problem(scene)
        if problem is None:
            key = (scene["split"], scene["image_index"])
            problem = f"image_index {key[1]} appears twice in split {key[0]!r}" if key in seen else None
            seen.add(key)
        if problem is not None:
            raise UsageError(f"--scenes: {path}: scene {position}: {problem}")
    return data["scenes"], data.get("info", {})


def scene_problem(scene: Any) -> str | None:
    """What makes a scene unusable for questions, or None."""
    if not isinstance(scene, dict):
        return "not a JSON object"
    for key, kind in (("split", str), ("image_index", int), ("image_filename", str), ("objects", list), ("relationships", dict)):
        if not isinstance(scene.get(key), kind):
            return f"missing or invalid {key!r}"
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
    return None


# -- python -m questions validate ----------------------------------------------------------------------


def validation_parser() -> ArgumentParser:
    parser = ArgumentParser(
        prog=f"python -m {PROG} validate",
        description="Check family files and report every problem with its file, line and place "
        "(unknown functions, wrong arity or types, undeclared placeholders, unknown parameter types, ...). "
        "Exit status 0 when all are valid, 2 otherwise.",
    )
    parser.add_argument("paths", nargs="+", type=Path, metavar="FILE_OR_DIR",
                        help="family files (*.yaml, *.yml, *.json), or folders of them; ids must be unique across all given")
    return parser


def validate_command(argv: Sequence[str]) -> int:
    args = validation_parser().parse_args(argv)
    files: list[Path] = []
    for path in args.paths:
        if path.is_dir():
            found = family_files(path)
            if not found:
                raise UsageError(f"{path}: no family files ({', '.join('*' + s for s in FAMILY_SUFFIXES)})")
            files.extend(found)
        else:
            files.append(path)
    families, problems = validate_files(files)
    for problem in problems:
        print(f"{PROG}: {problem}", file=sys.stderr)
    if problems:
        print(f"{PROG}: {len(problems)} problem(s) in {len(files)} file(s)", file=sys.stderr)
        return 2
    print(f"{PROG}: ok: {len(families)} families in {len(files)} file(s)")
    return 0

