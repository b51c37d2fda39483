"""``dataset annotate export``: the items of a split, gold answers hidden, as tasks for people.

Output folder (all of it is what annotators or a labelling tool need; nothing reveals a gold
answer except the known answers of control items in ``crowd.tsv``)::

    TASKS/images/<image>.png           the images, linked or copied from the dataset
    TASKS/label_studio/tasks.json      Label Studio tasks: {"data": {"image", "question", "ruclevr_id"}}
    TASKS/label_studio/config.xml      labelling configuration: image, question, free-text answer
    TASKS/crowd.tsv                    one row per task: task_id, image, question, control, known_answer
    TASKS/assignments.tsv              annotator, position, task_id: who answers what, in which order
    TASKS/annotate.html                a self-contained offline page (each image embedded once)
    TASKS/pages/<annotator>.html       with --page-per-annotator: one page per annotator, only their tasks
    TASKS/annotate.json                how the tasks were made (seed, overlap, controls)

Tasks are the items' ``meta.id``. Control items (known answers) come from another split,
``shots`` by default. Every random choice is drawn from an ``annotate.*`` stream of :mod:`ruclevr.streams`:
the control draw, the order of the tasks, and each annotator's own order.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import StrictUndefined
from jinja2.sandbox import SandboxedEnvironment

from dataset.mera import SPLITS, MeraDocument, check_image_file, place_image, remove_unused_samples
from ruclevr import __version__, streams
from ruclevr.cli import UsageError
from ruclevr.io import atomic_open, atomic_write_json, atomic_write_text, remove_stale_temporaries
from translate import DEFAULT_YO_POLICY, recorded_yo_policy

TEMPLATES = Path(__file__).resolve().parent / "templates"
PAGE_FORMAT = "ruclevr-annotate/1"  # the "format" of the JSON the page saves
IMAGE_FIELD, QUESTION_FIELD, ID_FIELD, ANSWER_FIELD = "image", "question", "ruclevr_id", "answer"
CROWD_COLUMNS = ("task_id", "image", "question", "control", "known_answer")
# Seeds of the generators, one per purpose, so adding a choice never shifts the others.
DEFAULT_CONTROLS = 5


@dataclass(frozen=True)
class TaskFiles:
    root: Path

    @property
    def images(self) -> Path:
        return self.root / "images"

    @property
    def label_studio_tasks(self) -> Path:
        return self.root / "label_studio" / "tasks.json"

    @property
    def label_studio_config(self) -> Path:
        return self.root / "label_studio" / "config.xml"

    @property
    def crowd(self) -> Path:
        return self.root / "crowd.tsv"

    @property
    def assignments(self) -> Path:
        return self.root / "assignments.tsv"

    @property
    def page(self) -> Path:
        return self.root / "annotate.html"

    @property
    def pages(self) -> Path:
        return self.root / "pages"

    def annotator_page(self, name: str) -> Path:
        return self.pages / f"{name}.html"

    @property
    def record(self) -> Path:
        return self.root / "annotate.json"


@dataclass(frozen=True)
class ExportSettings:
    split: str = "test"
    overlap: int = 3
    annotators: int | None = None  # default: as many as the overlap (everybody answers everything)
    controls: int | None = None  # default: up to DEFAULT_CONTROLS, as many as the other splits have
    control_ids: tuple[int, ...] | None = None  # a set chosen by the user instead of a draw from shots
    seed: int = 0
    image_url_prefix: str = ""  # crowd.tsv: prefix of the image column (e.g. where the images are hosted)
    page_per_annotator: bool = False  # also pages/<annotator>.html with only that annotator's tasks

    @property
    def n_annotators(self) -> int:
        return self.annotators if self.annotators is not None else self.overlap


@dataclass(frozen=True)
class Task:
    item_id: int
    question: str
    image: str  # relative to TASKS
    control: bool
    known_answer: str  # empty unless control


def image_source(document: MeraDocument, item: Mapping[str, Any]) -> Path:
    """An item's image file, which must exist inside the dataset's folder."""
    path = document.image_path(item)
    check_image_file(path, f"item {item['meta']['id']}")
    return path


def task_image(item: Mapping[str, Any]) -> str:
    """Where an item's image goes in the tasks folder (relative to it)."""
    return f"images/{Path(str(item['inputs']['image'])).name}"


def image_sources(document: MeraDocument, items: Sequence[Mapping[str, Any]]) -> dict[str, Path]:
    """``images/<name>`` in the tasks folder → the image file, each distinct path checked once."""
    sources: dict[str, Path] = {}
    checked: dict[str, Path] = {}
    for item in items:
        relative = str(item["inputs"]["image"])
        if relative not in checked:
            checked[relative] = image_source(document, item)
        target = task_image(item)
        if sources.setdefault(target, checked[relative]) != checked[relative]:
            raise UsageError(f"two images are named {Path(relative).name}: {sources[target]} and {checked[relative]}")
    return sources


def choose_controls(document: MeraDocument, settings: ExportSettings) -> list[Mapping[str, Any]]:
    """The user's control ids, or ``settings.controls`` items drawn from the other splits."""
    others = [item for split in SPLITS if split != settings.split for item in document.items(split)]
    if settings.control_ids is not None:
        by_id = {item["meta"]["id"]: item for item in others}
        unknown = [str(i) for i in settings.control_ids if i not in by_id]
        if unknown:
            raise UsageError(f"--control-ids {', '.join(unknown)}: not items outside split {settings.split}")
        return [by_id[i] for i in settings.control_ids]
    wanted = min(DEFAULT_CONTROLS, len(others)) if settings.controls is None else settings.controls
    if wanted > len(others):
        raise UsageError(f"--controls {wanted}: only {len(others)} items outside split {settings.split}")
    chosen = streams.generator("annotate.control", settings.seed).choice(len(others), size=wanted, replace=False)
    return [others[int(index)] for index in sorted(chosen)]


def make_tasks(document: MeraDocument, settings: ExportSettings) -> list[Task]:
    """Items and controls in one seeded order."""
    items = document.items(settings.split)
    if not items:
        raise UsageError(f"split {settings.split} has no items")
    chosen = [(item, False) for item in items] + [(item, True) for item in choose_controls(document, settings)]
    order = streams.generator("annotate.task_order", settings.seed).permutation(len(chosen))
    tasks = []
    for index in order:
        item, control = chosen[int(index)]
        tasks.append(Task(item["meta"]["id"], str(item["inputs"]["question"]), task_image(item), control,
                          str(item["outputs"]) if control else ""))
    return tasks


def assign(tasks: Sequence[Task], settings: ExportSettings) -> list[list[int]]:
    """Per annotator, the task ids they answer, in their own seeded order.

    Each item goes to ``overlap`` different annotators, spread evenly (item i of the task order
    to annotators i*K, i*K+1, ... modulo N); every annotator answers every control item.
    """
    n, overlap = settings.n_annotators, settings.overlap
    if overlap > n:
        raise UsageError(f"--overlap {overlap} needs at least as many --annotators (got {n})")
    lists: list[list[int]] = [[] for _ in range(n)]
    items = [task for task in tasks if not task.control]
    for position, task in enumerate(items):
        for k in range(overlap):
            lists[(position * overlap + k) % n].append(task.item_id)
    controls = [task.item_id for task in tasks if task.control]
    assignments = []
    for annotator, ids in enumerate(lists):
        ids = ids + controls
        order = streams.generator("annotate.annotator_order", settings.seed, annotator=annotator).permutation(len(ids))
        assignments.append([ids[int(index)] for index in order])
    return assignments


def annotator_name(index: int) -> str:
    return f"A{index + 1:02d}"


# -- writers -------------------------------------------------------------------------------------


def label_studio_url(task: Task) -> str:
    """How Label Studio serves a local file: ``/data/local-files/?d=`` + the path under its document root."""
    return f"/data/local-files/?d={task.image}"


def label_studio_tasks(tasks: Sequence[Task]) -> list[dict[str, Any]]:
    return [{"data": {IMAGE_FIELD: label_studio_url(task), QUESTION_FIELD: task.question, ID_FIELD: task.item_id}}
            for task in tasks]


def answer_words(yo_policy: str = DEFAULT_YO_POLICY) -> str:
    """The gold answer words people must use (all but numbers), as the dataset card lists them (spelt by the
    dataset's ё policy, as its gold is)."""
    from translate import answer_vocabulary

    vocabulary = answer_vocabulary(yo_policy)
    return "; ".join(", ".join(vocabulary[kind]["gold"]) for kind in vocabulary if kind != "count")


def sandbox(autoescape: bool = True) -> SandboxedEnvironment:
    """The Jinja sandbox every annotation template renders in (HTML and XML autoescaped)."""
    return SandboxedEnvironment(undefined=StrictUndefined, autoescape=autoescape, trim_blocks=True, lstrip_blocks=True,
                                keep_trailing_newline=True)


def label_studio_config(yo_policy: str = DEFAULT_YO_POLICY) -> str:
    template = sandbox().from_string((TEMPLATES / "label_studio_config.xml.j2").read_text(encoding="utf-8"))
    return template.render(words=answer_words(yo_policy))


def crowd_rows(tasks: Sequence[Task], prefix: str) -> Iterator[list[str]]:
    yield list(CROWD_COLUMNS)
    for task in tasks:
        yield [str(task.item_id), prefix + task.image, task.question, "1" if task.control else "0", task.known_answer]


#: A cell a spreadsheet would read as a formula starts with one of these (OWASP's CSV injection list).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_cell(text: str) -> str:
    """``text`` as a spreadsheet shows it, never runs it: a leading formula character gets a ``'``."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def tsv_text(rows: Iterator[list[str]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter="\t", lineterminator="\n")
    writer.writerows([spreadsheet_cell(cell) for cell in row] for row in rows)
    return buffer.getvalue()


def assignment_rows(assignments: Sequence[Sequence[int]]) -> Iterator[list[str]]:
    yield ["annotator", "position", "task_id"]
    for index, ids in enumerate(assignments):
        for position, item_id in enumerate(ids, start=1):
            yield [annotator_name(index), str(position), str(item_id)]


def data_uri(path: Path) -> str:
    return "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode("ascii")


def page_key(tasks: Sequence[Task], settings: ExportSettings) -> str:
    """Names the page's saved work in the browser: the same tasks and settings, the same key."""
    fingerprint = json.dumps([settings.seed, settings.overlap, [t.item_id for t in tasks]])
    return "ruclevr-annotate:" + hashlib.sha256(fingerprint.encode()).hexdigest()[:16]


def write_page(target: Path, root: Path, tasks: Sequence[Task], assignments: Sequence[tuple[str, Sequence[int]]],
               key: str, yo_policy: str = DEFAULT_YO_POLICY) -> None:
    """Render the page in a Jinja sandbox with autoescaping, streaming (one image in memory at a time)."""
    template = sandbox().from_string((TEMPLATES / "annotate.html.j2").read_text(encoding="utf-8"))
    context = {
        "words": answer_words(yo_policy),
        "version": __version__,
        "format": PAGE_FORMAT,
        "key": key,
        "annotators": [{"name": name, "order": " ".join(map(str, ids))} for name, ids in assignments],
        # Each image once (items share images), read from disk one at a time while the page streams out.
        "images": ({"name": image, "uri": data_uri(root / image)} for image in dict.fromkeys(t.image for t in tasks)),
        "tasks": [{"id": task.item_id, "question": task.question, "image": task.image} for task in tasks],
    }
    with atomic_open(target) as handle:
        for chunk in template.generate(context):
            handle.write(chunk)


def export_tasks(document: MeraDocument, out: Path, settings: ExportSettings) -> dict[str, Any]:
    """Write every task file into ``out``; return the ``annotate.json`` record."""
    tasks = make_tasks(document, settings)
    assignments = assign(tasks, settings)
    files = TaskFiles(out)
    items = {item["meta"]["id"]: item for split in SPLITS for item in document.items(split)}
    sources = image_sources(document, [items[task.item_id] for task in tasks])  # all checked before writing
    files.images.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(files.images)
    for relative, source in sources.items():
        place_image(source, files.root / relative)
    remove_unused_samples(files.images, {Path(task.image).name for task in tasks})  # left by an earlier export
    atomic_write_json(files.label_studio_tasks, label_studio_tasks(tasks))
    yo_policy = recorded_yo_policy(document.info.get("sources"))
    atomic_write_text(files.label_studio_config, label_studio_config(yo_policy))
    atomic_write_text(files.crowd, tsv_text(crowd_rows(tasks, settings.image_url_prefix)))
    atomic_write_text(files.assignments, tsv_text(assignment_rows(assignments)))
    key = page_key(tasks, settings)
    named = [(annotator_name(index), ids) for index, ids in enumerate(assignments)]
    write_page(files.page, files.root, tasks, named, key, yo_policy)
    if settings.page_per_annotator:
        for name, ids in named:
            wanted = set(ids)
            write_page(files.annotator_page(name), files.root, [t for t in tasks if t.item_id in wanted], [(name, ids)],
                       key, yo_policy)
    pages = {files.annotator_page(name).name for name, _ in named} if settings.page_per_annotator else set()
    for stale in files.pages.glob("*.html"):  # left by an earlier export
        if stale.name not in pages:
            stale.unlink()
    record = {
        "stage": "dataset.annotate.export",
        "version": __version__,
        "data": document.path.name,
        "seed": settings.seed,
        "settings": {"split": settings.split, "overlap": settings.overlap, "annotators": settings.n_annotators,
                     "controls": sum(task.control for task in tasks)},
        "counts": {"tasks": len(tasks), "items": sum(not task.control for task in tasks)},
        "control_ids": sorted(task.item_id for task in tasks if task.control),
    }
    atomic_write_json(files.record, record)  # last: its presence means a complete export
    return record
