"""Answers balanced given what the question says: no value the text names may point to the answer.

Per-family balance (:func:`questions.scene_questions.answer_cap`) keeps each family's answers
even, but a family's text can still tell: "what material is the thing left of the *rubber*
cube?" is mostly "metal", because with two materials a rubber anchor is unique only where rubber
is rare. So answers are also balanced within each (family, value the question names) group: a
question may be asked only if, for every value its program names (``rubber``, ``cube``,
``left``, ...) and for the number of filter values it has (more filters, smaller counts), its
answer stays within :func:`value_cap` of that group's questions. A text-only classifier that
learns what each word implies then learns close to nothing (``benchmarks/blind_bench.py``;
docs/questions.md, "Answers the text does not give away").

The groups are counted from the written programs alone, so a resumed run rebuilds them from its
saved questions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from assets.vocabulary import load_vocabulary
from questions.family import Family
from questions.functions import BOOL, INTEGER
from questions.hypothetical import EDITS

#: How far above an even share (one over the number of answers) one answer may be within a group.
VALUE_MARGIN = 0.02
#: Questions a group may hold over its cap (a run has to start somewhere): one for yes/no and
#: counts, two for attributes (whose cap, an even share of up to 8 answers, is small).
VALUE_SLACK = {BOOL: 1, INTEGER: 1}
ATTRIBUTE_SLACK = 2


def value_cap(family: Family) -> float:
    """The largest share of a (family, named value) group's questions one answer may have."""
    if family.answer_type == BOOL:
        return 0.5 + VALUE_MARGIN
    if family.answer_type == INTEGER:
        return 0.25  # as a count family's own cap (questions.scene_questions.answer_cap)
    return 1.0 / len(load_vocabulary().names(family.answer_type)) + VALUE_MARGIN


def named_features(nodes: Iterable[tuple[str, Sequence[int], Sequence[str]]]) -> tuple[str, ...]:
    """The groups of a question, from its release-form nodes (function, inputs, value inputs):
    every value it names; every pair of values of one description ("rubber+cube": a chain of
    ``filter_*`` nodes); ``#n``, the number of values (a longer description picks fewer objects);
    and ``=k``, how many of them repeat an earlier one ("a red thing between the red cube and ...").
    A what-if program (an edit node, questions/hypothetical.py) also gets ``#k:kinds``, the
    attributes its k-th description names ("#0:color", "#1:shape+size"): how much is removed and how
    narrowly the rest is counted tell the count, not the number of values alone."""
    nodes = list(nodes)
    named: list[str] = []
    pairs: list[str] = []
    description_of: dict[int, list[str]] = {}  # release node -> the values of its description so far
    for position, (function, inputs, values) in enumerate(nodes):
        if not values:
            continue
        named += values
        if function.startswith("filter_"):
            words = description_of.get(inputs[0]) if inputs else None
            value = values[0]
            if words is None:
                words = []
            else:
                pairs += [f"{a}+{value}" if a < value else f"{value}+{a}" for a in words]
            description_of[position] = [*words, value]
    distinct = set(named)
    return (*distinct, *pairs, f"#{len(named)}", f"={len(named) - len(distinct)}", *_description_sizes(nodes, description_of))


def _description_sizes(
    nodes: Sequence[tuple[str, Sequence[int], Sequence[str]]], description_of: Mapping[int, list[str]]
) -> tuple[str, ...]:
    """``#k:kinds`` per description of a what-if program (none for other programs)."""
    if not any(function in EDITS for function, _, _ in nodes):
        return ()
    extended = {inputs[0] for function, inputs, _ in nodes if function.startswith("filter_") and inputs}
    kinds = []
    for position in sorted(description_of):
        if position in extended:
            continue
        chain, named = position, []
        while nodes[chain][0].startswith("filter_"):
            named.append(nodes[chain][0].removeprefix("filter_"))
            chain = nodes[chain][1][0]
        kinds.append("+".join(sorted(named)))
    return tuple(f"#{k}:{kind}" for k, kind in enumerate(kinds))


def program_features(program: Iterable[Mapping[str, Any]]) -> tuple[str, ...]:
    """:func:`named_features` of a written program."""
    return named_features((node["function"], node["inputs"], node["value_inputs"]) for node in program)


class ValueBalance:
    """Answer counts per (family, named value) group."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, str], Counter[str]] = {}

    def record(self, family_id: str, features: Iterable[str], answer: str) -> None:
        for feature in features:
            self.counts.setdefault((family_id, feature), Counter())[answer] += 1

    def allowed(self, family: Family, features: Iterable[str], answer: str) -> bool:
        """Whether one more ``answer`` keeps every group of the question within its cap."""
        cap = value_cap(family)
        slack = VALUE_SLACK.get(family.answer_type, ATTRIBUTE_SLACK)
        for feature in features:
            counts = self.counts.get((family.id, feature))
            if counts is not None and counts[answer] + 1 > cap * (counts.total() + 1) + slack:
                return False
        return True
