"""Choosing the ``shots`` split and the ``test`` split that shares no image and no question with it.

Shots are few-shot examples shown to a model before a test question, so a test item must not
reuse a shot's image (the model would have seen the scene answered) nor a shot's question text
(it would have seen the answer pattern). Shots are drawn from the seed, one image each, cycling
over question types in a seeded order so that every type is represented when there are enough.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from dataset.evaluate import normalise_answer
from ruclevr.cli import UsageError

# The stage part of the generator seed, so the shot draw never coincides with another stage's
# stream for the same user seed.
SHOTS_STREAM = zlib.crc32(b"dataset.shots")

Question = Mapping[str, object]


@dataclass(frozen=True)
class Split:
    shots: list[Question]
    test: list[Question]
    dropped_duplicates: int
    dropped_sharing_shot_image: int
    dropped_sharing_shot_question: int

    def counts(self) -> dict[str, int]:
        return {
            "shots": len(self.shots),
            "test": len(self.test),
            "dropped_duplicates": self.dropped_duplicates,
            "dropped_sharing_shot_image": self.dropped_sharing_shot_image,
            "dropped_sharing_shot_question": self.dropped_sharing_shot_question,
        }


def question_key(text: str) -> str:
    """Question text as compared for overlap: exact-match normalisation, whitespace collapsed."""
    return " ".join(normalise_answer(text).split())


def drop_duplicate_questions(questions: Sequence[Question]) -> tuple[list[Question], int]:
    """Keep the first of several identical questions about the same image."""
    seen: set[tuple[str, str]] = set()
    kept: list[Question] = []
    for question in questions:
        key = (str(question["image_filename"]), question_key(str(question["question_ru"])))
        if key not in seen:
            seen.add(key)
            kept.append(question)
    return kept, len(questions) - len(kept)


def select_shots(questions: Sequence[Question], n_shots: int, seed: int) -> list[int]:
    """Indices of ``n_shots`` questions on distinct images, spread over question types."""
    if n_shots == 0:
        return []
    rng = np.random.default_rng([seed, SHOTS_STREAM])
    by_type: dict[str, list[int]] = {}
    for index, question in enumerate(questions):
        by_type.setdefault(str(question["question_type"]), []).append(index)
    type_order = [sorted(by_type)[i] for i in rng.permutation(len(by_type))]
    chosen: list[int] = []
    used_images: set[str] = set()
    while len(chosen) < n_shots:
        chosen_before = len(chosen)
        for question_type in type_order:
            if len(chosen) == n_shots:
                break
            candidates = [i for i in by_type[question_type] if questions[i]["image_filename"] not in used_images]
            if candidates:
                pick = candidates[int(rng.integers(len(candidates)))]
                chosen.append(pick)
                used_images.add(str(questions[pick]["image_filename"]))
        if len(chosen) == chosen_before:
            raise UsageError(
                f"--shots {n_shots} needs {n_shots} images with questions for the shots and more for test; "
                f"only {len(used_images)} images could be used"
            )
    return chosen


def split_shots_and_test(questions: Sequence[Question], n_shots: int, seed: int) -> Split:
    """Drop duplicates, draw the shots, and keep as test every question disjoint from them."""
    unique, dropped_duplicates = drop_duplicate_questions(questions)
    shot_indices = select_shots(unique, n_shots, seed)
    shots = [unique[i] for i in shot_indices]
    shot_images = {q["image_filename"] for q in shots}
    shot_questions = {question_key(str(q["question_ru"])) for q in shots}
    test: list[Question] = []
    sharing_image = sharing_question = 0
    chosen = set(shot_indices)
    for index, question in enumerate(unique):
        if index in chosen:
            continue
        if question["image_filename"] in shot_images:
            sharing_image += 1
        elif question_key(str(question["question_ru"])) in shot_questions:
            sharing_question += 1
        else:
            test.append(question)
    if not test:
        raise UsageError(
            f"no test questions are left after drawing --shots {n_shots} from {len(unique)} questions "
            f"on {len({q['image_filename'] for q in unique})} images; render more scenes or ask for fewer shots"
        )
    return Split(shots, test, dropped_duplicates, sharing_image, sharing_question)
