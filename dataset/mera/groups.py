"""Groups of linked items (minimal pairs, :mod:`dataset.pairs`): kept in one split, scored together.

A question record of a group carries ``group`` (``{"id", "variant", ...}``); the export numbers
the groups 1, 2, ... in order of first appearance into ``meta.group_id`` and writes the variant
as ``meta.change`` (``original``, ``remove``, ``recolour``, ``material``, ``move``).

- Splitting: shots are drawn from ungrouped questions while there are enough, and a group is
  exported only whole: an item whose group has an item outside its split (a shot, a duplicate
  dropped, an item sharing a shot's image) is dropped from the test split with its group.
- Scoring: a group is right when every one of its items is (group exact match, as MERA scores
  ruHHH's and ruEthics' linked items); reported overall and per question type (a group's items
  ask one question, so share its type), for predictions and for the per-type majority answer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

#: A question in no group (its column value).
NO_GROUP = -1

Item = Mapping[str, Any]


def group_key(question: Mapping[str, Any]) -> str | None:
    """The group id a question record carries (its ``group.id``), or None."""
    group = question.get("group")
    if isinstance(group, Mapping) and isinstance(group.get("id"), str):
        return group["id"]
    return None


def group_variant(question: Mapping[str, Any]) -> str | None:
    group = question.get("group")
    return str(group.get("variant")) if isinstance(group, Mapping) and group.get("variant") is not None else None


def with_group(item: dict[str, Any], provenance: dict[str, Any], question: Mapping[str, Any],
               numbers: Mapping[str, int]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A grouped question's MERA item with ``meta.group_id`` (its group's number, from 1) and
    ``meta.change`` (its variant), and its provenance with the whole ``group`` record."""
    key = group_key(question)
    if key is not None:
        item["meta"].update(group_id=numbers[key] + 1, change=group_variant(question))
        provenance["group"] = question["group"]
    return item, provenance


def ungrouped(positions: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """The positions whose question is in no group."""
    return positions[groups[positions] == NO_GROUP]


def whole_groups(positions: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """``positions`` less every grouped question whose group has a question outside them."""
    if not groups.size or not (groups != NO_GROUP).any():
        return positions
    grouped = groups[groups != NO_GROUP]
    total = np.bincount(grouped, minlength=int(grouped.max()) + 1)
    chosen = groups[positions]
    inside = np.bincount(chosen[chosen != NO_GROUP], minlength=total.size)
    clipped = np.where(chosen == NO_GROUP, 0, chosen)
    keep = (chosen == NO_GROUP) | (inside[clipped] == total[clipped])
    return positions[keep]


def keep_whole_groups(split: Any, groups: np.ndarray) -> Any:
    """``split`` (a :class:`dataset.mera.splits.SplitPositions`; that module imports this one) with its
    test positions less every group they hold only part of (:func:`whole_groups`), the items so
    dropped added to ``dropped_incomplete_groups``."""
    whole = whole_groups(split.test, groups)
    lost = int(split.test.size - whole.size)
    dropped = replace(split.dropped, dropped_incomplete_groups=split.dropped.dropped_incomplete_groups + lost)
    return replace(split, test=whole, dropped=dropped)


@dataclass
class _Group:
    question_type: str
    right: bool = True
    answers: set[str] = field(default_factory=set)
    size: int = 0
    correct: int = 0


class GroupScores:
    """Exact match and group exact match of one split's grouped items, added one item at a time."""

    def __init__(self) -> None:
        self.groups: dict[int, _Group] = {}
        self.answers: dict[str, Counter[str]] = {}  # every item's answer per type: the majority answer set

    def add_answer(self, item: Item) -> None:
        """Every item of the split, grouped or not, for the per-type majority answer."""
        self.answers.setdefault(item["meta"]["question_type"], Counter())[item["outputs"]] += 1

    def add(self, item: Item, is_correct: bool) -> None:
        """A grouped item and whether its prediction is right."""
        question_type = item["meta"]["question_type"]
        group = self.groups.setdefault(int(item["meta"]["group_id"]), _Group(question_type))
        group.right &= is_correct
        group.answers.add(item["outputs"])
        group.size += 1
        group.correct += is_correct

    def result(self, with_predictions: bool) -> dict[str, Any]:
        majority = {name: min(counts, key=lambda answer: (-counts[answer], answer)) for name, counts in self.answers.items()}
        types = sorted({group.question_type for group in self.groups.values()})
        rows = {name: self._row([g for g in self.groups.values() if g.question_type == name], majority, with_predictions)
                for name in types}
        return {"overall": self._row(list(self.groups.values()), majority, with_predictions), "question_types": rows}

    def _row(self, groups: list[_Group], majority: Mapping[str, str], with_predictions: bool) -> dict[str, Any]:
        items = sum(group.size for group in groups)
        # The majority answer set answers every item of a type alike: a group is right when all its answers are that one.
        majority_right = [group.answers == {majority[group.question_type]} for group in groups]
        row: dict[str, Any] = {
            "groups": len(groups),
            "items": items,
            "majority_per_question_type": {"group_exact_match": _share(sum(majority_right), len(groups))},
        }
        if with_predictions:
            row["predictions"] = {"exact_match": _share(sum(group.correct for group in groups), items),
                                  "group_exact_match": _share(sum(group.right for group in groups), len(groups))}
        return row


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


class GroupScoring:
    """:func:`group_scores` fed one item at a time, so that a pass over the items made for another
    score can fill it too (:meth:`passing`)."""

    def __init__(self, predictions: Mapping[int, str] | None, matches: Callable[[str, str], bool]) -> None:
        self.predictions = predictions
        self.matches = matches
        self.scores = GroupScores()

    def add(self, item: Item) -> None:
        self.scores.add_answer(item)
        if item["meta"].get("group_id") is None:
            return
        prediction = self.predictions.get(item["meta"]["id"]) if self.predictions is not None else None
        self.scores.add(item, prediction is not None and self.matches(prediction, item["outputs"]))

    def passing(self, records: Iterable[tuple[Item, Any]]) -> Iterator[tuple[Item, Any]]:
        """``records`` ((item, provenance record) pairs) as they are, each item added on its way."""
        for item, record in records:
            self.add(item)
            yield item, record

    def result(self) -> dict[str, Any] | None:
        """The scores; None when no item is grouped."""
        if not self.scores.groups:
            return None
        return self.scores.result(self.predictions is not None)


def group_scores(items: Iterable[Item], predictions: Mapping[int, str] | None,
                 matches: Callable[[str, str], bool]) -> dict[str, Any] | None:
    """Group exact match of ``predictions`` (and of the per-type majority answer) over the grouped
    items of ``items``; None when no item is grouped. ``matches(prediction, gold)`` is the item rule."""
    scoring = GroupScoring(predictions, matches)
    for item in items:
        scoring.add(item)
    return scoring.result()


def format_group_results(result: Mapping[str, Any]) -> str:
    """A plain-text table: per question type the groups, items, and EM and group EM of each scorer."""
    has_predictions = "predictions" in result["overall"]
    header = f"{'question_type':<16}{'groups':>7}{'items':>7}"
    if has_predictions:
        header += f"{'EM':>10}{'group EM':>10}"
    header += f"{'majority/type group EM':>24}"
    lines = ["minimal pairs: a group is right when all its items are (group exact match)", header]
    for name, row in [*result["question_types"].items(), ("overall", result["overall"])]:
        line = f"{name:<16}{row['groups']:>7}{row['items']:>7}"
        if has_predictions:
            line += f"{row['predictions']['exact_match']:>10.4f}{row['predictions']['group_exact_match']:>10.4f}"
        line += f"{row['majority_per_question_type']['group_exact_match']:>24.4f}"
        lines.append(line)
    return "\n".join(lines)
