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

A named object the text ties to the tested set, by its words (every attribute the set asks for
is named of it: «Есть ли правее этого серого предмета коричневый шар?» after a brown ball was
named) or by a relation the text states (the set is found by one: «Позади коричневого объекта
находится другой объект. Есть ли матовые объекты впереди этого другого объекта?»), but not by
both, may or may not be counted by a reader (any, or another?). Where it is in the set on the
scene, the candidate is asked only if leaving it out gives the same answer. A named object the
text does not tie to the set (a yellow thing, and «металлических предметов» across the scene)
counts where the picture puts it, as any other object.

A set whose words name every attribute a named object's scene-wide description names («сферы …
справа от сферы», where «сфера» is the only sphere) can hold no object but that one: where the
words also keep it out (it is the set's anchor, or said to be elsewhere) the set is empty
whatever the picture, and where they put it in, the set is that object alone; either way the
candidate is decided by its text.

What-if questions (:mod:`questions.hypothetical`) are read in the scene after the edit: an object
recoloured or made of another material has its new value in every set after the edit, and a
relation the text states of an object that changes places holds no more. The edited object's
own place in a counted set after the edit is what the question asks («Если бы куб был
металлическим, сколько было бы металлических предметов?»: the cube counts, the picture decides
the rest): it is not refused for that, only where its words settle the whole set (the rule
above: «Если бы красный куб был металлическим, сколько было бы красных металлических кубов?»
is 1 whatever the picture). Another named object the edit does not change is read as in any
question («Если поменять местами A и шар B, сколько шаров окажется левее A?»: may B count?).

An object found by a relation whose words fit an earlier named object is said «другой» by the
realiser; where that leaves open which object it sets apart (:func:`other_is_open`), the
candidate is not asked either (:data:`OTHER_OPEN`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, NamedTuple

from questions.functions import ExecutionError, format_answer
from questions.hypothetical import EDITS
from questions.image_geometry import OPPOSITE
from questions.named_relations import (
    COMPARISONS,
    FoundBy,
    all_related,
    beside_the_only_one,
    implied_attributes,
    nested_counts,
    with_two_valued,
)
from questions.plan import Plan, run_plan_with
from questions.scene_index import SceneIndex
from questions.text import fits

#: What the tested set of an answer node is: the node's only input.
TESTED = ("exist", "none", "count")
DECIDED, MAY_COUNT = "decided by its text", "a named object may count"
OTHER_OPEN = "«другой» of which named object"

#: Candidates refused, by (family, reason): a tally for benchmarks and reports; it decides nothing.
REFUSED: Counter[tuple[str, str]] = Counter()


def text_refusal(plan: Plan, choices: Sequence[Any], outputs: Sequence[Any], scene: SceneIndex) -> str | None:
    """Why the candidate is not asked (:data:`DECIDED`, :data:`MAY_COUNT`, :data:`OTHER_OPEN`), or None."""
    named = [t for t, node in enumerate(plan.nodes) if node.kind == "unique"]
    if not named:
        return None
    if other_is_open(plan, choices, named):
        return OTHER_OPEN
    said: _NamedFacts | None = None  # made once a named object is in a tested set
    answer: str | None = None
    named_bits = 0
    for thing in named:
        named_bits |= 1 << outputs[thing]
    for node in plan.nodes:
        if node.function not in TESTED:
            continue
        tested = node.inputs[0]
        if not outputs[tested] & ~named_bits:  # nothing in the set but named objects: do the words settle it?
            said = said or _facts_of(plan, choices, named)
            if said.settled(tested, choices):
                return DECIDED
        for thing in named:
            if plan.nodes[thing].inputs[0] == tested:
                continue  # the set is the named object's own description
            bit = 1 << outputs[thing]
            if not outputs[tested] & bit:
                continue  # what the words put in a set is in it on the scene (relations have margins)
            said = said or _facts_of(plan, choices, named)
            if thing in said.edited:
                continue  # its place after the edit is what the what-if asks (the rule of settled sets above)
            standing = said.standing(thing, tested, choices)
            if standing.forced:
                return DECIDED
            if standing.tied:
                answer = answer or format_answer(outputs[-1])
                if _answer_without(plan, choices, outputs, scene, tested, bit) != answer:
                    return MAY_COUNT
    if any(node.function in COMPARISONS for node in plan.nodes):
        said = said or _facts_of(plan, choices, named)
        if nested_counts(said, choices):
            return DECIDED
    return None


def other_is_open(plan: Plan, choices: Sequence[Any], named: Sequence[int]) -> bool:
    """Whether «другой» (said of an object found by a relation whose words fit an earlier named
    object: «Левее красного предмета находится другой предмет») would leave open which object it
    sets the new one apart from: its words, not a bare noun, fit two earlier named objects («с
    цветом другого резинового предмета за голубым резиновым предметом», after «небольшого
    резинового предмета»: other than the small one, or than the blue one, and may it be the small
    one?), or an earlier object was said so too («…находится другой объект. … Из чего сделан другой
    крупный объект правее этого крупного серого объекта?»: other than that first one too?; «За
    блестящим кубиком стоит другой предмет, справа от которого стоит другой предмет»: and «этого
    предмета» after it is which?). Blind readers took each two ways (round 10: k81, k294; round 11:
    k24); a candidate so worded is not asked. A set asked about is said «другие» after such an
    object where its words fit an earlier one. The last object or set found by a relation, if a
    bare noun («предмет»), is said right before the relation that finds it: a new search, without
    «другой» («Какого цвета предмет слева от этого зелёного предмета?»)."""
    words = {thing: _words_and_source(plan, choices, plan.nodes[thing].inputs[0]) for thing in named}
    sets = {node.inputs[0]: _words_and_source(plan, choices, node.inputs[0]) for node in plan.nodes if node.function in TESTED}
    found = [(at, mine) for at, (mine, source) in sorted([*words.items(), *sets.items()]) if plan.nodes[source].function == "relate"]
    if found and not found[-1][1]:
        found.pop()
    said_other = False
    for at, mine in found:
        fitted = [earlier for earlier in named if earlier < at and fits(mine, words[earlier][0])]
        if at in sets:  # a set asked about, said «другие» only where its words fit (a bare one is a search)
            if mine and fitted and said_other:
                return True
        elif mine and len(fitted) >= 2 or fitted and said_other:
            return True
        said_other = said_other or at in words and bool(fitted)
    return False


def _words_and_source(plan: Plan, choices: Sequence[Any], t: int) -> tuple[dict[str, str], int]:
    """The attributes the filters from node ``t`` back name, and the node they start from."""
    words: dict[str, str] = {}
    while plan.nodes[t].kind == "filter":
        words.update((slot.attribute, value) for slot, value in zip(plan.nodes[t].slots, choices[t], strict=True) if value)
        t = plan.nodes[t].inputs[0]
    return words, t


def refuse_decided(plan: Plan, choices: Sequence[Any], outputs: Sequence[Any], scene: SceneIndex) -> bool:
    """Whether the candidate is refused (:func:`text_refusal`); counted in :data:`REFUSED`."""
    reason = text_refusal(plan, choices, outputs, scene)
    if reason is not None:
        REFUSED[(plan.family.id, reason)] += 1
    return reason is not None


class PlanKey:
    """A plan as a cache key, by identity: a Plan's own hash would walk its whole family. The cache
    holding the key holds the plan, so no other plan can take its ``id`` while it is there."""

    __slots__ = ("plan",)

    def __init__(self, plan: Plan) -> None:
        self.plan = plan

    def __hash__(self) -> int:
        return id(self.plan)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PlanKey) and other.plan is self.plan


def early_checks(plan: Plan) -> tuple[tuple[tuple[int, int, str], ...], ...]:
    """Per node, the (named object, tested set, answer function) pairs whose later of the two nodes
    it is: once the search has chosen that far, :func:`refused_early` can tell. The answer
    function is the tested set's consumer where that is the answer node, else ""."""
    return _early_checks(PlanKey(plan))


#: Plans whose early checks are kept (a long run makes a few hundred plans).
EARLY_CHECKS_CACHED = 2048


@lru_cache(maxsize=EARLY_CHECKS_CACHED)
def _early_checks(key: PlanKey) -> tuple[tuple[tuple[int, int, str], ...], ...]:
    plan = key.plan
    # what-if plans are checked on the finished candidate only (text_refusal reads the scene after the edit)
    named = [t for t, node in enumerate(plan.nodes) if node.kind == "unique"] if not plan.edits else []
    last = len(plan.nodes) - 1
    tested = [(node.inputs[0], node.function if t == last else "") for t, node in enumerate(plan.nodes) if node.function in TESTED]
    checks: list[list[tuple[int, int, str]]] = [[] for _ in plan.nodes]
    for thing in named:
        for node, final in tested:
            if plan.nodes[thing].inputs[0] != node:
                checks[max(thing, node)].append((thing, node, final))
    return tuple(tuple(c) for c in checks)


def refused_early(plan: Plan, choices: Sequence[Any], outputs: Sequence[Any], checks: tuple[tuple[int, int, str], ...]) -> str | None:
    """Whether a candidate chosen up to the node of ``checks`` is refused whatever comes next: a
    named object the text puts in a tested set, or one in the set the answer counts (or the only
    one in the set the answer tests) without the text saying so: why (:data:`DECIDED`,
    :data:`MAY_COUNT`), counted in :data:`REFUSED` as a search branch cut, or None. Nodes after it
    are not read."""
    if not any(outputs[node] >> outputs[thing] & 1 for thing, node, _ in checks):
        return None
    upto = max(max(thing, node) for thing, node, _ in checks)
    said = _facts_of(plan, choices, [t for t in range(upto + 1) if plan.nodes[t].kind == "unique"])
    for thing, node, final in checks:
        reason = None
        bit = 1 << outputs[thing]
        if not outputs[node] & bit:
            continue
        standing = said.standing(thing, node, choices)
        if standing.forced:
            reason = DECIDED
        elif standing.tied and (final == "count" and outputs[node] & bit or final in ("exist", "none") and outputs[node] == bit):
            reason = MAY_COUNT
        if reason is not None:
            REFUSED[(plan.family.id, f"{reason} (branch cut)")] += 1
            return reason
    return None


def _answer_without(plan: Plan, choices: Sequence[Any], outputs: Sequence[Any], scene: SceneIndex, node: int, bit: int) -> str | None:
    try:
        return format_answer(run_plan_with(plan, tuple(choices), scene, {node: lambda out, _args: out & ~bit}, outputs)[-1])
    except ExecutionError:
        return None


#: The facts of the named objects kept, by (plan, the choices of the nodes up to the last of
#: them and of any edit node): the search asks again for every option of a later node.
FACTS_CACHED = 4096


def _facts_of(plan: Plan, choices: Sequence[Any], named: list[int]) -> _NamedFacts:
    upto = max([named[-1], *(t for t, node in enumerate(plan.nodes) if node.edit is not None)])
    return _named_facts(PlanKey(plan), tuple(choices[: upto + 1]), tuple(named))


@lru_cache(maxsize=FACTS_CACHED)
def _named_facts(key: PlanKey, choices: tuple[Any, ...], named: tuple[int, ...]) -> _NamedFacts:
    return _NamedFacts(key.plan, choices, list(named))


#: Set functions that never hold the objects they are found from (CLEVR's relate and same_*
#: leave the anchor out; so do «между», who hides an object, and sides seen from an object).
_LEAVE_OUT_INPUTS = frozenset({"relate", "between", "occluders", "seen_from_set"})


class _NamedFacts:
    """What the text says of the named objects: their attributes (after an edit, as it leaves them),
    the relations between them, and where an edit node stands."""

    def __init__(self, plan: Plan, choices: Sequence[Any], named: list[int]) -> None:
        self.plan = plan
        self.named = set(named)
        self.attributes: dict[int, dict[str, str]] = {}
        self.scene_wide: set[int] = set()  # described among every object of the picture: the only one so described
        facts: set[tuple[int, str, int]] = set()
        self.found: list[FoundBy] = []  # objects found by a relation to another named one (questions.named_relations)
        for thing in named:
            attributes, source = self.description(plan.nodes[thing].inputs[0], choices)
            self.attributes[thing] = attributes
            node = plan.nodes[source]
            if node.function == "relate" and node.inputs[0] in self.named:
                facts.add((thing, choices[source], node.inputs[0]))
                if choices[source] in OPPOSITE:
                    self.found.append(FoundBy(thing, choices[source], node.inputs[0], attributes))
            if node.function == "scene" and attributes:
                self.scene_wide.add(thing)
        self.facts = _closure(facts)
        self._edits(choices)
        self.as_asked = self.edit_at == len(plan.nodes)  # no edit: what the only ones imply holds
        self.implied = self.attributes  # with what the only ones so described imply (as asked)
        if self.as_asked:
            self.facts = _closure(self.facts | beside_the_only_one(self.found, self.attributes, self.facts))
            self.implied = implied_attributes(self.attributes, self.scene_wide, self.facts)

    def _edits(self, choices: Sequence[Any]) -> None:
        """Where the edit node stands (every later node reads its scene), what it changes of a named
        object (``edited``: object -> its attributes after), and the objects that change places."""
        self.edit_at = len(self.plan.nodes)
        self.edited: dict[int, dict[str, str]] = {}
        self.moved: set[int] = set()
        for t, node in enumerate(self.plan.nodes):
            if node.edit is None:
                continue
            self.edit_at = min(self.edit_at, t)
            attribute = EDITS[node.function]
            if attribute == "place":
                self.moved |= set(node.inputs)
            elif attribute and node.inputs[0] in self.named:
                thing = node.inputs[0]
                self.edited[thing] = {**self.attributes[thing], attribute: choices[t]}

    def description(self, t: int, choices: Sequence[Any]) -> tuple[dict[str, str], int]:
        """The attributes the filters from ``t`` back name, and the node they start from."""
        attributes: dict[str, str] = {}
        while self.plan.nodes[t].kind == "filter":
            for slot, value in zip(self.plan.nodes[t].slots, choices[t], strict=True):
                if value:
                    attributes[slot.attribute] = value
            t = self.plan.nodes[t].inputs[0]
        return attributes, t

    def said_of(self, thing: int, t: int) -> dict[str, str]:
        """The attributes the text gives named object ``thing`` where node ``t`` reads the scene."""
        if t > self.edit_at and thing in self.edited:
            return self.edited[thing]
        return self.implied[thing]

    def stated(self, thing: int, relation: str, anchor: int, t: int) -> bool:
        """Whether the text puts ``thing`` in ``relation`` to ``anchor`` where node ``t`` reads the scene
        (not after one of them changed places)."""
        if t > self.edit_at and {thing, anchor} & self.moved:
            return False
        return (thing, relation, anchor) in self.facts

    def standing(self, thing: int, t: int, choices: Sequence[Any]) -> Standing:
        """What the text says of named object ``thing`` and the set of node ``t`` (chosen as ``choices``)."""
        node = self.plan.nodes[t]
        if node.kind == "filter":
            said = self.said_of(thing, t)
            named = all(said.get(slot.attribute) == value for slot, value in zip(node.slots, choices[t], strict=True) if value)
            inner = self.standing(thing, node.inputs[0], choices)
            return Standing(named and inner.fits, inner.placed, inner.linked)
        if node.function == "scene" or node.edit is not None:
            return Standing(True, True, False)
        if node.function == "relate":
            return Standing(True, self.stated(thing, choices[t], node.inputs[0], t), True)
        if node.function.startswith("same_") and node.inputs[0] in self.named:
            attribute = node.function.removeprefix("same_")
            mine, theirs = self.said_of(thing, t).get(attribute), self.said_of(node.inputs[0], t).get(attribute)
            return Standing(True, node.inputs[0] != thing and mine is not None and mine == theirs, True)
        sides = [self.standing(thing, i, choices) for i in node.inputs]
        if node.function == "union":
            return next((side for side in sides if side.forced), next((side for side in sides if side.tied), _UNTIED))
        if node.function == "intersect":
            return Standing(all(s.fits for s in sides), all(s.placed for s in sides), any(s.linked for s in sides))
        return _UNTIED

    def settled(self, t: int, choices: Sequence[Any]) -> bool:
        """Whether the words alone settle the set of node ``t``: it names every attribute of a named
        object's scene-wide description (so no other object can be in it) and either keeps that
        object out (the set is empty) or puts it in (the set is that object alone); or the set is
        empty by the words (:meth:`empty_by_words`)."""
        if self.empty_by_words(t, choices):
            return True
        words = self.implied_words(t, choices)
        for thing in self.scene_wide:
            if self.plan.nodes[thing].inputs[0] == t:
                continue  # the set is the object's own description (as text_refusal reads it)
            if t > self.edit_at and self.edited.keys() - {thing}:
                continue  # another object edited into the description may be in the set
            if self.attributes[thing].items() <= words.items() and (
                    self.leaves_out(thing, t, choices) or self.standing(thing, t, choices).forced):
                return True
        return False

    def set_words(self, t: int, choices: Sequence[Any]) -> dict[str, str]:
        """The attributes every object of node ``t``'s set has by the words of its filters."""
        node = self.plan.nodes[t]
        if node.kind == "filter":
            words = dict(self.set_words(node.inputs[0], choices))
            words.update((slot.attribute, value) for slot, value in zip(node.slots, choices[t], strict=True) if value)
            return words
        sides = [self.set_words(i, choices) for i in node.inputs]
        if node.function == "intersect":
            return {**sides[0], **sides[1]}
        if node.function == "union":
            return dict(sides[0].items() & sides[1].items())
        return {}

    def implied_words(self, t: int, choices: Sequence[Any]) -> dict[str, str]:
        """:meth:`set_words` with what the only objects so described that the set leaves out imply
        of two-valued attributes (:func:`questions.named_relations.with_two_valued`)."""
        words = self.set_words(t, choices)
        if not self.as_asked:
            return words
        return with_two_valued(words, [self.attributes[u] for u in self.scene_wide if self.leaves_out(u, t, choices)])

    def empty_by_words(self, t: int, choices: Sequence[Any]) -> bool:
        """Whether node ``t``'s set is empty by the words: each of its objects would be a second one
        where the text names the only one (in a relation to an anchor that fits some words)."""
        return self.as_asked and any(
            words.items() <= self.implied_words(t, choices).items() and self.leaves_out(thing, t, choices)
            and all_related(self, t, choices, relation, anchor) for thing, relation, anchor, words in self.found)

    def leaves_out(self, thing: int, t: int, choices: Sequence[Any]) -> bool:
        """Whether the words keep named object ``thing`` out of node ``t``'s set: an attribute the set
        asks for said otherwise of it, or a set found from it, or a side of it the text does not put it on."""
        node = self.plan.nodes[t]
        if node.kind == "filter":
            said = self.said_of(thing, t)
            return any(value and said.get(slot.attribute, value) != value for slot, value in zip(node.slots, choices[t], strict=True)) \
                or self.leaves_out(thing, node.inputs[0], choices)
        if thing in node.inputs and (node.function in _LEAVE_OUT_INPUTS or node.function.startswith("same_")):
            return True
        if node.function == "relate" and choices[t] in OPPOSITE:
            return self.stated(thing, OPPOSITE[choices[t]], node.inputs[0], t)
        sides = [self.leaves_out(thing, i, choices) for i in node.inputs]
        if node.function == "intersect":
            return any(sides)
        if node.function == "union":
            return all(sides)
        return False


class Standing(NamedTuple):
    """A named object and a set, by the text alone: whether the words name of it every attribute the
    set asks for (``fits``), state it in every relation the set asks for (``placed``), and whether
    the set is found by a relation or a likeness to a named object at all (``linked``)."""

    fits: bool
    placed: bool
    linked: bool

    @property
    def forced(self) -> bool:
        """The text puts the object in the set."""
        return self.fits and self.placed

    @property
    def tied(self) -> bool:
        """The text ties the object to the set, by its words or by a relation, without putting it there."""
        return self.linked and (self.fits or self.placed) and not self.forced


_UNTIED = Standing(False, False, False)


def _closure(facts: set[tuple[int, str, int]]) -> set[tuple[int, str, int]]:
    """The relations read both ways and chained (a left of b, b left of c: a left of c)."""
    known = facts | {(b, OPPOSITE[r], a) for a, r, b in facts if r in OPPOSITE}
    while True:
        chained = {(a, r, c) for a, r, b in known for b2, r2, c in known if b == b2 and r == r2 and a != c}
        if chained <= known:
            return known
        known |= chained
