"""How the translate stage reads its input questions.json: each question checked as it is read,
the program of each passed on unread, and the positions of the scenes for a shard."""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruclevr.cli import UsageError
from ruclevr.io import file_sha256
from ruclevr.jsonstream import DocumentError, JsonDocument, UnreadMember, checked_info, input_error
from ruclevr.paths import regular_file
from translate.answers import answer_to_russian


def _program_member() -> UnreadMember:
    """Each question's program, which translation never reads, in the exact form every questions.json
    of this project holds it (nodes of function, inputs, value_inputs): passed on without parsing."""
    # Possessive repeats (*+): what one matched is never tried again shorter (nothing after it could match).
    string = rb'"[ !#-\[\]-~]*+"'  # printable ASCII but quote and backslash: written as it is
    integer = rb"(?:0|[1-9][0-9]*+)"

    def listed(item: bytes) -> bytes:
        return rb"(?:\[\]|\[\n            " + item + rb"(?:,\n            " + item + rb")*+\n          \])"

    node = (rb'\{\n          "function": ' + string + rb',\n          "inputs": ' + listed(integer)
            + rb',\n          "value_inputs": ' + listed(string) + rb"\n        \}")
    return UnreadMember("program", re.compile(rb'\n      "program": \[\n        ' + node + rb"(?:,\n        " + node + rb")*+\n      \],"))


PROGRAM = _program_member()


def russian_answer(index: int, question: Mapping[str, Any], yo_policy: str) -> str:
    try:
        return answer_to_russian(question["answer"], yo_policy)
    except ValueError as error:
        raise UsageError(f"question {index}: {error}") from None


def input_sha256(path: Path) -> str:
    if not path.exists():
        raise UsageError(f"--in {path}: no such file")
    return file_sha256(regular_file(path, "--in"))  # a FIFO would wait forever; unreadable: one line by run_cli


def checked_questions(document: JsonDocument, path: Path) -> Iterator[tuple[Any, bytes | None]]:
    """The items of questions.json with their texts (:meth:`JsonDocument.items_with_text`); a file
    that is not one is a UsageError."""
    try:
        yield from document.items_with_text(unread=PROGRAM)
    except (DocumentError, UnicodeDecodeError) as error:
        raise input_error(error, f"--in {path}:", questions_shape(path)) from None


def questions_info(document: JsonDocument) -> dict[str, Any]:
    return dict(checked_info(document, f"--in {document.path}:", questions_shape(document.path)) or {})


def questions_shape(path: Path) -> str:
    return f"--in {path}: expected an object with a \"questions\" list"


@dataclass(frozen=True)
class Source:
    """What a shard needs to know of a checked questions.json before it starts."""

    count: int
    scene_starts: array  # position of each scene's first question (scenes in file order)



def check_questions(path: Path, *, needs_english: bool, yo_policy: str) -> Source:
    """Check every question of questions.json, one at a time, and find where each scene's begin."""
    document = JsonDocument(path, "questions")
    scene_starts = array("q")
    scene = None
    count = 0
    for index, (question, _) in enumerate(checked_questions(document, path)):
        check_question(path, index, question, needs_english=needs_english)
        russian_answer(index, question, yo_policy)
        here = (question.get("split"), question.get("image_index"))
        if here != scene:
            scene_starts.append(index)
            scene = here
        count = index + 1
    return Source(count, scene_starts)


def check_question(path: Path, index: int, question: object, *, needs_english: bool) -> None:
    if not isinstance(question, dict):
        raise UsageError(f"--in {path}: question {index} is not an object")
    required = ("question", "answer") if needs_english else ("answer",)
    for key in required:
        if not isinstance(question.get(key), str):
            raise UsageError(f"--in {path}: question {index} has no {key!r} string")


