"""Filtered Russian questions and rendered scenes to MERA ruCLEVR items (``shots`` and ``test``).

Output folder, MERA's layout for a task (:mod:`dataset.document` reads it)::

    OUT/shots.json            {"data": [MERA item, ...]}
    OUT/test.json             {"data": [MERA item, ...]}
    OUT/provenance.json       {"info": {...}, "provenance": [...]}: what MERA has no field for
    OUT/samples/<image>.png   the images the items use; ``inputs.image`` is "samples/<image>.png"

Everything is checked before anything is written, images are placed first and
``provenance.json`` last, so an existing ``provenance.json`` means a complete export.
"""

from __future__ import annotations

import contextlib
import filecmp
import os
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema

from assets.vocabulary import ATTRIBUTES, load_vocabulary
from dataset.document import LEGACY_DOCUMENT_NAME, PROVENANCE_NAME, SPLITS, split_path
from dataset.prompt import PromptSet, instruction_format_problem
from dataset.splits import Split, split_shots_and_test
from ruclevr import __version__
from ruclevr.cli import UsageError
from ruclevr.io import TMP_SUFFIX, atomic_write_json, read_json, read_json_input, remove_stale_temporaries
from ruclevr.paths import confined_path, relative_paths
from translate.answers import answer_to_russian
from translate.spelling import YO_POLICIES

SCHEMA_PATH = Path(__file__).with_name("schema.json")
SAMPLES_DIR = "samples"
IMAGE_META = {"synt_source": ["blender"], "type": ["generated"]}
INPUT_SOURCE = "input_questions"  # the --questions file, under this name in info.sources
RESERVED_SOURCES = ("scenes", INPUT_SOURCE)
REQUIRED_QUESTION_KEYS = ("image_filename", "question_ru", "answer_ru", "question_type", "family")


@dataclass(frozen=True)
class ExportSettings:
    shots: int = 10
    seed: int = 0
    prompt: PromptSet | None = None

    def prompts(self) -> PromptSet:
        """The instruction templates: the shipped set unless others were given."""
        return self.prompt if self.prompt is not None else PromptSet.from_paths()


@lru_cache(maxsize=1)
def item_schema() -> dict[str, Any]:
    return read_json(SCHEMA_PATH)


def question_types() -> tuple[str, ...]:
    """MERA's question types, as the item schema lists them."""
    return tuple(item_schema()["properties"]["meta"]["properties"]["question_type"]["enum"])


def check_prompts(prompts: PromptSet) -> PromptSet:
    """Render every template's instruction for every question type and split once, so a template
    that fails (breaks a limit of the sandbox, or MERA's str.format) is refused before any work."""
    for template in prompts.templates:
        for question_type in question_types():
            for split in SPLITS:
                template.render(question_type=question_type, split=split)
    return prompts


@lru_cache(maxsize=1)
def vocabulary_answers() -> frozenset[str]:
    """Every non-numeric answer MERA's convention allows, under either ё policy."""
    vocabulary = load_vocabulary()
    english = list(vocabulary.answers) + [name for attribute in ATTRIBUTES for name in vocabulary.names(attribute)]
    return frozenset(answer_to_russian(answer, policy) for answer in english for policy in YO_POLICIES)


def read_stage_file(path: Path, list_key: str, what: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Read ``{"info": {...}, list_key: [...]}`` as written by the render and question stages."""
    raw = read_json_input(path, f"{what} file {path}")
    if not isinstance(raw, dict) or not isinstance(raw.get(list_key), list):
        raise UsageError(f"{what} file {path} must be an object with a '{list_key}' list")
    return dict(raw.get("info") or {}), raw[list_key]


def check_question(question: Any, position: int, path: Path) -> None:
    """Raise a UsageError naming the question when it cannot become a MERA item."""
    where = f"{path.name} question {position}"
    if not isinstance(question, dict):
        raise UsageError(f"{where} is not an object")
    missing = [key for key in REQUIRED_QUESTION_KEYS if not isinstance(question.get(key), str) or not question[key]]
    if missing:
        raise UsageError(f"{where} lacks {', '.join(missing)} (is {path.name} the filter stage's output?)")
    if question["question_type"] not in question_types():
        raise UsageError(
            f"{where}: unknown question_type {question['question_type']!r}; allowed: {', '.join(question_types())}"
        )
    answer = question["answer_ru"]
    if not (answer.isascii() and answer.isdigit()) and answer not in vocabulary_answers():
        raise UsageError(
            f"{where}: answer {answer!r} is not in MERA's convention (да/нет, digits, or a vocabulary answer word)"
        )


def index_scenes(scenes: Sequence[Mapping[str, Any]], path: Path) -> dict[str, Mapping[str, Any]]:
    by_image: dict[str, Mapping[str, Any]] = {}
    for position, scene in enumerate(scenes):
        if not isinstance(scene, dict) or not isinstance(scene.get("image_filename"), str):
            raise UsageError(f"{path.name} scene {position} has no image_filename")
        by_image[scene["image_filename"]] = scene
    return by_image


def sample_path(image_filename: str) -> str:
    return f"{SAMPLES_DIR}/{image_filename}"


def make_item(question: Mapping[str, Any], item_id: int, instruction: str) -> dict[str, Any]:
    """One MERA item; the instruction keeps the literal {question} placeholder as MERA's data does."""
    return {
        "instruction": instruction,
        "inputs": {"image": sample_path(str(question["image_filename"])), "question": question["question_ru"]},
        "outputs": question["answer_ru"],
        "meta": {
            "id": item_id,
            "question_type": question["question_type"],
            "image": {key: list(value) for key, value in IMAGE_META.items()},
        },
    }


def make_provenance(
    question: Mapping[str, Any], item_id: int, split: str, scene: Mapping[str, Any], prompt: str
) -> dict[str, Any]:
    """What MERA has no field for, kept so statistics, baselines and audits can trace each item."""
    return {
        "id": item_id,
        "split": split,
        "image_filename": question["image_filename"],
        "image_index": question.get("image_index"),
        "question_index": question.get("question_index"),
        "family": question["family"],
        "question_type": question["question_type"],
        "question_en": question.get("question"),
        "answer_en": question.get("answer"),
        "translator": question.get("translator"),
        "acceptability": question.get("acceptability"),
        "num_objects": len(scene.get("objects", [])),
        "prompt": prompt,
        "augmentation": question.get("augmentation"),
    }


def validate_items(items: Iterable[Mapping[str, Any]]) -> None:
    validator = jsonschema.Draft202012Validator(item_schema())
    for item in items:
        error = jsonschema.exceptions.best_match(validator.iter_errors(item))
        if error is not None:
            location = "/".join(str(part) for part in error.absolute_path) or "(item)"
            raise UsageError(f"item {item['meta']['id']} does not fit MERA's format at {location}: {error.message}")
        check_instruction_fills(item)


def check_instruction_fills(item: Mapping[str, Any]) -> None:
    """The instruction survives MERA's ``instruction.format(**inputs)`` and gains exactly the question."""
    problem = instruction_format_problem(item["instruction"])
    if problem is None:
        filled = item["instruction"].format(**item["inputs"])
        if item["inputs"]["question"] not in filled or item["inputs"]["image"] in filled:
            problem = "instruction.format(**inputs) does not give the question alone"
    if problem is not None:
        raise UsageError(f"item {item['meta']['id']}: {problem}")


def assign_templates(split: Split, prompts: PromptSet, seed: int) -> dict[str, list[int]]:
    """A template per item, rotated per question type over test first, then shots.

    Test comes first so that the scored split on its own gives every prompt an equal share of
    every question type; the shots continue each type's rotation.
    """
    test_types = [str(q["question_type"]) for q in split.test]
    shot_types = [str(q["question_type"]) for q in split.shots]
    assigned = prompts.assign(test_types + shot_types, question_types(), seed)
    return {"test": assigned[: len(test_types)], "shots": assigned[len(test_types):]}


def build_document(
    split: Split,
    scenes_by_image: Mapping[str, Mapping[str, Any]],
    prompts: PromptSet,
    info: dict[str, Any],
    seed: int = 0,
) -> dict[str, Any]:
    """Number items from 1 across shots then test and pair each with its provenance."""
    data: dict[str, list[dict[str, Any]]] = {"shots": [], "test": []}
    provenance = []
    assigned = assign_templates(split, prompts, seed)
    item_id = 1
    for split_name, questions in (("shots", split.shots), ("test", split.test)):
        for question, template_index in zip(questions, assigned[split_name], strict=True):
            template = prompts.templates[template_index]
            instruction = template.render(question_type=str(question["question_type"]), split=split_name)
            data[split_name].append(make_item(question, item_id, instruction))
            scene = scenes_by_image[question["image_filename"]]  # type: ignore[index]  # a file name
            provenance.append(make_provenance(question, item_id, split_name, scene, template.name))
            item_id += 1
    validate_items(data["shots"] + data["test"])
    return {"info": info, "data": data, "provenance": provenance}


def place_image(source: Path, target: Path) -> None:
    """Hard-link (or copy) an image into the export, atomically, skipping an identical one."""
    if target.exists() and filecmp.cmp(source, target, shallow=False):
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.name}.{os.getpid()}{TMP_SUFFIX}")
    try:
        try:
            os.link(source, temporary)
        except OSError:  # another file system, or links not allowed: copy instead
            shutil.copyfile(source, temporary)
        os.replace(temporary, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()


def remove_unused_samples(samples_dir: Path, used: set[str]) -> int:
    """After an --overwrite export, delete images of the previous export that no item uses now."""
    removed = 0
    for path in samples_dir.glob("*.png"):
        if path.name not in used:
            path.unlink()
            removed += 1
    return removed


def source_record(path: Path, info: Mapping[str, Any], base: Path) -> dict[str, Any]:
    # File names and paths relative to ``base`` only: absolute paths would make the same dataset
    # differ between machines, and publish the maker's folders.
    return {"file": path.name, "info": relative_paths(dict(info), base)}


def read_provenance_infos(files: Mapping[str, Path], base: Path) -> dict[str, dict[str, Any]]:
    """The ``info`` records of other stage outputs (questions, translation) to carry into the card."""
    records = {}
    for name, path in files.items():
        if name in RESERVED_SOURCES:
            raise UsageError(f"--provenance {name}=...: the name {name!r} is taken; choose another")
        raw = read_json_input(path, f"--provenance {name}={path}")
        info = (raw.get("info") or {}) if isinstance(raw, dict) else {}
        records[name] = source_record(path, info, base)
    return records


def export_dataset(
    questions_path: Path,
    scenes_path: Path,
    out_dir: Path,
    settings: ExportSettings,
    images_dir: Path | None = None,
    provenance_files: Mapping[str, Path] | None = None,
) -> dict[str, Any]:
    """Write MERA's files and ``samples/`` into ``out_dir``; return the export as one object."""
    images_dir = images_dir if images_dir is not None else scenes_path.parent / "images"
    prompts = settings.prompts()
    questions_info, questions = read_stage_file(questions_path, "questions", "questions")
    scenes_info, scenes = read_stage_file(scenes_path, "scenes", "scenes")
    for position, question in enumerate(questions):
        check_question(question, position, questions_path)
    scenes_by_image = index_scenes(scenes, scenes_path)
    check_images(questions, scenes_by_image, images_dir, questions_path)
    split = split_shots_and_test(questions, settings.shots, settings.seed)
    # In pipeline order: render, the other named stages, then the questions file exported here.
    base = out_dir.parent  # the build folder, when exporting into DATA/mera
    sources = {"scenes": source_record(scenes_path, scenes_info, base)}
    sources.update(read_provenance_infos(provenance_files or {}, base))
    sources[INPUT_SOURCE] = source_record(questions_path, questions_info, base)
    info = {
        "stage": "dataset.export",
        "version": __version__,
        "seed": settings.seed,
        "settings": {"shots": settings.shots, "prompt": prompts.record()},
        "counts": {"input_questions": len(questions), **split.counts()},
        "sources": sources,
        "image_paths": "relative to the folder of this file",
    }
    document = build_document(split, scenes_by_image, prompts, info, settings.seed)
    write_export(document, images_dir, out_dir)
    return document


def check_images(
    questions: Sequence[Mapping[str, Any]], scenes_by_image: Mapping[str, Any], images_dir: Path, questions_path: Path
) -> None:
    for filename in sorted({str(q["image_filename"]) for q in questions}):
        if filename not in scenes_by_image:
            raise UsageError(f"{questions_path.name} asks about {filename}, which no scene in the scenes file has")
        image = confined_path(images_dir, filename, f"{questions_path.name}: image_filename")
        if "/" in filename or "\\" in filename:
            raise UsageError(f"{questions_path.name}: image_filename {filename!r} must be a file name in the images folder")
        if not image.is_file():
            raise UsageError(f"image {image} does not exist (pass --images DIR?)")


def write_export(document: Mapping[str, Any], images_dir: Path, out_dir: Path) -> None:
    samples_dir = out_dir / SAMPLES_DIR
    samples_dir.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(samples_dir)
    used: set[str] = set()
    for split in ("shots", "test"):
        for item in document["data"][split]:
            filename = Path(item["inputs"]["image"]).name
            if filename not in used:
                place_image(images_dir / filename, samples_dir / filename)
                used.add(filename)
    for split in SPLITS:
        atomic_write_json(split_path(out_dir, split), {"data": document["data"][split]})
    atomic_write_json(out_dir / PROVENANCE_NAME, {"info": document["info"], "provenance": document["provenance"]})
    remove_unused_samples(samples_dir, used)
    with contextlib.suppress(FileNotFoundError):  # an export of the earlier single-file layout
        (out_dir / LEGACY_DOCUMENT_NAME).unlink()
