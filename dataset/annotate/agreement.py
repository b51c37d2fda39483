"""Answers of several people per item: normalisation, majority, human baseline, agreement, controls.

Normalisation follows ruCLEVR's card (case and spaces) on top of the exact-match normaliser the
scores use (:func:`dataset.evaluation.evaluate.normalise_answer`: lower case, ASCII punctuation removed),
then runs of white space become one space, the ends are trimmed, and the dataset's ё policy
(:func:`translate.spelling.apply_yo_policy`) is applied.

Two rules turn an item's answers into one:

- **MERA's rule** (the human baseline): MERA's human-baseline guide has 5 people answer every item
  and takes the majority vote, an answer at least 3 of them give (:data:`MERA_MIN_VOTES`). An item
  without such an answer, or without answers, counts as wrong: the baseline is over every scored item.
- **Plurality** (beside it, and what decides the disputed items): the most frequent answer over
  the answered items. Tie rule: an item whose most frequent normalised answers are tied has *no*
  majority answer; it counts as not matching gold and is disputed. A 2-1-1-1 crowd has a
  plurality answer and no answer under MERA's rule.

Neither rule looks at the gold answer, so each baseline is a lower bound rather than a lucky pick.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from dataset.evaluation import score_predictions
from dataset.mera import normalise_answer
from translate import DEFAULT_YO_POLICY, apply_yo_policy


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


MERA_MIN_VOTES = 3  # MERA's guide: the majority vote of 5 annotators, an answer given by at least 3 of them


def mera_rule(min_votes: int = MERA_MIN_VOTES) -> str:
    """The rule in words, as reports print it (``scores["rule"]``)."""
    return (f"MERA's majority vote: an answer at least {min_votes} people give (of 5); an item without one, "
            "or unanswered, counts as wrong")


MERA_RULE = mera_rule()


def mera_majority(answers: Iterable[str], min_votes: int = MERA_MIN_VOTES) -> Majority:
    """The answer at least ``min_votes`` of already normalised ``answers`` give (MERA's rule), else none."""
    found = majority(answers)
    if found.answer is not None and found.votes >= min_votes:
        return found
    return Majority(None, found.votes, found.total, found.tied)


def mera_human_baseline(items: Sequence[Mapping[str, Any]], answers_by_item: Mapping[int, Iterable[str]],
                        min_votes: int = MERA_MIN_VOTES) -> dict[str, Any]:
    """Exact match of MERA's majority vote against gold over *every* item of ``items``, overall and per
    question type: an item nobody answered, or without ``min_votes`` equal answers, counts as wrong."""
    predictions = {}
    for item in items:
        winner = mera_majority(answers_by_item.get(item["meta"]["id"], ()), min_votes)
        if winner.answer is not None:
            predictions[item["meta"]["id"]] = winner.answer
    scores = score_predictions(items, predictions)
    scores["no_majority"] = scores.pop("missing")
    scores["rule"] = mera_rule(min_votes)
    return scores


def majorities(answers_by_item: Mapping[int, Sequence[str]]) -> dict[int, Majority]:
    return {item_id: majority(answers) for item_id, answers in answers_by_item.items()}


def aggregated_baseline(items: Sequence[Mapping[str, Any]], winners: Mapping[int, Majority]) -> dict[str, Any]:
    """Exact match of the plurality (or otherwise aggregated) answer against gold, overall and per question
    type: the figure beside the human baseline (MERA's rule, :func:`mera_human_baseline`).

    Only items somebody answered are scored; an item with a tie counts as wrong.
    """
    answered = [item for item in items if winners.get(item["meta"]["id"], Majority(None, 0, 0, ())).total]
    predictions = {item["meta"]["id"]: winners[item["meta"]["id"]].answer for item in answered
                   if winners[item["meta"]["id"]].answer is not None}
    scores = score_predictions(answered, predictions)  # type: ignore[arg-type]  # None answers are left out above
    scores["ties"] = scores.pop("missing")
    return scores


def krippendorff_alpha(answers_by_item: Mapping[int, Mapping[str, str]], annotators: Sequence[str]) -> float | None:
    """Nominal Krippendorff's alpha of ``{item: {annotator: normalised answer}}``: 1 − D_o/D_e over the
    items with at least two answers, from how often each answer is given per item and overall (the
    ``krippendorff`` package's value; the package builds an items × answers × answers array, gigabytes
    for a thousand free-text answers, so this counts in memory linear in the answers).

    None when alpha is undefined: fewer than two answers on every item, or one answer value only.
    """
    del annotators  # every annotator's answer is in the table; kept for the callers' form
    overall: Counter[str] = Counter()
    observed = 0.0  # sum over items of (m² − Σ n_c²) / (m − 1): pairs of unequal answers within items
    for by_annotator in answers_by_item.values():
        if len(by_annotator) < 2:
            continue
        counts = Counter(by_annotator.values())
        m = len(by_annotator)
        observed += (m * m - sum(n * n for n in counts.values())) / (m - 1)
        overall.update(counts)
    n = sum(overall.values())
    expected = n * n - sum(count * count for count in overall.values())  # pairs of unequal answers overall
    if len(overall) < 2 or expected == 0:
        return None
    return 1.0 - (n - 1) * observed / expected


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
