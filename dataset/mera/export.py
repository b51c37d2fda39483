"""Filtered Russian questions and rendered scenes to MERA ruCLEVR items (``shots`` and ``test``).

Output folder, MERA's layout for a task (:mod:`dataset.mera.document` reads it)::

    OUT/shots.json            {"data": [MERA item, ...]}
    OUT/test.json             {"data": [MERA item, ...]}
    OUT/provenance.json       {"info": {...}, "provenance": [...]}: what MERA has no field for
    OUT/samples/<image>.png   the images the items use; ``inputs.image`` is "samples/<image>.png"

Everything is checked before anything is written, images are placed first and
``provenance.json`` last, so an existing ``provenance.json`` means a complete export.

Memory stays bounded whatever the number of questions: a first pass over the questions file
checks each question and keeps only :class:`dataset.mera.splits.QuestionColumns` (a few numbers a
question), a pass over the scenes file keeps each asked-about scene's number of objects (all the
export uses of a scene), and the split and the prompt of every item are computed from those. A
second pass over the questions writes the items one at a time, each checked against MERA's
format as it is made, under temporary names that are renamed once all are complete
(:class:`ruclevr.io.StagedFiles`); the test items' provenance waits on disk until the
shots' (few, kept) is written before it.
"""

from __future__ import annotations

import contextlib
import filecmp
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema
import numpy as np

from assets.vocabulary import ATTRIBUTES, load_vocabulary
from dataset.mera.document import LEGACY_DOCUMENT_NAME, PROVENANCE_NAME, SPLITS, split_path
from dataset.mera.export_files import SpooledList
from dataset.mera.groups import group_key, keep_whole_groups, with_group
from dataset.mera.prompt import PromptSet, instruction_format_problem
from dataset.mera.splits import QuestionColumns, SplitPositions, split_positions
from dataset.mera.stats import integer_comparison
from ruclevr import __version__
from ruclevr.cli import UsageError
from ruclevr.io import (
    StagedFiles,
    atomic_link_or_copy,
    atomic_write_json,
    read_json,
    read_json_input,
    remove_stale_temporaries,
)
from ruclevr.jsonstream import (
    DocumentError,
    DocumentShapeError,
    LazyList,
    checked_info,
    checked_items,
    input_document,
    input_error,
    write_json,
)
from ruclevr.paths import check_real_folders, confined_path, relative_paths
from translate import YO_POLICIES, answer_to_russian

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
    seed_record: int | str | None = None  # what the record says the seed is; a secret seed's commitment
    select: Any = None  # dataset.releases.like.LikeSelection: the test items of a set like an earlier one

    @property
    def recorded_seed(self) -> int | str:
        return self.seed if self.seed_record is None else self.seed_record

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


def read_questions(path: Path) -> tuple[dict[str, Any], QuestionColumns]:
    """The questions file's ``info`` and, every question checked, its :class:`QuestionColumns`."""
    label, shape = stage_file_labels(path, "questions")
    document = input_document(path, "questions", label)
    info = checked_info(document, label, shape)
    columns = QuestionColumns()
    for position, question in enumerate(checked_items(document, label, shape)):
        check_question(question, position, path)
        columns.add(question["question_type"], question["image_filename"], question["question_ru"], group_key(question))
    return info, columns


def read_scene_sizes(path: Path, image_numbers: Mapping[str, int]) -> tuple[dict[str, Any], np.ndarray]:
    """The scenes file's ``info`` and the number of objects in the scene of each image in
    ``image_numbers`` (by its number; -1 where no scene has the image)."""
    label, shape = stage_file_labels(path, "scenes")
    document = input_document(path, "scenes", label)
    info = checked_info(document, label, shape)
    sizes = np.full(len(image_numbers), -1, dtype=np.int64)
    for position, scene in enumerate(checked_items(document, label, shape)):
        if not isinstance(scene, dict) or not isinstance(scene.get("image_filename"), str):
            raise UsageError(f"{path.name} scene {position} has no image_filename")
        number = image_numbers.get(scene["image_filename"])
        if number is not None:
            sizes[number] = len(scene.get("objects", []))
    return info, sizes


def stage_file_labels(path: Path, list_key: str) -> tuple[str, str]:
    """How errors name a stage file, and the line for one of another shape (as :func:`read_stage_file`'s)."""
    label = f"{list_key} file {path}"
    return label, f"{label} must be an object with a '{list_key}' list"


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


def make_provenance(question: Mapping[str, Any], item_id: int, split: str, num_objects: int, prompt: str) -> dict[str, Any]:
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
        "num_objects": num_objects,
        "prompt": prompt,
        "augmentation": question.get("augmentation"),
        "counts": question.get("counts"),  # the program's count nodes (dataset stats: degenerate shares)
        "comparison": integer_comparison(question),
    }


@lru_cache(maxsize=1)
def item_validator() -> jsonschema.protocols.Validator:
    return jsonschema.Draft202012Validator(item_schema())


def validate_items(items: Iterable[Mapping[str, Any]]) -> None:
    for item in items:
        validate_item(item)


def validate_item(item: Mapping[str, Any]) -> None:
    error = jsonschema.exceptions.best_match(item_validator().iter_errors(item))
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


def place_image(source: Path, target: Path) -> None:
    """Hard-link (or copy) an image into the export, atomically, skipping an identical one."""
    if target.exists() and filecmp.cmp(source, target, shallow=False):
        return
    atomic_link_or_copy(source, target)


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
    """The ``info`` records of other stage outputs (questions, translation) to carry into the card;
    each is read without its list."""
    records = {}
    for name, path in files.items():
        if name in RESERVED_SOURCES:
            raise UsageError(f"--provenance {name}=...: the name {name!r} is taken; choose another")
        records[name] = source_record(path, read_info(path, f"--provenance {name}={path}"), base)
    return records


def read_info(path: Path, label: str) -> dict[str, Any]:
    """A stage output's ``info`` object; ``{}`` when it has none or is not a JSON object."""
    try:
        return input_document(path, "questions", label).info()
    except DocumentShapeError:
        return {}
    except (DocumentError, UnicodeDecodeError) as error:
        raise input_error(error, label) from None


def export_dataset(
    questions_path: Path,
    scenes_path: Path,
    out_dir: Path,
    settings: ExportSettings,
    images_dir: Path | None = None,
    provenance_files: Mapping[str, Path] | None = None,
) -> dict[str, Any]:
    """Write MERA's files and ``samples/`` into ``out_dir``; return the export's ``info`` (its counts among them)."""
    images_dir = images_dir if images_dir is not None else scenes_path.parent / "images"
    check_real_folders(out_dir, [SAMPLES_DIR])
    prompts = settings.prompts()
    questions_info, columns = read_questions(questions_path)
    scenes_info, scene_sizes = read_scene_sizes(scenes_path, columns.image_numbers)
    check_images(columns.image_names, scene_sizes, images_dir, questions_path)
    split = split_positions(columns, settings.shots, settings.seed)
    if settings.select is not None:
        split = settings.select.apply(questions_path, columns, split, scene_sizes, settings.seed)
        split = keep_whole_groups(split, columns.groups)  # a group the selection left incomplete leaves whole
    # In pipeline order: render, the other named stages, then the questions file exported here.
    base = out_dir.parent  # the build folder, when exporting into DATA/mera
    sources = {"scenes": source_record(scenes_path, scenes_info, base)}
    sources.update(read_provenance_infos(provenance_files or {}, base))
    sources[INPUT_SOURCE] = source_record(questions_path, questions_info, base)
    info = {
        "stage": "dataset.export",
        "version": __version__,
        "seed": settings.recorded_seed,
        "settings": {"shots": settings.shots, "prompt": prompts.record()},
        "counts": {"input_questions": len(columns), **split.counts()},
        "sources": sources,
        "image_paths": "relative to the folder of this file",
        **({"like": settings.select.record()} if settings.select is not None else {}),
    }
    plan = ExportPlan(columns, split, scene_sizes, prompts, *assign_templates(columns, split, prompts, settings.seed))
    write_streamed_export(questions_path, plan, info, images_dir, out_dir)
    return info


def check_images(image_names: list[str], scene_sizes: np.ndarray, images_dir: Path, questions_path: Path) -> None:
    """Each image the questions ask about has a scene and a file (``scene_sizes`` by image number, -1: no scene)."""
    for number, filename in sorted(enumerate(image_names), key=lambda numbered: numbered[1]):
        if scene_sizes[number] < 0:
            raise UsageError(f"{questions_path.name} asks about {filename}, which no scene in the scenes file has")
        image = confined_path(images_dir, filename, f"{questions_path.name}: image_filename")
        if "/" in filename or "\\" in filename:
            raise UsageError(f"{questions_path.name}: image_filename {filename!r} must be a file name in the images folder")
        if not image.is_file():
            raise UsageError(f"image {image} does not exist (pass --images DIR?)")


def assign_templates(columns: QuestionColumns, split: SplitPositions, prompts: PromptSet, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A template per item of test and of shots, rotated per question type over test first, then shots.

    Test comes first so that the scored split on its own gives every prompt an equal share of
    every question type; the shots continue each type's rotation.
    """
    type_numbers = np.array([question_types().index(name) for name in columns.type_names], dtype=np.intp)
    items = np.concatenate([split.test, np.array(split.shots, dtype=np.intp)])
    assigned = prompts.assign_numbers(type_numbers[columns.types[items]], seed)
    return assigned[: split.test.size], assigned[split.test.size:]


@dataclass(frozen=True)
class ExportPlan:
    """What the second pass over the questions needs: which are shots and test, and each item's template."""

    columns: QuestionColumns
    split: SplitPositions
    scene_sizes: np.ndarray
    prompts: PromptSet
    test_templates: np.ndarray
    shot_templates: np.ndarray

    def record(self, question: Mapping[str, Any], item_id: int, split: str, template_index: int) -> tuple[dict, dict]:
        """The MERA item of a question and its provenance record."""
        template = self.prompts.templates[template_index]
        instruction = template.render(question_type=str(question["question_type"]), split=split)
        num_objects = int(self.scene_sizes[self.columns.image_numbers[question["image_filename"]]])
        item, provenance = make_item(question, item_id, instruction), make_provenance(question, item_id, split, num_objects, template.name)
        return with_group(item, provenance, question, self.columns.group_numbers)

    def check_instructions(self) -> None:
        """Render every instruction the items will have (each template, question type and split once),
        so that a template failing on one fails before anything is written."""
        for split, positions, templates in (("shots", np.array(self.split.shots, dtype=np.intp), self.shot_templates),
                                            ("test", self.split.test, self.test_templates)):
            pairs = np.unique(self.columns.types[positions].astype(np.intp) * len(self.prompts.templates) + templates)
            for pair in pairs.tolist():
                question_type = self.columns.type_names[pair // len(self.prompts.templates)]
                self.prompts.templates[pair % len(self.prompts.templates)].render(question_type=question_type, split=split)

    def used_images(self) -> list[str]:
        """The images of the shots and the test items."""
        numbers = np.unique(self.columns.images[np.concatenate([self.split.test, np.array(self.split.shots, dtype=np.intp)])])
        return [self.columns.image_names[number] for number in numbers]


class TestItems(LazyList):
    """The second pass over the questions: the test items in order, each checked as it is made, their
    provenance records appended to ``records``, and the shots' questions kept (they are few)."""

    def __init__(self, questions_path: Path, plan: ExportPlan, records: SpooledList) -> None:
        self.questions_path = questions_path
        self.plan = plan
        self.records = records
        self.shot_questions: dict[int, Mapping[str, Any]] = {}

    def __iter__(self) -> Iterator[dict[str, Any]]:
        label, shape = stage_file_labels(self.questions_path, "questions")
        shot_ranks = {position: rank for rank, position in enumerate(self.plan.split.shots)}
        test, first_id = self.plan.split.test, len(shot_ranks) + 1
        rank = 0
        for position, question in enumerate(checked_items(input_document(self.questions_path, "questions", label), label, shape)):
            if position in shot_ranks:
                self.shot_questions[shot_ranks[position]] = question
            elif rank < test.size and test[rank] == position:
                item, record = self.plan.record(question, first_id + rank, "test", int(self.plan.test_templates[rank]))
                validate_item(item)
                self.records.append(record)
                rank += 1
                yield item
        if rank != test.size or len(self.shot_questions) != len(shot_ranks):
            raise UsageError(f"{label} changed during the export; run it again")

    def shots(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The shot items (numbered from 1, in the order drawn) and their provenance records, once the test items are written."""
        made = [self.plan.record(self.shot_questions[rank], rank + 1, "shots", int(self.plan.shot_templates[rank]))
                for rank in range(len(self.shot_questions))]
        return [item for item, _ in made], [record for _, record in made]


class ProvenanceRecords(LazyList):
    """The shots' provenance records, then the test items' from the spool."""

    def __init__(self, shots: list[dict[str, Any]], test: SpooledList) -> None:
        self.shots = shots
        self.test = test

    def __iter__(self) -> Iterator[Any]:
        yield from self.shots
        yield from self.test


def write_streamed_export(questions_path: Path, plan: ExportPlan, info: Mapping[str, Any], images_dir: Path, out_dir: Path) -> None:
    """Every instruction rendered, then :func:`write_staged_export`; a folder it made is removed again if that fails."""
    plan.check_instructions()
    created = not out_dir.exists()
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        write_staged_export(questions_path, plan, info, images_dir, out_dir)
    except BaseException:
        if created:  # leave no empty folder behind
            with contextlib.suppress(OSError):
                out_dir.rmdir()
        raise


def write_staged_export(questions_path: Path, plan: ExportPlan, info: Mapping[str, Any], images_dir: Path, out_dir: Path) -> None:
    """The second pass: items written under temporary names, images placed, then all renamed, ``provenance.json`` last."""
    targets = [split_path(out_dir, "shots"), split_path(out_dir, "test"), out_dir / PROVENANCE_NAME]
    with StagedFiles(targets) as staged, SpooledList(out_dir / PROVENANCE_NAME) as test_records:
        test_items = TestItems(questions_path, plan, test_records)
        write_json(staged[targets[1]], {"data": test_items})
        shot_items, shot_records = test_items.shots()
        validate_items(shot_items)
        atomic_write_json(staged[targets[0]], {"data": shot_items})
        write_json(staged[targets[2]], {"info": info, "provenance": ProvenanceRecords(shot_records, test_records)})
        used = place_images(plan.used_images(), images_dir, out_dir / SAMPLES_DIR)
        staged.commit()
    finish_export(out_dir, used)


def place_images(filenames: Iterable[str], images_dir: Path, samples_dir: Path) -> set[str]:
    """Place each image once into ``samples_dir``; the names placed."""
    samples_dir.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(samples_dir)
    used: set[str] = set()
    for filename in filenames:
        if filename not in used:
            place_image(images_dir / filename, samples_dir / filename)
            used.add(filename)
    return used


def finish_export(out_dir: Path, used: set[str]) -> None:
    """Once the export's files are in place: remove images no item uses and the earlier single-file layout."""
    remove_unused_samples(out_dir / SAMPLES_DIR, used)
    with contextlib.suppress(FileNotFoundError):  # an export of the earlier single-file layout
        (out_dir / LEGACY_DOCUMENT_NAME).unlink()


def write_export(document: Mapping[str, Any], images_dir: Path, out_dir: Path) -> None:
    """Write an export held as one object ``{"info", "data": {"shots", "test"}, "provenance"}``."""
    items = [item for split in SPLITS for item in document["data"][split]]
    used = place_images((Path(item["inputs"]["image"]).name for item in items), images_dir, out_dir / SAMPLES_DIR)
    for split in SPLITS:
        atomic_write_json(split_path(out_dir, split), {"data": document["data"][split]})
    atomic_write_json(out_dir / PROVENANCE_NAME, {"info": document["info"], "provenance": document["provenance"]})
    finish_export(out_dir, used)
