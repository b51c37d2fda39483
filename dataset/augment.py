"""Colour-swap augmentation through the scene graph: recolour, re-render, re-ask, re-realise, re-filter.

The public ruCLEVR script shifted hues in the image and replaced colour words in the question,
leaving answers as they were. Here the edit is made where the truth lives, the scene graph:

1. objects of the mapped colours are recoloured in the graph (a fixed map such as
   ``blue=red,cyan=purple``, or per scene a seeded random permutation of the vocabulary's colours);
2. the scene is rendered again from its record (same geometry, camera, lights, render settings and
   Cycles seed), so its instance mask is the source's and only the colours differ;
3. every question of the source scene is carried over with its colour parameters mapped the same
   way, its program re-executed on the recoloured graph for the answer, and dropped when the
   question engine's rules say it has become ill-posed (a reference that now fits several objects,
   a filter that no longer narrows anything, a query whose answer the question now names);
4. English text is regenerated from the family's templates, Russian by the native realiser, and
   everything goes through the acceptability filter like any other item.

Every augmented scene and question records its source and the colour map (``augmentation``).

Output folder (``--out OUT``)::

    OUT/images/, masks/, scenes/       one re-rendered scene each (render's layout, prefix ruclevr_swap)
    OUT/scenes.json                    {"info", "scenes"}: the recoloured scene graphs
    OUT/questions.json                 English questions on them, answers re-computed
    OUT/questions.dropped.jsonl        questions left out, each with its reason
    OUT/questions_ru.json              + question_ru, answer_ru, translator
    OUT/questions_ru_kept.json         what the filter kept (+ .rejected.jsonl, .report.json, .scores.sqlite)
    OUT/augment_report.json            counts by reason and family, colour maps, mask checks
    OUT/augment_run.json               what the renders were made from (a rerun must match it)

``questions_ru_kept.json`` and ``scenes.json`` go straight into ``python -m dataset export``.
"""

from __future__ import annotations

import copy
import json
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image
from tqdm import tqdm

from assets.vocabulary import Vocabulary, load_vocabulary
from dataset.export import read_stage_file
from dataset.layout import QuestionStageFiles
from ruclevr import __version__
from ruclevr.cli import UsageError, progress_disabled, stage_logger
from ruclevr.io import atomic_open, atomic_write_json, file_sha256, read_json
from ruclevr.paths import confined_path

PROG = "python -m dataset augment"
#: Mixed into every generator seed of this stage, so it never shares random numbers with another stage.
STAGE = 7
DEFAULT_PREFIX = "ruclevr_swap"
#: Random permutations drawn for one scene before giving up on changing any of its colours.
MAX_PERMUTATION_DRAWS = 100
#: An unexpected render failure of one scene is retried this many times, then reported.
RENDER_RETRIES = 1
#: The keys a question record has when the question stage writes it (downstream keys are rebuilt).
QUESTION_KEYS = ("split", "image_index", "image_filename", "question_index", "question", "program", "answer",
                 "template_filename", "question_family_index", "family", "question_type", "template_index", "params",
                 "unsafe_readings")
#: Per-object keys only a render can tell; recomputed from the new mask.
RENDER_ONLY_OBJECT_KEYS = ("visible_pixels", "bbox_2d")

AMBIGUOUS = "ambiguous"
ILL_POSED = "ill_posed"
NO_RUSSIAN = "no_russian"


# -- colour maps --------------------------------------------------------------------------------


def parse_color_map(text: str, vocabulary: Vocabulary | None = None) -> dict[str, str]:
    """``"blue=red,cyan=purple"`` → ``{"blue": "red", "cyan": "purple"}``, every name checked."""
    vocabulary = vocabulary or load_vocabulary()
    colours = vocabulary.names("color")
    mapping: dict[str, str] = {}
    for entry in (part.strip() for part in text.split(",")):
        source, sep, target = (piece.strip() for piece in entry.partition("="))
        if not sep or not source or not target:
            raise UsageError(f"--map entry {entry!r} must look like COLOUR=COLOUR, e.g. blue=red")
        for name in (source, target):
            if name not in colours:
                raise UsageError(f"--map: unknown colour {name!r}; allowed: {', '.join(colours)}")
        if source in mapping:
            raise UsageError(f"--map: colour {source!r} is mapped twice")
        if source == target:
            raise UsageError(f"--map: {entry!r} maps a colour to itself")
        mapping[source] = target
    return mapping


def random_color_map(
    seed: int, image_index: int, scene_colours: Iterable[str], vocabulary: Vocabulary | None = None
) -> dict[str, str]:
    """A permutation of the vocabulary's colours that changes at least one colour of the scene.

    Drawn from ``default_rng([seed, image_index, STAGE])``; only the colours it moves are returned.
    An empty map means no permutation moved any of the scene's colours (a scene of no objects).
    """
    colours = (vocabulary or load_vocabulary()).names("color")
    present = set(scene_colours)
    rng = np.random.default_rng([seed, image_index, STAGE])
    for _ in range(MAX_PERMUTATION_DRAWS):
        order = rng.permutation(len(colours))
        mapping = {colours[i]: colours[int(j)] for i, j in enumerate(order) if i != j}
        if present & mapping.keys():
            return mapping
    return {}


@dataclass(frozen=True)
class ColorSwap:
    """Which colours change: ``fixed`` for every scene, or (``fixed`` None) a random permutation per scene."""

    fixed: Mapping[str, str] | None
    seed: int = 0

    def map_for(self, scene: Mapping[str, Any]) -> dict[str, str]:
        if self.fixed is not None:
            return dict(self.fixed)
        return random_color_map(self.seed, int(scene["image_index"]), (obj["color"] for obj in scene["objects"]))

    def describe(self) -> dict[str, Any]:
        if self.fixed is not None:
            return {"mode": "map", "map": dict(self.fixed)}
        return {"mode": "random", "seed": self.seed}


def recoloured_objects(scene: Mapping[str, Any], color_map: Mapping[str, str]) -> list[int]:
    """Indices of the objects whose colour the map changes."""
    return [k for k, obj in enumerate(scene["objects"]) if obj["color"] in color_map]


def recolour_scene(scene: Mapping[str, Any], color_map: Mapping[str, str], image_filename: str) -> dict[str, Any]:
    """The scene graph with the mapped colours, under a new file name, and where it came from.

    Geometry, camera, lights, relations and render settings are kept as they are; what only a
    render can tell (visible pixels, 2D boxes) is removed until the re-render recomputes it.
    """
    recoloured = copy.deepcopy(dict(scene))
    for obj in recoloured["objects"]:
        obj["color"] = color_map.get(obj["color"], obj["color"])
        for key in RENDER_ONLY_OBJECT_KEYS:
            obj.pop(key, None)
    recoloured["image_filename"] = image_filename
    recoloured["augmentation"] = {
        "kind": "color_swap",
        "source_image_filename": scene["image_filename"],
        "source_image_index": scene["image_index"],
        "color_map": dict(color_map),
        "recoloured_objects": recoloured_objects(scene, color_map),
    }
    return recoloured


# -- questions on the recoloured scene ----------------------------------------------------------


@dataclass
class Dropped:
    question: dict[str, Any]
    reason: str


class QuestionRecolourer:
    """Carries a source question over to the recoloured scene: mapped parameters, a program built by
    the question engine from them, the answer by execution, English text from the family's template."""

    def __init__(self, families: Mapping[str, Any], seed: int, vocabulary: Vocabulary | None = None) -> None:
        from questions.search import Plan

        self.families = families
        self.seed = seed
        self.vocabulary = vocabulary or load_vocabulary()
        self.plans = {family_id: Plan.of(family) for family_id, family in families.items()}

    def questions_for_scene(
        self, questions: Sequence[Mapping[str, Any]], scene: Mapping[str, Any]
    ) -> tuple[list[dict[str, Any]], list[Dropped]]:
        """The well-posed carried-over questions of one recoloured scene, and the dropped ones with reasons."""
        from questions.random_stream import RandomStream
        from questions.scene_index import SceneIndex
        from questions.search import SceneSearch

        color_map = scene["augmentation"]["color_map"]
        search = SceneSearch(SceneIndex.from_scene(scene), RandomStream.for_unit(self.seed, int(scene["image_index"]), STAGE))
        kept: list[dict[str, Any]] = []
        dropped: list[Dropped] = []
        for question in questions:
            carried, reason = self.carry_over(question, scene, color_map, search)
            if carried is None:
                dropped.append(Dropped(self.provenance_only(question, scene, color_map), reason or ILL_POSED))
            else:
                kept.append(carried)
        return kept, dropped

    def carry_over(
        self, question: Mapping[str, Any], scene: Mapping[str, Any], color_map: Mapping[str, str], search: Any
    ) -> tuple[dict[str, Any] | None, str | None]:
        from questions.executor import execute_program
        from questions.functions import ExecutionError
        from questions.generate import expand_family
        from questions.readings import UNSAFE_FIELD, unsafe_readings
        from questions.search import expand_program

        family = self.families[question["family"]]
        plan = self.plans[question["family"]]
        params = mapped_params(question["params"], family.params, color_map)
        # The program exactly as the source's, with mapped colour values: executing it first tells
        # *why* a question fails (a reference that no longer picks out one object).
        try:
            execute_program(mapped_program(question["program"], color_map), search.scene)
        except ExecutionError as error:
            return None, f"{AMBIGUOUS}: {error}"
        candidate = search.instantiate(plan, params)
        if candidate is None:
            return None, f"{ILL_POSED}: the question engine's rules reject it on the recoloured scene " \
                         "(a filter that narrows nothing, a comparison the text decides, or a query naming its answer)"
        program = expand_program(plan, candidate.choices)
        answer = execute_program(program, search.scene)
        if answer != candidate.answer:  # two independent computations of one answer
            raise RuntimeError(f"{question['family']}: the search and the executor disagree on {program}")
        # The other readings of the text are executed on the recoloured scene, as the engine does.
        unsafe = unsafe_readings(family, params, search.scene, expand_family)
        english = self.english_text(family, question, params, scene, unsafe)
        if english is None:
            return None, f"{AMBIGUOUS}: no English template says it with one reading on the recoloured scene"
        template_index, text = english
        carried = {key: question[key] for key in QUESTION_KEYS if key in question}
        carried.update(
            split=scene["split"],
            image_index=scene["image_index"],
            image_filename=scene["image_filename"],
            question=text,
            program=program,
            answer=answer,
            params=params,
            question_type=plan.question_type,
            template_index=template_index,
            augmentation=question_provenance(question, color_map),
        )
        carried[UNSAFE_FIELD] = unsafe
        return carried, None

    def english_text(
        self, family: Any, question: Mapping[str, Any], params: Mapping[str, str], scene: Mapping[str, Any], unsafe: list[str]
    ) -> tuple[int, str] | None:
        """From the source's English template on, the first that reads with one meaning, realised
        with the mapped values (synonyms drawn afresh); None when none does."""
        from questions.generate import readable_english
        from questions.random_stream import RandomStream

        first = int(question.get("template_index", 0)) % len(family.text["en"])
        rng = np.random.default_rng([self.seed, int(scene["image_index"]), int(question["question_index"]), STAGE])
        return readable_english(family, params, unsafe, self.vocabulary, RandomStream(rng), first, Counter())

    @staticmethod
    def provenance_only(question: Mapping[str, Any], scene: Mapping[str, Any], color_map: Mapping[str, str]) -> dict[str, Any]:
        """A dropped question as reported: its source text and where it would have gone."""
        return {
            "image_filename": scene["image_filename"],
            "question_index": question.get("question_index"),
            "family": question.get("family"),
            "augmentation": question_provenance(question, color_map),
        }


def mapped_params(params: Mapping[str, str], param_types: Mapping[str, str], color_map: Mapping[str, str]) -> dict[str, str]:
    """Colour parameters follow the objects they described; every other value stays."""
    return {
        name: color_map.get(value, value) if param_types.get(name) == "color" else value
        for name, value in params.items()
    }


def mapped_program(program: Sequence[Mapping[str, Any]], color_map: Mapping[str, str]) -> list[dict[str, Any]]:
    return [
        {**node, "value_inputs": [color_map.get(v, v) for v in node.get("value_inputs", [])]}
        if node.get("function") == "filter_color" else dict(node)
        for node in program
    ]


def question_provenance(question: Mapping[str, Any], color_map: Mapping[str, str]) -> dict[str, Any]:
    return {
        "kind": "color_swap",
        "source_image_filename": question.get("image_filename"),
        "source_question_index": question.get("question_index"),
        "source_question": question.get("question"),
        "source_answer": question.get("answer"),
        "color_map": dict(color_map),
    }


def russian_questions(
    questions: Sequence[Mapping[str, Any]], realiser: Any, yo_policy: str
) -> tuple[list[dict[str, Any]], list[Dropped]]:
    """Add ``question_ru``, ``answer_ru`` and ``translator`` as the translate stage does; a family
    without Russian text drops its question (reported, never silently)."""
    from translate.answers import answer_to_russian
    from translate.native import RealisationError
    from translate.spelling import apply_yo_policy

    done, dropped = [], []
    for question in questions:
        provenance = {key: question[key] for key in ("image_filename", "question_index", "family", "augmentation")}
        try:
            text = realiser.realise_one(question)
        except RealisationError as error:  # every Russian template reads two ways on this scene
            dropped.append(Dropped(provenance, f"{AMBIGUOUS}: {error}"))
            continue
        if text is None:
            dropped.append(Dropped(provenance, f"{NO_RUSSIAN}: family {question['family']} has no Russian text"))
            continue
        done.append({**question, "question_ru": apply_yo_policy(text, yo_policy),
                     "answer_ru": answer_to_russian(question["answer"], yo_policy), "translator": realiser.name})
    return done, dropped


# -- the run -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AugmentPaths(QuestionStageFiles):
    prefix: str = DEFAULT_PREFIX

    @property
    def layout(self):
        from render.outputs import OutputLayout

        return OutputLayout(self.root, self.prefix)

    @property
    def scenes(self) -> Path:
        return self.root / "scenes.json"

    @property
    def dropped(self) -> Path:
        return self.root / "questions.dropped.jsonl"

    @property
    def report(self) -> Path:
        return self.root / "augment_report.json"

    @property
    def run_record(self) -> Path:
        return self.root / "augment_run.json"


@dataclass(frozen=True)
class AugmentSettings:
    swap: ColorSwap
    n: int | None = None  # only the first n source scenes
    prefix: str = DEFAULT_PREFIX
    families_dir: Path | None = None
    yo: str = "e"
    filter_backend: str = "morph"
    threshold: float | None = None
    filter_model: str | None = None
    batch_size: int = 32
    device: str = "cpu"
    workers: int | None = None  # render worker processes; None = as python -m render: one per GPU, else one per core
    threads: int | None = None  # Cycles threads per worker; None = 1 with several CPU workers, else all cores


@dataclass(frozen=True)
class AugmentSources:
    scenes_path: Path
    questions_path: Path
    masks_dir: Path | None = None  # the source masks, to check each re-render's; default masks/ beside the scenes


@dataclass
class AugmentResult:
    counts: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    paths: AugmentPaths | None = None


def read_sources(sources: AugmentSources, families: Mapping[str, Any]) -> tuple[dict, list[dict], dict, list[dict]]:
    """Scenes and questions, checked so that nothing is written when either cannot be augmented."""
    if sources.masks_dir is not None and not sources.masks_dir.is_dir():
        raise UsageError(f"--masks {str(sources.masks_dir)!r} is not a folder")
    scenes_info, scenes = read_stage_file(sources.scenes_path, "scenes", "scenes")
    questions_info, questions = read_stage_file(sources.questions_path, "questions", "questions")
    from render.rerender import settings_from_record

    colours = set(load_vocabulary().names("color"))
    filenames = set()
    for position, scene in enumerate(scenes):
        where = f"{sources.scenes_path.name} scene {position}"
        if not isinstance(scene, dict) or not isinstance(scene.get("objects"), list) or "image_filename" not in scene:
            raise UsageError(f"{where} is not a scene graph with objects and image_filename")
        for required in ("render", "camera", "lights", "relationships"):
            if required not in scene:
                raise UsageError(f"{where} has no {required!r}: only scenes written by python -m render can be re-rendered")
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
            raise UsageError(f"{where}: family {question['family']!r} is not among the family files; pass --families DIR")
        if question["image_filename"] not in filenames:
            raise UsageError(f"{where} asks about {question['image_filename']}, which no scene in {sources.scenes_path.name} has")
    return scenes_info, scenes, questions_info, questions


def render_defining_record(sources: AugmentSources, settings: AugmentSettings) -> dict[str, Any]:
    """What decides the rendered files; a rerun into the same folder must have the same."""
    return {
        "stage": "dataset.augment",
        "scenes_sha256": file_sha256(sources.scenes_path),
        "swap": settings.swap.describe(),
        "n": settings.n,
        "prefix": settings.prefix,
    }


def claim_output(paths: AugmentPaths, record: Mapping[str, Any], overwrite: bool) -> None:
    """Record what the renders are made from, refusing to mix them with another run's."""
    previous = read_json(paths.run_record) if paths.run_record.exists() else None
    layout = paths.layout
    if overwrite:
        layout.remove_outputs()
        for path in (paths.questions, paths.dropped, paths.translated, paths.kept, paths.report):
            path.unlink(missing_ok=True)
    elif previous is not None and previous != json.loads(json.dumps(record)) and layout.finished_scene_files():
        raise UsageError(f"{paths.root} holds augmented scenes made from other inputs or colour maps; "
                         "rerun the same command to resume, or pass --overwrite")
    layout.prepare()
    atomic_write_json(paths.run_record, dict(record))


def source_mask(masks_dir: Path | None, image_filename: str) -> np.ndarray | None:
    if masks_dir is None:
        return None
    path = confined_path(masks_dir, image_filename, f"source scene {image_filename!r}: image_filename")
    if not path.is_file():
        return None
    with Image.open(path) as image:
        return np.asarray(image).copy()


def render_scene(rerenderer: Any, recoloured: dict[str, Any], source_filename: str, masks_dir: Path | None,
                 paths: AugmentPaths, index: int, blender_version: str) -> dict[str, Any]:
    """Re-render one recoloured scene, check its mask against the source's, write image, mask and scene."""
    from render.outputs import write_scene_files
    from render.worker import object_visibility

    frame = rerenderer.render(recoloured)
    visibility = object_visibility(frame.mask, len(recoloured["objects"]))
    for obj, seen in zip(recoloured["objects"], visibility, strict=True):
        obj["visible_pixels"] = seen["visible_pixels"]
        obj["bbox_2d"] = seen["bbox_2d"]
    recoloured["render"] = {**recoloured["render"], "blender_version": blender_version}
    before = source_mask(masks_dir, source_filename)
    recoloured["augmentation"]["mask_matches_source"] = None if before is None else bool(np.array_equal(before, frame.mask))
    write_scene_files(paths.layout, index, frame.image, frame.mask, recoloured)
    return recoloured


def plan_scenes(scenes: Sequence[dict[str, Any]], swap: ColorSwap, paths: AugmentPaths) -> list[tuple[dict, dict]]:
    """(source, recoloured) for every source scene the colour map changes, in source order."""
    planned = []
    for scene in scenes:
        color_map = swap.map_for(scene)
        if not recoloured_objects(scene, color_map):
            continue
        filename = paths.layout.image_path(int(scene["image_index"])).name
        planned.append((scene, recolour_scene(scene, color_map, filename)))
    return planned


@dataclass(frozen=True)
class RerenderJob:
    """What an augmentation render worker needs; picklable, for worker processes."""

    out: str
    prefix: str
    masks_dir: str | None
    device: Any  # render.devices.DeviceChoice, narrowed to the worker's GPU(s)
    threads: int


class RerenderWorker:
    """Lives in a worker process: one Blender session re-rendering recoloured scenes to files.

    A task is ``(index, recoloured scene, source image filename)``; an unexpected failure of one
    scene is retried RENDER_RETRIES times, then reported (a worker that dies is the scheduler's).
    """

    def __init__(self, job: RerenderJob) -> None:
        from render.executors import drop_blender_script_paths

        drop_blender_script_paths()
        from render.rerender import Rerenderer
        from render.workers import check_gpus_visible

        check_gpus_visible(job.device)
        self.rerenderer = Rerenderer(job.device, job.threads)
        self.version = self.rerenderer.blender_version()
        self.paths = AugmentPaths(Path(job.out), job.prefix)
        self.masks_dir = None if job.masks_dir is None else Path(job.masks_dir)

    def render(self, task: tuple[int, dict[str, Any], str]):
        from render.worker import Outcome

        index, recoloured, source_filename = task
        error = ""
        for _ in range(1 + RENDER_RETRIES):
            try:
                render_scene(self.rerenderer, copy.deepcopy(recoloured), source_filename, self.masks_dir, self.paths, index, self.version)
                return Outcome(index, None)
            except Exception as failure:  # noqa: BLE001 - one scene's failure must not lose the others
                error = f"{recoloured['image_filename']} (from {source_filename}): {type(failure).__name__}: {failure}"
        return Outcome(index, error)

    def close(self) -> None:
        self.rerenderer.close()


def open_rerender_worker(job: RerenderJob) -> RerenderWorker:
    return RerenderWorker(job)


def plan_rendering(settings: AugmentSettings) -> Any:
    """``--device``, ``--workers`` and ``--threads`` resolved as ``python -m render`` resolves them
    (a :class:`render.farm.FarmPlan` of local worker processes)."""
    from render.farm import plan_local, resolve_device
    from render.scheduler import WorkerPolicy

    device = resolve_device(settings.device, None, PROG, stage_logger("dataset").warning)
    return plan_local(device, settings.workers, settings.threads, WorkerPolicy())


def render_pending(planned: Sequence[tuple[dict, dict]], sources: AugmentSources, paths: AugmentPaths, plan: Any) -> list[str]:
    """Render the scenes whose scene file does not exist yet in the worker processes of ``plan``
    (a :class:`render.farm.FarmPlan`); return failures by scene."""
    from render.workers import blender_process_scheduler

    layout = paths.layout
    pending = {int(recoloured["image_index"]): (source, recoloured) for source, recoloured in planned
               if not layout.is_finished(int(recoloured["image_index"]))}
    if not pending:
        return []
    masks_dir = sources.masks_dir if sources.masks_dir is not None else sources.scenes_path.parent / "masks"
    job = RerenderJob(str(paths.root), paths.prefix, str(masks_dir), plan.device, plan.threads)
    failures = []
    with tqdm(total=len(pending), desc="augment: render", unit="scene", file=sys.stderr, dynamic_ncols=True,
              disable=progress_disabled()) as progress:

        def log(line: str) -> None:
            progress.write(f"{PROG}: {line}", file=sys.stderr)

        def task_of(index: int) -> tuple[int, dict[str, Any], str]:
            source, recoloured = pending[index]
            return index, recoloured, source["image_filename"]

        scheduler = blender_process_scheduler(open_rerender_worker, job, plan.threads, layout, min(plan.workers, len(pending)),
                                              plan.policy, log, task_of)
        for outcome in scheduler.run(sorted(pending)):
            if outcome.error:
                failures.append(outcome.error)
            progress.update(1)
    return failures


def warn_of_changed_masks(rendered: Sequence[Mapping[str, Any]]) -> None:
    """Only colours changed, so a mask unlike its source's points at another Blender or changed geometry code."""
    for scene in rendered:
        if scene["augmentation"]["mask_matches_source"] is False:
            stage_logger("dataset").warning(f"{PROG}: warning: the mask of {scene['image_filename']} differs from its "
                                            f"source {scene['augmentation']['source_image_filename']}'s")


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
        "seed": settings.swap.seed,
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
    make_scorer: Callable[[], Any] | None = None,
) -> AugmentResult:
    """Run the whole augmentation into ``out``; see the module docstring for the files.

    Everything that can be wrong with the input is found before anything is written. Scenes are
    re-rendered by Blender worker processes as ``python -m render`` spreads its own (one per GPU,
    or one per core); ``make_scorer`` defaults to the chosen filter backend.
    """
    from questions.families import families_digest, load_families
    from questions.validator import FamilyError
    from translate.native import NativeRealiser

    try:
        families = load_families(settings.families_dir)
    except FamilyError as error:
        raise UsageError(str(error).splitlines()[0]) from None
    scenes_info, scenes, questions_info, questions = read_sources(sources, families)
    paths = AugmentPaths(out, settings.prefix)
    realiser = NativeRealiser(families_dir=settings.families_dir, seed=settings.swap.seed)
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
    info = run_info(sources, settings, scenes_info, questions_info, families_digest(settings.families_dir))
    atomic_write_json(paths.scenes, {"info": info, "scenes": rendered})

    carried, dropped, asked = carry_questions_over(planned, rendered, questions, QuestionRecolourer(families, settings.swap.seed))
    atomic_write_json(paths.questions, {"info": info, "questions": carried})
    translated, untranslated = russian_questions(carried, realiser, settings.yo)
    dropped += untranslated
    write_dropped(paths.dropped, dropped)
    translate_info = {**info, "translate": {"backend": realiser.name, "seed": settings.swap.seed, "yo": settings.yo}}
    atomic_write_json(paths.translated, {"info": translate_info, "questions": translated})

    kept = filter_questions(paths, settings, overwrite, make_scorer or chosen_scorer(settings))
    report = summarise(rendered, len(carried), dropped, len(translated), kept, len(chosen), asked)
    atomic_write_json(paths.report, {"info": info, **report})
    result.counts = report["counts"]
    return result


def carry_questions_over(
    planned: Sequence[tuple[dict, dict]], rendered: Sequence[dict], questions: Sequence[Mapping[str, Any]],
    recolourer: QuestionRecolourer,
) -> tuple[list[dict[str, Any]], list[Dropped], int]:
    """Every source question of every augmented scene, carried over or dropped; and how many were asked."""
    by_image: dict[str, list[Mapping[str, Any]]] = {}
    for question in questions:
        by_image.setdefault(question["image_filename"], []).append(question)
    carried: list[dict[str, Any]] = []
    dropped: list[Dropped] = []
    asked = 0
    for (source, _), scene in zip(planned, rendered, strict=True):
        on_source = by_image.get(source["image_filename"], [])
        asked += len(on_source)
        kept_here, dropped_here = recolourer.questions_for_scene(on_source, scene)
        carried += kept_here
        dropped += dropped_here
    return carried, dropped, asked


def filter_questions(paths: AugmentPaths, settings: AugmentSettings, overwrite: bool, make_scorer: Callable[[], Any]) -> int:
    """The filter stage's own run on the Russian questions (its score cache makes reruns cheap)."""
    from filter.pipeline import FilterJob, run_filter

    job = FilterJob(paths.translated, paths.kept, settings.threshold, settings.batch_size, overwrite)
    return run_filter(job, make_scorer).kept


def chosen_scorer(settings: AugmentSettings) -> Callable[[], Any]:
    def make() -> Any:
        from filter.backends import make_scorer
        from filter.rucola import RucolaOptions

        options = RucolaOptions(model=settings.filter_model) if settings.filter_model else None
        return make_scorer(settings.filter_backend, options)

    return make
