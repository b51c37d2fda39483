"""Instantiating a family on one scene: depth-first search over parameter values, pruned by the scene.

The search walks the program template node by node, keeping every node's output, so a branch
dies as soon as it breaks a rule; the question that comes out is well posed by construction:

- every ``unique`` sees exactly one object (no ambiguous reference);
- every filter is needed: dropping any one filter of a description would change its set, so no
  filter changes nothing and no word of a description is idle;
- the family's constraints hold (``empty``, ``not_empty`` and ``some_set`` parameters, ``different_outputs``);
- the two inputs of a comparison, union or intersection are not the same description, nor one
  a narrowing of the other ("more red cubes than cubes" tells its answer);
- ``exist`` is never asked of the whole scene, and a query's answer is never a word of the question;
- beyond CLEVR: a function that cannot answer (an ordinal of too small a set, a tie for the most
  common value, "how many more" of fewer) prunes its branch; ``between`` must find something
  between, ``all`` a member of the first set in the second, ``add`` two counted sets with nothing
  in common, ``exclude_<attribute>`` a member with the excluded value.

Only values that the scene makes meaningful are tried: a filter that must end in one object is
built from that object's own attribute values. Each search has a step budget, so no scene stalls.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from assets.vocabulary import ATTRIBUTES, load_vocabulary
from questions.family import Family
from questions.functions import OBJECTS, RELATION, ExecutionError, format_answer, function_registry
from questions.random_stream import RandomStream
from questions.scene_index import SceneIndex

_SCENE_SET: tuple[str, tuple[str, ...], frozenset[object]] = ("set", ("scene",), frozenset())

# Slot modes of a filter node: may stay empty or take a value / must stay empty /
# must take a value / is a literal written in the family file.
FREE, EMPTY, SET, FIXED = "free", "empty", "set", "fixed"


class _Slot(NamedTuple):
    attribute: str
    param: str | None  # the parameter filled here, None for a literal
    mode: str
    literal: str = ""


@dataclass(frozen=True)
class _PlanNode:
    kind: str  # "filter", "valued" (a function with a value input: relate, exclude_color, most...), "unique" or "call"
    function: str
    inputs: tuple[int, ...]
    slots: tuple[_Slot, ...] = ()  # filter
    value_param: str | None = None  # valued: the parameter it takes
    value_literal: str = ""  # valued: the literal value written in the family file
    value_type: str = ""  # valued: relation or an attribute
    need_single: bool = False  # filter: its output feeds a unique
    need_some: bool = False  # filter: at least one of its slots takes a value (the some_set constraint)
    handler: Any = None  # valued, call
    gives_set: bool = False  # valued, call: its output is a set of objects


@dataclass(frozen=True)
class Plan:
    """A family compiled for the search: each template node with what the search needs to know."""

    family: Family
    nodes: tuple[_PlanNode, ...]
    checks_at: tuple[tuple[int, ...], ...]  # per node: earlier nodes whose output must differ from it
    question_type: str

    @classmethod
    def of(cls, family: Family) -> Plan:
        consumers: dict[int, list[str]] = {}
        for node in family.program:
            for source in node.inputs:
                consumers.setdefault(source, []).append(node.function)
        nodes = tuple(_plan_node(family, node, consumers.get(position, [])) for position, node in enumerate(family.program))
        checks: list[list[int]] = [[] for _ in nodes]
        for i, j in family.different_outputs:
            checks[max(i, j)].append(min(i, j))
        return cls(family, nodes, tuple(tuple(c) for c in checks), family.question_type)


def _plan_node(family: Family, node: Any, consumers: list[str]) -> _PlanNode:
    registry = function_registry()
    if node.is_filter_macro or node.function.startswith("filter_"):
        slots = []
        for value in node.value_inputs:
            if value in family.params:
                mode = EMPTY if value in family.empty else SET if (value in family.not_empty or not node.is_filter_macro) else FREE
                slots.append(_Slot(family.params[value], value, mode))
            else:
                slots.append(_Slot(load_vocabulary().attribute_of(value), None, FIXED, value))
        need_some = any(value in family.some_set for value in node.value_inputs)
        return _PlanNode("filter", node.function, node.inputs, slots=tuple(slots), need_single="unique" in consumers, need_some=need_some)
    if node.function == "unique":
        return _PlanNode("unique", "unique", node.inputs)
    function = registry[node.function]
    gives_set = function.output == OBJECTS
    if function.value_type is not None:  # relate, exclude_<attribute>, most, second: one value to choose
        value = node.value_inputs[0]
        param, literal = (value, "") if value in family.params else (None, value)
        return _PlanNode(
            "valued", node.function, node.inputs, value_param=param, value_literal=literal,
            value_type=function.value_type, handler=function.handler, gives_set=gives_set,
        )
    return _PlanNode("call", node.function, node.inputs, handler=function.handler, gives_set=gives_set)


@dataclass(frozen=True)
class Candidate:
    """One well-posed instantiation: the value of each filter/relate node and the answer."""

    choices: tuple[Any, ...]  # per template node: tuple of slot values (filter), relation (relate), or None
    answer: str


class SceneSearch:
    """Everything the search reuses across the families asked on one scene."""

    def __init__(self, scene: SceneIndex, stream: RandomStream) -> None:
        self.scene = scene
        self.stream = stream
        self.steps = 0  # across all searches on this scene: the scene's budget counts these
        vocabulary = load_vocabulary()
        self._names = {attribute: vocabulary.names(attribute) for attribute in ATTRIBUTES}
        self._relations = tuple(name for name in vocabulary.relations if name in scene.relations())
        self._filter_options: dict[tuple[Any, ...], list[tuple[tuple[str, ...], int]]] = {}

    def find(self, plan: Plan, stop_at: int) -> Candidate | None:
        """One depth-first search in a fresh random order; None when the scene allows no candidate
        or the step count reaches ``stop_at`` first. Repeated calls find other candidates."""
        return _Walk(self, plan, stop_at).run()

    def instantiate(self, plan: Plan, params: Mapping[str, str]) -> Candidate | None:
        """The family with the given parameter values (missing ones empty), or None if that
        question is not well posed on this scene. The same rules as the search apply."""
        unknown = set(params) - set(plan.family.params)
        if unknown:
            raise KeyError(f"{plan.family.id} has no parameter {', '.join(sorted(unknown))}")
        return _Walk(self, plan, self.steps + 1_000_000, wanted=params).run()

    def value_options(self, value_type: str) -> tuple[str, ...]:
        """The values a valued node may take here: the scene's relations, or an attribute's names."""
        return self._relations if value_type == RELATION else self._names[value_type]

    def filter_options(
        self, base: int, slots: tuple[_Slot, ...], need_single: bool, need_some: bool = False
    ) -> list[tuple[tuple[str, ...], int]]:
        """Every assignment of a filter node's slots in which each filter is needed, with its output mask.

        "Needed": dropping any one of the chosen filters would give a different set. So no filter
        changes nothing, whichever order they are applied in, and no word of a description is idle
        ("the large red cube" is not asked when "the red cube" is already the only one).
        """
        # Families name their parameters differently (<Z2>, <Z3>); the options depend only on the slots' kinds.
        key = (base, tuple((slot.attribute, slot.mode, slot.literal) for slot in slots), need_single, need_some)
        options = self._filter_options.get(key)
        if options is None:
            options = self._single_options(base, slots) if need_single else self._all_options(base, slots)
            if need_some:
                options = [option for option in options if any(option[0])]
            self._filter_options[key] = options
        return options

    def _single_options(self, base: int, slots: tuple[_Slot, ...]) -> list[tuple[tuple[str, ...], int]]:
        # A description of one object uses only that object's own values: for each object in the
        # input, try each allowed subset of slots (and_of[subset] = input narrowed by those slots).
        size = len(slots)
        subsets = _allowed_subsets(slots)
        options = []
        for index in self.scene.indices(base):
            target = 1 << index
            own = [self.scene.values[slot.attribute][index] for slot in slots]
            if any(slot.mode == FIXED and value != slot.literal for slot, value in zip(slots, own, strict=True)):
                continue
            masks = [self.scene.mask(slot.attribute, value) for slot, value in zip(slots, own, strict=True)]
            and_of = [base] * (1 << size)
            for subset in range(1, 1 << size):
                lowest = subset & -subset
                and_of[subset] = and_of[subset ^ lowest] & masks[lowest.bit_length() - 1]
            for subset in subsets:
                if and_of[subset] == target and _each_needed(and_of, subset):
                    options.append((tuple(own[k] if subset >> k & 1 else "" for k in range(size)), target))
        return options

    def _all_options(self, base: int, slots: tuple[_Slot, ...]) -> list[tuple[tuple[str, ...], int]]:
        # Slot by slot, keeping partial assignments whose every filter narrowed its input;
        # after an empty set no filter can narrow, so such branches stay empty to the end.
        partial: list[tuple[tuple[str, ...], int, tuple[int, ...]]] = [((), base, ())]
        for slot in slots:
            values = (slot.literal,) if slot.mode == FIXED else self._names[slot.attribute]
            masks = [(value, self.scene.mask(slot.attribute, value)) for value in values]
            grown = []
            for chosen, current, used in partial:
                if slot.mode in (FREE, EMPTY):
                    grown.append((chosen + ("",), current, used))
                if slot.mode == EMPTY or not current:
                    continue
                for value, mask in masks:
                    narrowed = current & mask
                    if narrowed != current:
                        grown.append((chosen + (value,), narrowed, used + (mask,)))
            partial = grown
        return [(chosen, current) for chosen, current, used in partial if _all_needed(base, used, current)]


def _allowed_subsets(slots: tuple[_Slot, ...]) -> list[int]:
    """Bit sets of slots that may carry a value together: with every set/fixed slot, no empty one."""
    required = sum(1 << k for k, slot in enumerate(slots) if slot.mode in (SET, FIXED))
    forbidden = sum(1 << k for k, slot in enumerate(slots) if slot.mode == EMPTY)
    return [subset for subset in range(1 << len(slots)) if subset & required == required and not subset & forbidden]


def _each_needed(and_of: list[int], subset: int) -> bool:
    result = and_of[subset]
    rest = subset
    while rest:
        lowest = rest & -rest
        if and_of[subset ^ lowest] == result:
            return False
        rest ^= lowest
    return True


def _all_needed(base: int, masks: tuple[int, ...], result: int) -> bool:
    if len(masks) < 2:
        return True  # a single filter was already checked to narrow its input
    for skip in range(len(masks)):
        rest = base
        for k, mask in enumerate(masks):
            if k != skip:
                rest &= mask
        if rest == result:
            return False
    return True


class _Walk:
    """One depth-first search for one candidate, in a random order."""

    def __init__(self, search: SceneSearch, plan: Plan, stop_at: int, wanted: Mapping[str, str] | None = None) -> None:
        self.search = search
        self.wanted = wanted  # explicit parameter values: only those are tried
        self.scene = search.scene
        self.stream = search.stream
        self.plan = plan
        self.nodes = plan.nodes
        self.stop_at = stop_at
        size = len(plan.nodes)
        self.out: list[Any] = [None] * size
        self.canon: list[Any] = [None] * size
        self.choices: list[Any] = [None] * size

    def run(self) -> Candidate | None:
        return self._visit(0)

    def _visit(self, t: int) -> Candidate | None:
        if t == len(self.nodes):
            return self._finish()
        node = self.nodes[t]
        search = self.search
        if node.kind == "filter":
            base = self.out[node.inputs[0]]
            options = search.filter_options(base, node.slots, node.need_single, node.need_some)
            if self.wanted is not None:
                want = tuple(self.wanted.get(slot.param, "") if slot.param else slot.literal for slot in node.slots)
                options = [option for option in options if option[0] == want]
            for k in _random_order(len(options), self.stream):
                if search.steps >= self.stop_at:
                    return None
                search.steps += 1
                values, mask = options[k]
                self.out[t] = mask
                self.choices[t] = values
                self.canon[t] = _filtered(self.canon[node.inputs[0]], node.slots, values)
                if self._differs(t):
                    found = self._visit(t + 1)
                    if found is not None:
                        return found
            return None
        if node.kind == "valued":
            values = (node.value_literal,) if node.value_literal else search.value_options(node.value_type)
            if self.wanted is not None and node.value_param is not None:
                values = tuple(v for v in values if v == self.wanted.get(node.value_param))
            args = tuple(self.out[i] for i in node.inputs)
            for k in _random_order(len(values), self.stream):
                if search.steps >= self.stop_at:
                    return None
                search.steps += 1
                value = values[k]
                try:
                    self.out[t] = node.handler(self.scene, args, value)
                except ExecutionError:
                    continue  # not answerable with this value (an ordinal of a set too small, a tie)
                if node.function.startswith("exclude_") and self.out[t] == args[0]:
                    continue  # excluding a value no object has says nothing
                self.choices[t] = value
                canon = (node.function, value, *(self.canon[i] for i in node.inputs))
                self.canon[t] = ("set", canon, frozenset()) if node.gives_set else canon
                if self._differs(t):
                    found = self._visit(t + 1)
                    if found is not None:
                        return found
            return None
        search.steps += 1
        if node.kind == "unique":
            mask = self.out[node.inputs[0]]
            if mask.bit_count() != 1:
                return None
            self.out[t] = mask.bit_length() - 1
            self.canon[t] = ("unique", self.canon[node.inputs[0]])
        else:
            if not self._well_posed_call(node):
                return None
            args = tuple(self.out[i] for i in node.inputs)
            try:
                self.out[t] = node.handler(self.scene, args, None)
            except ExecutionError:
                return None  # e.g. a most common value shared by a tie, fewer more than more
            if node.function == "between" and not self.out[t]:
                return None  # nothing lies between the two: "what is between them?" has no subject
            canon = (node.function, *(self.canon[i] for i in node.inputs))
            self.canon[t] = ("set", canon, frozenset()) if node.gives_set else canon
        if not self._differs(t):
            return None
        return self._visit(t + 1)

    def _well_posed_call(self, node: _PlanNode) -> bool:
        if node.function in ("exist", "none") and self.canon[node.inputs[0]] == _SCENE_SET:
            return False  # "is there a thing?" is always yes
        if len(node.inputs) == 2 and _overlapping(self.canon[node.inputs[0]], self.canon[node.inputs[1]]):
            return False
        if node.function == "all" and not self.out[node.inputs[0]] & self.out[node.inputs[1]]:
            return False  # "are all the red things cubes?" when no red thing is a cube says no twice over
        if node.function == "add" and self._counted_sets_overlap(node):
            return False  # "how many red things and cubes in total" counts a red cube twice, or once?
        return True

    def _counted_sets_overlap(self, node: _PlanNode) -> bool:
        counted = [self.nodes[i] for i in node.inputs]
        if not all(source.function == "count" for source in counted):
            return False
        first, second = (self.out[source.inputs[0]] for source in counted)
        return bool(first & second)

    def _differs(self, t: int) -> bool:
        return all(self.out[t] != self.out[other] for other in self.plan.checks_at[t])

    def _finish(self) -> Candidate | None:
        answer = format_answer(self.out[-1])
        if self.plan.family.answer_type in ATTRIBUTES and any(
            isinstance(choice, tuple) and answer in choice for choice in self.choices
        ):
            return None  # the question would name its own answer
        return Candidate(tuple(self.choices), answer)


def _filtered(source: Any, slots: tuple[_Slot, ...], values: tuple[str, ...]) -> Any:
    """The canonical description after a filter: the same base with more (attribute, value) pairs."""
    pairs = frozenset((slot.attribute, value) for slot, value in zip(slots, values, strict=True) if value)
    return ("set", source[1], source[2] | pairs)


def _overlapping(a: Any, b: Any) -> bool:
    """Whether the text alone says how two descriptions compare: the same, or one inside the other."""
    if a == b:
        return True
    if a[0] == "set" and b[0] == "set":
        return _inside(a, b) or _inside(b, a)
    if a[0] == b[0] == "count":
        return _overlapping(a[1], b[1])
    return False


def _inside(a: Any, b: Any) -> bool:
    # b narrowed by more filters is a; every set lies inside the scene, so "the scene, filtered by
    # some of a's filters" holds a whatever a's base ("cubes left of the ball" vs "cubes").
    return b[2] <= a[2] and (a[1] == b[1] or b[1] == ("scene",))


def _random_order(n: int, stream: RandomStream) -> Iterator[int]:
    """range(n) in random order, drawn lazily (a search usually stops after the first few)."""
    indices = list(range(n))
    for remaining in range(n, 0, -1):
        j = stream.below(remaining)
        yield indices[j]
        indices[j] = indices[remaining - 1]


def expand_program(plan: Plan, choices: tuple[Any, ...]) -> list[dict[str, Any]]:
    """The release-form program of a candidate: one ``filter_<attribute>`` per non-empty slot."""
    return expand_program_positions(plan, choices)[0]


def expand_program_positions(plan: Plan, choices: tuple[Any, ...]) -> tuple[list[dict[str, Any]], list[int]]:
    """The release-form program and, per template node, the release-form node giving its output."""
    program: list[dict[str, Any]] = []
    position: list[int] = []
    for node, choice in zip(plan.nodes, choices, strict=True):
        inputs = [position[i] for i in node.inputs]
        if node.kind == "filter":
            current = inputs[0]
            for slot, value in zip(node.slots, choice, strict=True):
                if value:
                    program.append({"function": f"filter_{slot.attribute}", "inputs": [current], "value_inputs": [value]})
                    current = len(program) - 1
            position.append(current)
            continue
        values = [choice] if node.kind == "valued" else []
        program.append({"function": node.function, "inputs": inputs, "value_inputs": values})
        position.append(len(program) - 1)
    return program, position


def choices_of(plan: Plan, params: Mapping[str, str]) -> tuple[Any, ...]:
    """The per-node choices that give ``params``: the inverse of :func:`parameter_values`."""
    choices: list[Any] = []
    for node in plan.nodes:
        if node.kind == "filter":
            choices.append(tuple(params.get(slot.param, "") if slot.param is not None else slot.literal for slot in node.slots))
        elif node.kind == "valued":
            choices.append(params[node.value_param] if node.value_param is not None else node.value_literal)
        else:
            choices.append(None)
    return tuple(choices)


def parameter_values(plan: Plan, choices: tuple[Any, ...]) -> dict[str, str]:
    """The value of every family parameter ("" when left empty), in the family's order."""
    chosen: dict[str, str] = {}
    for node, choice in zip(plan.nodes, choices, strict=True):
        if node.kind == "filter":
            for slot, value in zip(node.slots, choice, strict=True):
                if slot.param is not None:
                    chosen[slot.param] = value
        elif node.kind == "valued" and node.value_param is not None:
            chosen[node.value_param] = choice
    return {name: chosen.get(name, "") for name in plan.family.params}

