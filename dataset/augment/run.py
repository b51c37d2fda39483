"""The augmentation run: read and check the sources, claim the output folder, plan and re-render
the recoloured scenes, carry the questions over, realise them in Russian, run the filter stage's
own pipeline on them, and report."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from assets.vocabulary import load_vocabulary
from dataset.augment.carry_over import Dropped, QuestionRecolourer, carry_questions_over, russian_questions
from dataset.augment.colours import ColorSwap, recolour_scene, recoloured_objects
from dataset.augment.rendering import Planned, plan_rendering, render_pending, warn_of_changed_masks
from dataset.augment.settings import AugmentPaths, AugmentResult, AugmentSettings, AugmentSources
from dataset.mera import read_stage_file
from filter import FilterJob, RucolaOptions, Scorer, run_filter
from filter import make_scorer as make_filter_scorer
from questions import Family, FamilyError, FamilySources, families_digest, load_families, recorded_sources
from render import settings_from_record
from ruclevr import __version__
from ruclevr.cli import MAX_SEED, UsageError
from ruclevr.io import atomic_open, atomic_write_json, file_sha256, read_json
from ruclevr.paths import confined_path
from ruclevr.records import RunUnit, claim_run
from translate import NativeRealiser


def read_scenes(sources: AugmentSources) -> tuple[dict, list[dict]]:
    if sources.masks_dir is not None and not sources.masks_dir.is_dir():
        raise UsageError(f"--masks {str(sources.masks_dir)!r} is not a folder")
    return read_stage_file(sources.scenes_path, "scenes", "scenes")


def chosen_families(chosen: FamilySources | None, questions_path: Path, questions_info: Mapping[str, Any]) -> tuple[FamilySources, dict[str, Family]]:
    """The families given (``--families``), else those the questions stage recorded in its info; loaded."""
    family_sources = chosen or recorded_sources(questions_info, f"--questions {questions_path}")
    try:
        return family_sources, load_families(family_sources)
    except FamilyError as error:
        raise UsageError(str(error).splitlines()[0]) from None


def check_sources(sources: AugmentSources, scenes: list[dict], questions: list[dict], families: Mapping[str, Family]) -> None:
    """UsageError for a scene that cannot be re-rendered or a question that cannot be carried over."""
    colours = set(load_vocabulary().names("color"))
    filenames = set()
    for position, scene in enumerate(scenes):
        where = f"{sources.scenes_path.name} scene {position}"
        if not isinstance(scene, dict) or not isinstance(scene.get("objects"), list) or "image_filename" not in scene:
            raise UsageError(f"{where} is not a scene graph with objects and image_filename")
        for required in ("render", "camera", "lights", "relationships"):
            if required not in scene:
                raise UsageError(f"{where} has no {required!r}: only scenes written by python -m render can be re-rendered")
        index = scene.get("image_index")
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index <= MAX_SEED:
            raise UsageError(f"{where}: image_index {index!r} is not an integer in [0, 2**32 - 1] (one word of its random streams)")
        try:
            settings_from_record(scene["render"])
        except ValueError as error:
            raise UsageError(f"{where}: {error}") from None
        for k, obj in enumerate(scene["objects"]):
            if obj.get("color") not in colours:
                raise UsageError(f"{where} object {k}: unknown colour {obj.get('color')!r}; allowed: {', '.join(sorted(colours))}")
        confined_path(sources.scenes_path.parent, scene["image_filename"], f"{where}: image_filename")
        filenames.add(scene["image_filename"])
    for position, question in enumerate(questions):
        where = f"{sources.questions_path.name} question {position}"
        missing = [key for key in ("image_filename", "question_index", "program", "family", "params") if key not in question]
        if missing:
            raise UsageError(f"{where} lacks {', '.join(missing)} (is it the question stage's output?)")
        if question["family"] not in families:
            raise UsageError(f"{where}: family {question['family']!r} is not among the family files; pass --families DIR "
                             "with the folder of its family file")
        if question["image_filename"] not in filenames:
            raise UsageError(f"{where} asks about {question['image_filename']}, which no scene in {sources.scenes_path.name} has")


def render_defining_record(sources: AugmentSources, settings: AugmentSettings) -> dict[str, Any]:
    """What decides the rendered files; a rerun into the same folder must have the same."""
    return {
        "stage": "dataset.augment",
        "scenes_sha256": file_sha256(sources.scenes_path),
        "swap": settings.swap.describe(),
        "n": settings.n,
        "prefix": settings.prefix,
    }


def rerendered_unit(paths: AugmentPaths, record: Path, refusal: str, made_from_renders: Sequence[Path]) -> RunUnit:
    """A folder of re-rendered scenes (augment's, pairs') as the unit of work a run claims, with its run
    ``record`` file; ``made_from_renders``: the files --overwrite removes with the renders."""
    layout = paths.layout

    def start_over() -> None:
        layout.remove_outputs()
        for path in made_from_renders:
            path.unlink(missing_ok=True)

    return RunUnit(record, has_work=layout.finished_scene_files, refusal=lambda _: refusal, start_over=start_over,
                   prepare=layout.prepare)


def claim_output(paths: AugmentPaths, record: Mapping[str, Any], overwrite: bool) -> None:
    """Record what the renders are made from, refusing to mix them with another run's."""
    refusal = (f"{paths.root} holds augmented scenes made from other inputs or colour maps; "
               "rerun the same command to resume, or pass --overwrite")
    made = (paths.questions, paths.dropped, paths.translated, paths.kept, paths.report)
    claim_run(rerendered_unit(paths, paths.run_record, refusal, made), record, overwrite=overwrite)


def plan_scenes(scenes: Sequence[dict[str, Any]], swap: ColorSwap, paths: AugmentPaths) -> list[Planned]:
    """(source, recoloured) for every source scene the colour map changes, in source order."""
    planned = []
    for scene in scenes:
        color_map = swap.map_for(scene)
        if not recoloured_objects(scene, color_map):
            continue
        filename = paths.layout.image_path(int(scene["image_index"])).name
        planned.append((scene, recolour_scene(scene, color_map, filename)))
    return planned


def write_dropped(path: Path, dropped: Sequence[Dropped]) -> None:
    with atomic_open(path) as handle:
        for entry in dropped:
            handle.write(json.dumps({**entry.question, "reason": entry.reason}, ensure_ascii=False) + "\n")


def summarise(scenes: Sequence[Mapping[str, Any]], carried: int, dropped: Sequence[Dropped], translated: int,
              kept: int, source_scenes: int, source_questions: int) -> dict[str, Any]:
    by_reason = Counter(entry.reason.split(":", 1)[0] for entry in dropped)
    by_family: dict[str, Counter[str]] = {}
    for entry in dropped:
        by_family.setdefault(str(entry.question.get("family")), Counter())[entry.reason.split(":", 1)[0]] += 1
    masks = Counter(str(scene["augmentation"].get("mask_matches_source")).lower() for scene in scenes)
    return {
        "counts": {
            "source_scenes": source_scenes,
            "augmented_scenes": len(scenes),
            "unchanged_scenes": source_scenes - len(scenes),
            "source_questions_on_augmented_scenes": source_questions,
            "well_posed": carried,
            "realised_in_russian": translated,
            "kept_by_filter": kept,
            "dropped": len(dropped),
        },
        "dropped_by_reason": dict(sorted(by_reason.items())),
        "dropped_by_family": {family: dict(sorted(c.items())) for family, c in sorted(by_family.items())},
        "masks_match_source": {"true": masks.get("true", 0), "false": masks.get("false", 0),
                               "no_source_mask": masks.get("none", 0)},
        "color_maps": {scene["image_filename"]: scene["augmentation"]["color_map"] for scene in scenes},
    }


def run_info(sources: AugmentSources, settings: AugmentSettings, scenes_info: Mapping[str, Any],
             questions_info: Mapping[str, Any], families_digest: str) -> dict[str, Any]:
    return {
        "stage": "dataset.augment",
        "version": __version__,
        "seed": settings.swap.recorded_seed,
        "settings": {
            "swap": settings.swap.describe(),
            "n": settings.n,
            "prefix": settings.prefix,
            "families_sha256": families_digest,
            "yo": settings.yo,
            "filter": {"backend": settings.filter_backend, "threshold": settings.threshold, "model": settings.filter_model},
        },
        "sources": {
            "scenes": {"file": sources.scenes_path.name, "sha256": file_sha256(sources.scenes_path), "info": dict(scenes_info)},
            "questions": {"file": sources.questions_path.name, "sha256": file_sha256(sources.questions_path),
                          "info": dict(questions_info)},
        },
    }


def augment(
    sources: AugmentSources,
    out: Path,
    settings: AugmentSettings,
    overwrite: bool = False,
    make_scorer: Callable[[], Scorer] | None = None,
) -> AugmentResult:
    """Run the whole augmentation into ``out``; see :mod:`dataset.augment` for the files.

    Everything that can be wrong with the input is found before anything is written. Scenes are
    re-rendered by Blender worker processes as ``python -m render`` spreads its own (one per GPU,
    or one per core); ``make_scorer`` defaults to the chosen filter backend.
    """
    scenes_info, scenes = read_scenes(sources)
    questions_info, questions = read_stage_file(sources.questions_path, "questions", "questions")
    family_sources, families = chosen_families(settings.families, sources.questions_path, questions_info)
    check_sources(sources, scenes, questions, families)
    paths = AugmentPaths(out, settings.prefix)
    realiser = NativeRealiser(families_dir=family_sources, seed=settings.swap.seed)
    chosen = scenes if settings.n is None else scenes[: settings.n]
    planned = plan_scenes(chosen, settings.swap, paths)
    plan = plan_rendering(settings)
    try:
        claim_output(paths, render_defining_record(sources, settings), overwrite)
    except OSError as error:
        raise UsageError(f"cannot write to --out {str(out)!r}: {error.strerror or error}") from None

    result = AugmentResult(paths=paths)
    result.failures = render_pending(planned, sources, paths, plan)
    if result.failures:
        return result
    rendered = [read_json(paths.layout.scene_path(int(recoloured["image_index"]))) for _, recoloured in planned]
    warn_of_changed_masks(rendered)
    info = run_info(sources, settings, scenes_info, questions_info, families_digest(family_sources))
    atomic_write_json(paths.scenes, {"info": info, "scenes": rendered})

    carried, dropped, asked = carry_questions_over(planned, rendered, questions, QuestionRecolourer(families, settings.swap.seed))
    atomic_write_json(paths.questions, {"info": info, "questions": carried})
    translated, untranslated = russian_questions(carried, realiser, settings.yo)
    dropped += untranslated
    write_dropped(paths.dropped, dropped)
    translate_info = {**info, "translate": {"backend": realiser.name, "seed": settings.swap.recorded_seed, "yo": settings.yo}}
    atomic_write_json(paths.translated, {"info": translate_info, "questions": translated})

    kept = filter_questions(paths, settings, overwrite, make_scorer or chosen_scorer(settings))
    report = summarise(rendered, len(carried), dropped, len(translated), kept, len(chosen), asked)
    atomic_write_json(paths.report, {"info": info, **report})
    result.counts = report["counts"]
    return result


def filter_questions(paths: AugmentPaths, settings: AugmentSettings, overwrite: bool, make_scorer: Callable[[], Scorer]) -> int:
    """The filter stage's own run on the Russian questions (its score cache makes reruns cheap)."""
    job = FilterJob(paths.translated, paths.kept, settings.threshold, settings.batch_size, overwrite)
    return run_filter(job, make_scorer).kept


def chosen_scorer(settings: AugmentSettings) -> Callable[[], Scorer]:
    """The filter stage's own scorer for ``--filter-backend`` (made when the filter first needs it)."""
    def make() -> Scorer:
        options = RucolaOptions(model=settings.filter_model) if settings.filter_model else None
        return make_filter_scorer(settings.filter_backend, options)

    return make
