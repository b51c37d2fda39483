"""Choosing the ``shots`` split and the ``test`` split that shares no image and no question with it.

Shots are few-shot examples shown to a model before a test question, so a test item must not
reuse a shot's image (the model would have seen the scene answered) nor a shot's question text
(it would have seen the answer pattern). Shots are drawn from the seed, one image each, cycling
over question types in a seeded order so that every type is represented when there are enough.

The split is computed over :class:`QuestionColumns`, a few numbers a question, so that a million
questions need not be held. Question texts are compared by a 64-bit hash of their
:func:`question_key`: two different texts share one with a probability of about n²/2⁶⁵ for n
texts (3e-8 for a million), and images are compared by name, exactly.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from dataset.mera.em_rules import normalise_answer
from dataset.mera.groups import NO_GROUP, group_key, ungrouped, whole_groups
from ruclevr import streams
from ruclevr.cli import UsageError

Question = Mapping[str, object]


@dataclass(frozen=True)
class SplitCounts:
    dropped_duplicates: int
    dropped_sharing_shot_image: int
    dropped_sharing_shot_question: int
    dropped_incomplete_groups: int = 0  # test items left out with their group (dataset.mera.groups)


@dataclass(frozen=True)
class SplitPositions:
    """The split as positions in the input: ``shots`` in the order drawn, ``test`` ascending."""

    shots: list[int]
    test: np.ndarray
    dropped: SplitCounts

    def counts(self) -> dict[str, int]:
        counts = {"shots": len(self.shots), "test": int(self.test.size), **vars(self.dropped)}
        if not counts["dropped_incomplete_groups"]:  # recorded where the input has groups
            del counts["dropped_incomplete_groups"]
        return counts


@dataclass(frozen=True)
class Split:
    shots: list[Question]
    test: list[Question]
    dropped_duplicates: int
    dropped_sharing_shot_image: int
    dropped_sharing_shot_question: int
    dropped_incomplete_groups: int = 0


def question_key(text: str) -> str:
    """Question text as compared for overlap: exact-match normalisation, whitespace collapsed."""
    return " ".join(normalise_answer(text).split())


def question_key_hash(text: str) -> int:
    """A 64-bit hash of :func:`question_key` (the same on every run and machine)."""
    return int.from_bytes(hashlib.blake2b(question_key(text).encode(), digest_size=8).digest(), "little")


class QuestionColumns:
    """Per question, in input order: its type and image, each numbered in order of first
    appearance, :func:`question_key_hash` of its text, and its group's number (:mod:`dataset.mera.groups`;
    NO_GROUP when it has none)."""

    def __init__(self) -> None:
        self.type_names: list[str] = []
        self.image_names: list[str] = []
        self.image_numbers: dict[str, int] = {}
        self._type_numbers: dict[str, int] = {}
        self._types = array("H")
        self._images = array("i")
        self._texts = array("Q")
        self.group_numbers: dict[str, int] = {}
        self._groups = array("i")

    @classmethod
    def from_questions(cls, questions: Sequence[Question]) -> QuestionColumns:
        columns = cls()
        for question in questions:
            columns.add(str(question["question_type"]), str(question["image_filename"]), str(question["question_ru"]),
                        group_key(question))
        return columns

    def add(self, question_type: str, image: str, text: str, group: str | None = None) -> None:
        self._types.append(_number(question_type, self._type_numbers, self.type_names))
        self._images.append(_number(image, self.image_numbers, self.image_names))
        self._texts.append(question_key_hash(text))
        self._groups.append(NO_GROUP if group is None else self.group_numbers.setdefault(group, len(self.group_numbers)))

    def __len__(self) -> int:
        return len(self._types)

    @property
    def types(self) -> np.ndarray:
        return np.frombuffer(self._types, dtype=np.uint16) if self._types else np.zeros(0, np.uint16)

    @property
    def images(self) -> np.ndarray:
        return np.frombuffer(self._images, dtype=np.int32) if self._images else np.zeros(0, np.int32)

    @property
    def texts(self) -> np.ndarray:
        return np.frombuffer(self._texts, dtype=np.uint64) if self._texts else np.zeros(0, np.uint64)

    @property
    def groups(self) -> np.ndarray:
        return np.frombuffer(self._groups, dtype=np.int32) if self._groups else np.zeros(0, np.int32)


def _number(name: str, numbers: dict[str, int], names: list[str]) -> int:
    number = numbers.get(name)
    if number is None:
        number = numbers[name] = len(names)
        names.append(name)
    return number


def first_occurrences(columns: QuestionColumns) -> np.ndarray:
    """Positions of the questions kept when, of several identical questions about the same image, the first is kept."""
    images, texts = columns.images, columns.texts
    order = np.lexsort((texts, images))  # stable: equal keys stay in input order
    first = np.ones(order.size, dtype=bool)
    first[1:] = (images[order[1:]] != images[order[:-1]]) | (texts[order[1:]] != texts[order[:-1]])
    return np.sort(order[first])


def select_shots(columns: QuestionColumns, candidates: np.ndarray, n_shots: int, seed: int) -> list[int]:
    """Positions of ``n_shots`` of the ``candidates`` (ascending positions) on distinct images, spread over question types."""
    if n_shots == 0:
        return []
    rng = streams.generator("dataset.shots", seed)
    images = columns.images
    candidate_types = columns.types[candidates]
    by_type = {columns.type_names[number]: candidates[candidate_types == number] for number in np.unique(candidate_types)}
    type_order = [sorted(by_type)[i] for i in rng.permutation(len(by_type))]
    chosen: list[int] = []
    used_images: list[int] = []
    while len(chosen) < n_shots:
        chosen_before = len(chosen)
        for question_type in type_order:
            if len(chosen) == n_shots:
                break
            pool = by_type[question_type]
            pool = pool[~np.isin(images[pool], used_images)]
            if pool.size:
                pick = int(pool[int(rng.integers(pool.size))])
                chosen.append(pick)
                used_images.append(int(images[pick]))
        if len(chosen) == chosen_before:
            raise UsageError(
                f"--shots {n_shots} needs {n_shots} images with questions for the shots and more for test; "
                f"only {len(used_images)} images could be used"
            )
    return chosen


def split_positions(columns: QuestionColumns, n_shots: int, seed: int) -> SplitPositions:
    """Drop duplicates, draw the shots, and keep as test every question disjoint from them (and
    only whole groups of linked questions, :mod:`dataset.mera.groups`)."""
    unique = first_occurrences(columns)
    shots = shots_outside_groups(columns, unique, n_shots, seed)
    images, texts = columns.images, columns.texts
    rest = unique[~np.isin(unique, shots)]
    on_shot_image = np.isin(images[rest], images[shots])
    repeating_shot = ~on_shot_image & np.isin(texts[rest], texts[shots])
    disjoint = rest[~on_shot_image & ~repeating_shot]
    test = whole_groups(disjoint, columns.groups)
    if not test.size:
        raise UsageError(
            f"no test questions are left after drawing --shots {n_shots} from {unique.size} questions "
            f"on {np.unique(images[unique]).size} images; render more scenes or ask for fewer shots"
        )
    dropped = SplitCounts(len(columns) - int(unique.size), int(on_shot_image.sum()), int(repeating_shot.sum()),
                          int(disjoint.size - test.size))
    return SplitPositions(shots, test, dropped)


def shots_outside_groups(columns: QuestionColumns, candidates: np.ndarray, n_shots: int, seed: int) -> list[int]:
    """:func:`select_shots` from the ungrouped candidates while they are enough, else from all
    (a shot's group then leaves the test split whole)."""
    alone = ungrouped(candidates, columns.groups)
    if alone.size < candidates.size:
        try:
            return select_shots(columns, alone, n_shots, seed)
        except UsageError:
            pass
    return select_shots(columns, candidates, n_shots, seed)


def split_shots_and_test(questions: Sequence[Question], n_shots: int, seed: int) -> Split:
    """:func:`split_positions` of questions held in a list."""
    split = split_positions(QuestionColumns.from_questions(questions), n_shots, seed)
    return Split([questions[i] for i in split.shots], [questions[i] for i in split.test], **vars(split.dropped))
