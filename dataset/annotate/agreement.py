"""Answers of several people per item: normalisation, majority, human baseline, agreement, controls.

Normalisation follows ruCLEVR's card (case and spaces) on top of the exact-match normaliser the
scores use (:func:`dataset.evaluate.normalise_answer`: lower case, ASCII punctuation removed),
then runs of white space become one space, the ends are trimmed, and the dataset's ё policy
(:func:`translate.spelling.apply_yo_policy`) is applied.

Tie rule: an item whose most frequent normalised answers are tied has *no* majority answer. It
counts as not matching gold in the human baseline and is disputed. The rule never looks at the
gold answer, so the baseline is a lower bound rather than a lucky pick.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import krippendorff
import numpy as np

from dataset.evaluate import normalise_answer, score_predictions
from translate.spelling import DEFAULT_YO_POLICY, apply_yo_policy


@dataclass(frozen=True, slots=True)
class Answer:
    """One person's answer to one item, as read from an answers file."""

    annotator: str
    item_id: int
    text: str
    source: str  # the file it came from, for messages


@dataclass(frozen=True)
class Majority:
    answer: str | None  # None: no answers, or a tie
    votes: int  # answers equal to the most frequent one
    total: int
    tied: tuple[str, ...]  # the tied answers, when there is a tie

    @property
    def agreement(self) -> float:
        """Share of the answers that equal the most frequent one (1.0 when all agree)."""
        return self.votes / self.total if self.total else 0.0


def normalise(text: str, yo_policy: str = DEFAULT_YO_POLICY) -> str:
    """An answer as people's answers are compared: case, punctuation, spaces and ё as the dataset."""
    return apply_yo_policy(" ".join(normalise_answer(text).split()), yo_policy)


def majority(answers: Iterable[str]) -> Majority:
    """The most frequent of already normalised answers; a tie for first place has no majority."""
    counts = Counter(answers)
    if not counts:
        return Majority(None, 0, 0, ())
    top = max(counts.values())
    leaders = tuple(sorted(answer for answer, count in counts.items() if count == top))
    total = sum(counts.values())
    if len(leaders) > 1:
        return Majority(None, top, total, leaders)
    return Majority(leaders[0], top, total, ())


def majorities(answers_by_item: Mapping[int, Sequence[str]]) -> dict[int, Majority]:
    return {item_id: majority(answers) for item_id, answers in answers_by_item.items()}


def human_baseline(items: Sequence[Mapping[str, Any]], winners: Mapping[int, Majority]) -> dict[str, Any]:
    """Exact match of the majority answer against gold, overall and per question type.

    Only items somebody answered are scored; an item with a tie counts as wrong.
    """
    answered = [item for item in items if winners.get(item["meta"]["id"], Majority(None, 0, 0, ())).total]
    predictions = {item["meta"]["id"]: winners[item["meta"]["id"]].answer for item in answered
                   if winners[item["meta"]["id"]].answer is not None}
    scores = score_predictions(answered, predictions)  # type: ignore[arg-type]  # None answers are left out above
    scores["ties"] = scores.pop("missing")
    return scores


def krippendorff_alpha(answers_by_item: Mapping[int, Mapping[str, str]], annotators: Sequence[str]) -> float | None:
    """Nominal Krippendorff's alpha of ``{item: {annotator: normalised answer}}`` (the krippendorff package).

    None when alpha is undefined: fewer than two answers on every item, or one answer value only.
    """
    codes: dict[str, int] = {}
    table = np.full((len(annotators), len(answers_by_item)), np.nan)
    row_of = {annotator: row for row, annotator in enumerate(annotators)}
    for column, by_annotator in enumerate(answers_by_item.values()):
        for annotator, answer in by_annotator.items():
            table[row_of[annotator], column] = codes.setdefault(answer, len(codes))
    pairable = np.sum(~np.isnan(table), axis=0) >= 2
    if len(codes) < 2 or not pairable.any():
        return None
    value = float(krippendorff.alpha(reliability_data=table[:, pairable], level_of_measurement="nominal"))
    return None if math.isnan(value) else value


@dataclass
class AnnotatorRecord:
    annotator: str
    items: int = 0  # non-control items answered
    controls: int = 0
    controls_correct: int = 0

    @property
    def control_accuracy(self) -> float | None:
        return self.controls_correct / self.controls if self.controls else None

    def below(self, threshold: float) -> bool:
        accuracy = self.control_accuracy
        return accuracy is not None and accuracy < threshold


def annotator_records(answers: Sequence[Answer], gold_of_control: Mapping[int, str],
                      yo_policy: str = DEFAULT_YO_POLICY) -> dict[str, AnnotatorRecord]:
    """Per annotator: items done, control items answered and how many of them equal the known answer."""
    records: dict[str, AnnotatorRecord] = {}
    for answer in answers:
        record = records.setdefault(answer.annotator, AnnotatorRecord(answer.annotator))
        if answer.item_id in gold_of_control:
            record.controls += 1
            record.controls_correct += normalise(answer.text, yo_policy) == normalise(gold_of_control[answer.item_id], yo_policy)
        else:
            record.items += 1
    return dict(sorted(records.items()))
