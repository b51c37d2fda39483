"""Questions whose own words decide the answer, or leave open whether a named object counts.

The objects a question names (each ``unique`` node's object: «синий куб», «этот большой
предмет») come with what the text says of them: the attributes their description names, and the
relations the text places them in («Справа от синего предмета находится большой предмет»: the
big one is right of the blue one, so the blue one is left of the big one). Relations are read
both ways (left/right, front/behind) and chained (left of left is left: the scene's relations
are by position along one axis).

A set that an ``exist``, ``none`` or ``count`` tests *holds a named object by the text* when the
text names every attribute the set asks for as that object's and places it in every relation the
set asks for. Such a candidate is decided by its words, not the picture («…большой предмет. Есть
ли предметы левее этого большого предмета?»: yes, the blue one; «металлических цилиндров больше,
чем предметов справа от металлического цилиндра»: there is one metal cylinder), and is not asked.

A named object that is in the tested set on the scene without the text saying so may or may not
be counted by a reader («Есть ли правее этого серого предмета коричневый шар?» after a brown ball
was named: any, or another?). The candidate is asked only if leaving it out gives the same answer.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from questions.functions import ExecutionError, format_answer
from questions.plan import Plan, run_plan_with
from questions.scene_index import SceneIndex

#: What the tested set of an answer node is: the node's only input.
TESTED = ("exist", "none", "count")
INVERSE = {"left": "right", "right": "left", "front": "behind", "behind": "front"}
DECIDED, MAY_COUNT = "decided by its text", "a named object may count"

#: Candidates refused, by (family, reason): a tally for benchmarks and reports; it decides nothing.
REFUSED: Counter[tuple[str, str]] = Counter()


def text_refusal(plan: Plan, choices: Sequence[Any], outputs: Sequence[Any], scene: SceneIndex) -> str | None:
    """Why the candidate is not asked (:data:`DECIDED`, :data:`MAY_COUNT`), or None."""
    named = [t for t, node in enumerate(plan.nodes) if node.kind == "unique"]
    if not named:
        return None
    said = _NamedFacts(plan, choices, named)
    answer: str | None = None
    for node in plan.nodes:
        if node.function not in TESTED:
            continue
        tested = node.inputs[0]
        for thing in named:
            if plan.nodes[thing].inputs[0] == tested:
                continue  # the set is the named object's own description
            if said.forced_in(thing, tested):
                return DECIDED
            bit = 1 << outputs[thing]
            if outputs[tested] & bit:
                answer = answer or format_answer(outputs[-1])
                if _answer_without(plan, choices, outputs, scene, tested, bit) != answer:
                    return MAY_COUNT
    return None


def refuse_decided(plan: Plan, choices: Sequence[Any], outputs: Sequence[Any], scene: SceneIndex) -> bool:
    """Whether the candidate is refused (:func:`text_refusal`); counted in :data:`REFUSED`."""
    reason = text_refusal(plan, choices, outputs, scene)
    if reason is not None:
        REFUSED[(plan.family.id, reason)] += 1
    return reason is not None


def _answer_without(plan: Plan, choices: Sequence[Any], outputs: Sequence[Any], scene: SceneIndex, node: int, bit: int) -> str | None:
    try:
        return format_answer(run_plan_with(plan, tuple(choices), scene, {node: lambda out, _args: out & ~bit}, outputs)[-1])
    except ExecutionError:
        return None


class _NamedFacts:
    """What the text says of the named objects: their attributes, and the relations between them."""

    def __init__(self, plan: Plan, choices: Sequence[Any], named: list[int]) -> None:
        self.plan = plan
        self.choices = choices
        self.named = set(named)
        self.attributes: dict[int, dict[str, str]] = {}
        facts: set[tuple[int, str, int]] = set()
        for thing in named:
            attributes, source = self._description(plan.nodes[thing].inputs[0])
            self.attributes[thing] = attributes
            node = plan.nodes[source]
            if node.function == "relate" and node.inputs[0] in self.named:
                facts.add((thing, choices[source], node.inputs[0]))
        self.facts = _closure(facts)

    def _description(self, t: int) -> tuple[dict[str, str], int]:
        """The attributes the filters from ``t`` back name, and the node they start from."""
        attributes: dict[str, str] = {}
        while self.plan.nodes[t].kind == "filter":
            for slot, value in zip(self.plan.nodes[t].slots, self.choices[t], strict=True):
                if value:
                    attributes[slot.attribute] = value
            t = self.plan.nodes[t].inputs[0]
        return attributes, t

    def forced_in(self, thing: int, t: int) -> bool:
        """Whether the text puts named object ``thing`` in the set of node ``t``."""
        node = self.plan.nodes[t]
        if node.kind == "filter":
            said = self.attributes[thing]
            named = all(said.get(slot.attribute) == value for slot, value in zip(node.slots, self.choices[t], strict=True) if value)
            return named and self.forced_in(thing, node.inputs[0])
        if node.function == "scene":
            return True
        if node.function == "relate":
            return (thing, self.choices[t], node.inputs[0]) in self.facts
        if node.function == "union":
            return any(self.forced_in(thing, i) for i in node.inputs)
        if node.function == "intersect":
            return all(self.forced_in(thing, i) for i in node.inputs)
        if node.function.startswith("same_") and node.inputs[0] in self.named and node.inputs[0] != thing:
            attribute = node.function.removeprefix("same_")
            mine, theirs = self.attributes[thing].get(attribute), self.attributes[node.inputs[0]].get(attribute)
            return mine is not None and mine == theirs
        return False


def _closure(facts: set[tuple[int, str, int]]) -> set[tuple[int, str, int]]:
    """The relations read both ways and chained (a left of b, b left of c: a left of c)."""
    known = facts | {(b, INVERSE[r], a) for a, r, b in facts if r in INVERSE}
    while True:
        chained = {(a, r, c) for a, r, b in known for b2, r2, c in known if b == b2 and r == r2 and a != c}
        if chained <= known:
            return known
        known |= chained
