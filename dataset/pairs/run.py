"""The minimal-pairs run: choose each scene's edit, re-render the edited scenes, check the change
in the pixels, and write the groups of the questions that stay well posed."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from dataset.augment import (
    AugmentPaths,
    AugmentSettings,
    AugmentSources,
    ColorSwap,
    check_sources,
    chosen_families,
    plan_rendering,
    read_scenes,
    render_pending,
    rerendered_unit,
)
from dataset.mera import place_image, read_stage_file
from dataset.pairs.edits import Edit, edited_scene, renamed
from dataset.pairs.pixels import check_pixels
from dataset.pairs.questions import PairMaker, chosen_edit
from questions import FamilySources, families_digest
from render.legibility import LegibilityReader
from ruclevr import __version__
from ruclevr.cli import UsageError
from ruclevr.io import atomic_write_json, file_sha256, read_json
from ruclevr.paths import confined_path
from ruclevr.records import claim_run

DEFAULT_PREFIX = "ruclevr_pair"
#: The question-record keys a pair needs of its source (the filter stage's output has them all).
NEEDED_KEYS = ("image_filename", "question_index", "program", "family", "params", "answer", "question_ru", "answer_ru", "question_type")


@dataclass(frozen=True)
class PairsSettings:
    seed: int = 0
    n: int | None = None  # only the first n source scenes
    prefix: str = DEFAULT_PREFIX
    families: FamilySources | None = None  # None: those the questions file's info.families records
    yo: str = "e"
    device: str = "cpu"
    workers: int | None = None
    threads: int | None = None


@dataclass
class PairsResult:
    counts: dict[str, Any] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    paths: AugmentPaths | None = None


#: (source scene, its edit, the edited scene graph under its own name).
Planned = tuple[dict[str, Any], Edit, dict[str, Any]]


def questions_by_image(questions: Sequence[Mapping[str, Any]], path: Path) -> dict[str, list[Mapping[str, Any]]]:
    by_image: dict[str, list[Mapping[str, Any]]] = {}
    for position, question in enumerate(questions):
        missing = [key for key in NEEDED_KEYS if key not in question] if isinstance(question, dict) else list(NEEDED_KEYS)
        if missing:
            raise UsageError(f"{path.name} question {position} lacks {', '.join(missing)} (is it the filter stage's output?)")
        by_image.setdefault(question["image_filename"], []).append(question)
    return by_image


def plan_edits(scenes: Sequence[dict[str, Any]], by_image: Mapping[str, list[Mapping[str, Any]]], paths: AugmentPaths,
               seed: int, maker: PairMaker) -> list[Planned]:
    """Per source scene with questions, its chosen edit and the edited graph (none where no edit flips an answer)."""
    planned = []
    for scene in scenes:
        asked = by_image.get(scene["image_filename"], [])
        edit = chosen_edit(scene, asked, seed, maker) if asked else None
        if edit is None:
            continue
        index = int(scene["image_index"])
        planned.append((scene, edit, renamed(edited_scene(scene, edit), index, paths.layout.image_path(index).name, scene, edit)))
    return planned


def render_defining_record(sources: AugmentSources, settings: PairsSettings, family_sources: FamilySources) -> dict[str, Any]:
    """What decides the edited scenes (the questions and their families choose the edits); a rerun into
    the same folder must have the same."""
    return {"stage": "dataset.pairs", "scenes_sha256": file_sha256(sources.scenes_path),
            "questions_sha256": file_sha256(sources.questions_path), "seed": settings.seed, "n": settings.n,
            "prefix": settings.prefix, "families_sha256": families_digest(family_sources)}


def claim_output(paths: AugmentPaths, record: Mapping[str, Any], overwrite: bool) -> None:
    """Record what the edited scenes are made from (``pairs_run.json``), refusing to mix them with another run's."""
    refusal = (f"{paths.root} holds edited scenes made from other inputs, seed, --n or --families; "
               "rerun the same command to resume, or pass --overwrite")
    made = (paths.kept, paths.scenes, paths.root / "pairs_report.json")
    claim_run(rerendered_unit(paths, paths.root / "pairs_run.json", refusal, made), record, overwrite=overwrite)


def source_frame_paths(images_dir: Path, masks_dir: Path, filename: str) -> tuple[Path, Path]:
    """A scene's render and mask, each inside its folder."""
    where = f"scene {filename!r}: image_filename"
    return confined_path(images_dir, filename, where), confined_path(masks_dir, filename, where)


def check_source_frames(planned: Sequence[Planned], images_dir: Path, masks_dir: Path) -> None:
    """Every planned source scene's render and mask are files, checked before anything is rendered
    (the pixel check compares the edited frame with them)."""
    for source, _, _ in planned:
        filename = source["image_filename"]
        image, mask = source_frame_paths(images_dir, masks_dir, filename)
        if not image.is_file():
            raise UsageError(f"the source image of {filename} is not in {images_dir} (the pixel check needs it)")
        if not mask.is_file():
            raise UsageError(f"the source mask of {filename} is not in {masks_dir} (the pixel check needs it; "
                             "pass --masks DIR where the masks lie elsewhere)")


def read_frame(images_dir: Path, masks_dir: Path, filename: str) -> tuple[np.ndarray, np.ndarray]:
    image_path, mask_path = source_frame_paths(images_dir, masks_dir, filename)
    try:
        with Image.open(image_path) as image, Image.open(mask_path) as mask:
            return np.asarray(image.convert("RGB")), np.asarray(mask)
    except OSError as error:
        raise UsageError(f"cannot read the source render of {filename}: {error}") from None


def pairs(sources: AugmentSources, out: Path, settings: PairsSettings, overwrite: bool = False) -> PairsResult:
    """Run the whole minimal-pairs stage into ``out`` (see :mod:`dataset.pairs` for its files)."""
    scenes_info, scenes = read_scenes(sources)
    questions_info, questions = read_stage_file(sources.questions_path, "questions", "questions")
    by_image = questions_by_image(questions, sources.questions_path)
    family_sources, families = chosen_families(settings.families, sources.questions_path, questions_info)
    check_sources(sources, scenes, questions, families)
    source_dir = sources.scenes_path.parent
    masks_dir = sources.masks_dir if sources.masks_dir is not None else source_dir / "masks"
    paths = AugmentPaths(out, settings.prefix)
    chosen = scenes if settings.n is None else scenes[: settings.n]
    maker = PairMaker(families, settings.yo)
    planned = plan_edits(chosen, by_image, paths, settings.seed, maker)
    check_source_frames(planned, source_dir / "images", masks_dir)
    try:
        claim_output(paths, render_defining_record(sources, settings, family_sources), overwrite)
    except OSError as error:
        raise UsageError(f"cannot write to --out {str(out)!r}: {error.strerror or error}") from None
    render_settings = AugmentSettings(swap=ColorSwap(None), device=settings.device, workers=settings.workers, threads=settings.threads)
    result = PairsResult(paths=paths)
    result.failures = render_pending([(source, graph) for source, _, graph in planned], sources, paths, plan_rendering(render_settings))
    if result.failures:
        return result
    kept_scenes: list[dict[str, Any]] = []
    items: list[dict[str, Any]] = []
    report = Report()
    for source, edit, _ in planned:
        edited = read_json(paths.layout.scene_path(int(source["image_index"])))
        check = check_pixels(edit, read_frame(source_dir / "images", masks_dir, source["image_filename"]), edited,
                             read_frame(out / "images", out / "masks", edited["image_filename"]), reader_for(edited))
        edited["augmentation"]["pixels"] = check.record()
        report.scene(edited, check.problems)
        if check.problems:
            continue
        made = maker.pairs(by_image[source["image_filename"]], source, edited, edited["augmentation"]["change"], settings.seed)
        groups = [paired for paired in made if paired.original is not None and paired.edited is not None]
        report.questions(made, edit.kind)
        if not groups:
            continue
        place_image(confined_path(source_dir / "images", source["image_filename"], "image_filename"), out / "images" / source["image_filename"])
        kept_scenes += [source, edited]
        items += [item for paired in groups for item in (paired.original, paired.edited) if item is not None]
    info = {"stage": "dataset.pairs", "version": __version__, "seed": settings.seed,
            "settings": {"n": settings.n, "prefix": settings.prefix, "yo": settings.yo},
            "sources": {"scenes": {"file": sources.scenes_path.name, "info": scenes_info},
                        "questions": {"file": sources.questions_path.name, "info": questions_info}},
            "families": family_sources.record()}
    atomic_write_json(paths.scenes, {"info": info, "scenes": kept_scenes})
    atomic_write_json(paths.kept, {"info": {**questions_info, "pairs": info}, "questions": items})
    result.counts = report.summary(len(chosen), len(planned))
    atomic_write_json(out / "pairs_report.json", {"info": info, **result.counts})
    return result


_READERS: dict[int, LegibilityReader] = {}


def reader_for(scene: Mapping[str, Any]) -> LegibilityReader:
    look = int(scene["render"].get("look", 3))
    if look not in _READERS:
        try:
            _READERS[look] = LegibilityReader.for_look(look)
        except ValueError as error:
            raise UsageError(f"{scene['image_filename']}: {error}") from None
    return _READERS[look]


class Report:
    """Counts of the run: edited scenes refused by the pixels (and why), groups by change and type."""

    def __init__(self) -> None:
        self.refused: Counter[str] = Counter()
        self.refused_scenes: list[dict[str, Any]] = []
        self.region_change: dict[str, list[float]] = {}
        self.dropped: Counter[str] = Counter()
        self.groups: Counter[tuple[str, str, bool]] = Counter()

    def scene(self, edited: Mapping[str, Any], problems: Sequence[str]) -> None:
        kind = edited["augmentation"]["change"]["kind"]
        self.region_change.setdefault(kind, []).append(edited["augmentation"]["pixels"]["region_change"])
        for problem in problems[:1]:
            self.refused[f"{kind}: {problem.split(':')[0]}"] += 1
            self.refused_scenes.append({"image_filename": edited["image_filename"], **edited["augmentation"]})

    def questions(self, made: Sequence[Any], kind: str) -> None:
        for paired in made:
            if paired.reason is not None:
                self.dropped[paired.reason] += 1
            else:
                self.groups[(kind, paired.original["question_type"], paired.original["group"]["answer_flips"])] += 1

    def summary(self, source_scenes: int, edited_scenes: int) -> dict[str, Any]:
        by_kind: Counter[str] = Counter()
        by_type: Counter[str] = Counter()
        flipped = 0
        for (kind, question_type, flips), count in self.groups.items():
            by_kind[kind] += count
            by_type[question_type] += count
            flipped += count * flips
        changes = {kind: {"scenes": len(values), "min": min(values), "median": float(np.median(values))}
                   for kind, values in sorted(self.region_change.items())}
        return {
            "source_scenes": source_scenes,
            "edited_scenes": edited_scenes,
            "refused_by_pixels": dict(sorted(self.refused.items())),
            "region_change": changes,
            "groups": sum(self.groups.values()),
            "groups_answer_flips": flipped,
            "groups_by_change": dict(sorted(by_kind.items())),
            "groups_by_question_type": dict(sorted(by_type.items())),
            "questions_dropped": dict(sorted(self.dropped.items())),
            "refused_scenes": self.refused_scenes,
        }
