"""Reading people's answers: Label Studio's JSON export, a crowd TSV, and the annotate page's JSON.

Every reader returns :class:`~dataset.annotate.agreement.Answer` records; anything else is a
UsageError naming the file (one line, exit status 2). Blank answers are skipped (not answered).

- Label Studio (``Export → JSON``): a list of tasks, each ``{"data": {"ruclevr_id": ...},
  "annotations": [{"completed_by": <user id or {"id", "email"}>, "was_cancelled": false,
  "result": [{"type": "textarea", "value": {"text": ["..."]}}]}]}``. The annotator is
  ``label-studio:<email>`` when the export names it, else ``label-studio:<user id>``.
- Crowd TSV: a header with at least ``task_id``, ``annotator`` and ``answer`` (``crowd.tsv``'s
  columns plus the platform's worker id and the answer), one row per answer.
- The page's JSON: ``{"format": "ruclevr-annotate/1", "annotator": ..., "answers": [{"id", "answer"}]}``.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dataset.annotate.agreement import Answer
from dataset.annotate.tasks import ANSWER_FIELD, ID_FIELD, PAGE_FORMAT
from ruclevr.cli import UsageError
from ruclevr.io import read_json_input

TSV_COLUMNS = ("task_id", "annotator", "answer")
#: The most people, and answers in all, one import takes: memory stays bounded whatever the files
#: hold (an export spreads its items over at most as many annotators).
MAX_ANNOTATORS = 10_000
MAX_ANSWERS = 1_000_000
FORMATS = "a Label Studio JSON export, the annotate page's JSON or a crowd TSV"


class AnswerTally:
    """The answers read so far, held to MAX_ANNOTATORS people and MAX_ANSWERS answers; the texts
    repeat (a name on every row, the same few answers), so each is kept once. The same person
    answering the same item twice is refused where it stands."""

    def __init__(self) -> None:
        self.answers: list[Answer] = []
        self.annotators: set[str] = set()
        self._texts: dict[str, str] = {}
        self._answered: dict[tuple[str, int], str] = {}  # (annotator, item) -> the file that answered it

    def add(self, annotator: str, item_id: int, text: str, source: str, where: str) -> None:
        if annotator not in self.annotators:
            if len(self.annotators) == MAX_ANNOTATORS:
                raise UsageError(f"{where}: more than {MAX_ANNOTATORS} annotators in the answers, the limit of one import")
            self.annotators.add(annotator)
        if len(self.answers) == MAX_ANSWERS:
            raise UsageError(f"{where}: more than {MAX_ANSWERS} answers, the limit of one import")
        texts = self._texts
        key = (texts.setdefault(annotator, annotator), item_id)
        if key in self._answered:
            raise UsageError(f"annotator {annotator!r} answered task {item_id} twice ({self._answered[key]} and "
                             f"{where}); annotator ids must be unique")
        self._answered[key] = texts.setdefault(source, source)
        self.answers.append(Answer(texts.setdefault(annotator, annotator), item_id, texts.setdefault(text, text),
                                   texts.setdefault(source, source)))


def read_answers(paths: Sequence[Path]) -> list[Answer]:
    """All answers of all files; the same person answering the same item twice is an error."""
    tally = AnswerTally()
    page_annotators: dict[str, Path] = {}
    for path in paths:
        read_answer_file(path, page_annotators, tally)
    if not tally.answers:
        raise UsageError(f"answers file {paths[0] if len(paths) == 1 else ', '.join(map(str, paths))} holds no answers "
                         "(a header only, or only empty answers)")
    return tally.answers


def read_answer_file(path: Path, page_annotators: dict[str, Path], tally: AnswerTally) -> None:
    """Add the answers of one file to ``tally`` (a crowd TSV's a row at a time)."""
    if path.exists() and not path.is_file():  # a FIFO would wait for a writer forever
        raise UsageError(f"answers file {path} is not a regular file")
    if path.suffix.lower() in (".tsv", ".txt"):
        read_crowd_tsv(path, tally)
        return
    raw = read_json_input(path, f"answers file {path}")
    if isinstance(raw, list):
        answers = read_label_studio(raw, path)
    elif isinstance(raw, dict) and raw.get("format") == PAGE_FORMAT:
        annotator = page_annotator(raw, path)
        if annotator in page_annotators:
            raise UsageError(f"{path}: annotator {annotator!r} also saved {page_annotators[annotator]}; "
                             "each person's page file must have their own name")
        page_annotators[annotator] = path
        answers = read_page_json(raw, annotator, path)
    else:
        raise UsageError(f"{path} is not {FORMATS}")
    for answer in answers:
        tally.add(answer.annotator, answer.item_id, answer.text, answer.source, str(path))


#: The largest item id (a MERA ``meta.id`` is in [0, 2**63 - 1]): 19 digits at most.
MAX_ID = 2**63 - 1


def integer_id(value: Any, where: str) -> int:
    """A task id as an item id: an integer, or ASCII digits (at most 19: a 5,000-digit string is refused
    before Python converts it), within [0, 2**63 - 1]."""
    number = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str) and value.strip().isascii() and value.strip().isdigit() and len(value.strip()) <= 19:
        number = int(value)
    if number is None or not 0 <= number <= MAX_ID:
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:40] + "..."
        raise UsageError(f"{where}: task id must be an integer in [0, 2**63 - 1], got {shown}")
    return number


# -- Label Studio --------------------------------------------------------------------------------


def read_label_studio(tasks: list[Any], path: Path) -> list[Answer]:
    answers = []
    for position, task in enumerate(tasks):
        where = f"{path} task {position}"
        if not isinstance(task, dict) or not isinstance(task.get("data"), dict) or not isinstance(
                task.get("annotations", []), list):
            raise UsageError(f"{where}: not a Label Studio task with data and annotations (export as JSON, not "
                             f"JSON_MIN or CSV; is {path} {FORMATS}?)")
        if ID_FIELD not in task["data"]:
            raise UsageError(f"{where}: data has no {ID_FIELD}; was the project made from annotate export's tasks.json?")
        item_id = integer_id(task["data"][ID_FIELD], where)
        for annotation in task.get("annotations", []):
            if not isinstance(annotation, dict) or annotation.get("was_cancelled"):
                continue
            text = label_studio_text(annotation, where)
            if text.strip():
                answers.append(Answer(label_studio_annotator(annotation.get("completed_by"), where), item_id, text,
                                      str(path)))
    return answers


def label_studio_annotator(completed_by: Any, where: str) -> str:
    if isinstance(completed_by, dict):
        name = completed_by.get("email") or completed_by.get("id")
    else:
        name = completed_by
    if name is None or isinstance(name, (bool, list, dict)):
        raise UsageError(f"{where}: an annotation has no completed_by user")
    return f"label-studio:{name}"


def label_studio_text(annotation: dict[str, Any], where: str) -> str:
    """The free-text answer of one annotation (the config's TextArea named ``answer``)."""
    for result in annotation.get("result") or []:
        if isinstance(result, dict) and result.get("from_name", ANSWER_FIELD) == ANSWER_FIELD:
            value = result.get("value") or {}
            if not isinstance(value, dict):
                raise UsageError(f"{where}: an answer's value is {str(value)[:40]!r}, not an object with text")
            text = value.get("text")
            if isinstance(text, list) and all(isinstance(t, str) for t in text):
                return " ".join(text)
            if isinstance(text, str):
                return text
            raise UsageError(f"{where}: an answer's value.text is {text!r}, not text")
    return ""


# -- crowd TSV -----------------------------------------------------------------------------------


def read_crowd_tsv(path: Path, tally: AnswerTally) -> None:
    try:
        handle = open(path, encoding="utf-8-sig", newline="")  # a BOM, as spreadsheets write it, is not a column name
    except OSError as error:
        raise UsageError(f"answers file {path} cannot be read: {error.strerror}") from None
    with handle:
        try:
            reader = csv.DictReader(handle, delimiter="\t")
            missing = [column for column in TSV_COLUMNS if column not in (reader.fieldnames or [])]
            if missing:
                raise UsageError(f"{path}: a crowd TSV needs the columns {', '.join(TSV_COLUMNS)}; "
                                 f"missing {', '.join(missing)} (is {path} {FORMATS}?)")
            source = str(path)
            for line, row in enumerate(reader, start=2):
                where = f"{path} line {line}"
                annotator, text = (row.get("annotator") or "").strip(), row.get("answer") or ""
                if not annotator:
                    raise UsageError(f"{where}: no annotator")
                if text.strip():
                    tally.add(annotator, integer_id(row.get("task_id"), where), text, source, where)
        except UnicodeDecodeError:
            raise UsageError(f"{path} is not UTF-8 text (is it {FORMATS}?)") from None
        except csv.Error as error:
            raise UsageError(f"{path}: not a readable TSV: {error}") from None


# -- the page's JSON -----------------------------------------------------------------------------


def page_annotator(raw: dict[str, Any], path: Path) -> str:
    annotator = raw.get("annotator")
    if not isinstance(annotator, str) or not annotator.strip():
        raise UsageError(f"{path}: the page's JSON has no annotator name")
    return annotator.strip()


def read_page_json(raw: dict[str, Any], annotator: str, path: Path) -> list[Answer]:
    entries = raw.get("answers")
    if not isinstance(entries, list):
        raise UsageError(f"{path}: the page's JSON has no answers list")
    answers = []
    for position, entry in enumerate(entries):
        where = f"{path} answer {position}"
        if not isinstance(entry, dict) or not isinstance(entry.get("answer"), str):
            raise UsageError(f"{where}: expected {{\"id\": 1, \"answer\": \"...\"}}")
        if entry["answer"].strip():
            answers.append(Answer(annotator, integer_id(entry.get("id"), where), entry["answer"], str(path)))
    return answers

