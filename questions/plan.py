"""A family compiled for the search (:class:`Plan`), and what a plan and its per-node choices give:
the release-form program, the parameter values, each node's output on a scene.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from assets.vocabulary import load_vocabulary
from questions.family import Family
from questions.functions import OBJECTS, ExecutionError, function_registry, unique_object
from questions.scene_index import SceneError, SceneIndex

# Slot modes of a filter node: may stay empty or take a value / must stay empty /
# must take a value / is a literal written in the family file.
FREE, EMPTY, SET, FIXED = "free", "empty", "set", "fixed"

#: Each distinct option kind and slot kinds of a filter node met so far, numbered (a few per family file).
_NUMBERS: dict[tuple[Any, ...], int] = {}


def _number(kind: tuple[Any, ...]) -> int:
    return _NUMBERS.setdefault(kind, len(_NUMBERS))


class Slot(NamedTuple):
    attribute: str
    param: str | None  # the parameter filled here, None for a literal
    mode: str
    literal: str = ""

    @property
    def function(self) -> str:
        """The release-form function of a value in this slot."""
        return f"filter_{self.attribute}"


@dataclass(frozen=True)
class PlanNode:
    kind: str  # "filter", "valued" (a function with a value input: relate, exclude_color, most...), "unique" or "call"
    function: str
    inputs: tuple[int, ...]
    slots: tuple[Slot, ...] = ()  # filter
    value_param: str | None = None  # valued: the parameter it takes
    value_literal: str = ""  # valued: the literal value written in the family file
    value_type: str = ""  # valued: relation or an attribute
    need_single: bool = False  # filter: its output feeds a unique
    need_some: bool = False  # filter: at least one of its slots takes a value (the some_set constraint)
    option_kind: tuple[Any, ...] = ()  # filter: what its options depend on besides the input (the slots' kinds, the two needs)
    option_id: int = -1  # filter: a small number standing for option_kind (a cheap key for per-scene caches)
    kinds_id: int = -1  # filter: a small number standing for the slots' kinds alone
    handler: Any = None  # valued, call
    gives_set: bool = False  # valued, call: its output is a set of objects
    edit: Any = None  # valued, call: an edit node's scene after it (questions.hypothetical); later nodes read it


@dataclass(frozen=True)
class Plan:
    """A family compiled for the search: each template node with what the search needs to know."""

    family: Family
    nodes: tuple[PlanNode, ...]
    checks_at: tuple[tuple[int, ...], ...]  # per node: earlier nodes whose output must differ from it
    question_type: str
    least_at: tuple[int, ...] = ()  # per node: the fewest objects in its set (or the least count) allowed, 0: any
    disjoint_at: tuple[tuple[tuple[int, int], ...], ...] = ()  # per node: (object node, set node) pairs checked there
    checked_at: tuple[bool, ...] = ()  # per node: whether any of the three constraints above is checked there
    relaxed_checked_at: tuple[bool, ...] = ()  # the same without ``least_at`` (a scene where the family may break it)
    edits: bool = False  # it has an edit node: the nodes after it read the edited scene (questions.hypothetical)

    @classmethod
    def of(cls, family: Family) -> Plan:
        consumers: dict[int, list[str]] = {}
        for node in family.program:
            for source in node.inputs:
                consumers.setdefault(source, []).append(node.function)
        nodes = tuple(_plan_node(family, node, consumers.get(position, [])) for position, node in enumerate(family.program))
        checks: list[list[int]] = [[] for _ in nodes]
        for i, j in family.distinct_objects():
            checks[max(i, j)].append(min(i, j))
        least = [0] * len(nodes)
        for position, count in family.least:
            least[position] = count
        disjoint: list[list[tuple[int, int]]] = [[] for _ in nodes]
        for thing, group in family.disjoint:
            disjoint[max(thing, group)].append((thing, group))
        relaxed = tuple(bool(checks[t] or disjoint[t]) for t in range(len(nodes)))
        return cls(
            family, nodes, tuple(tuple(c) for c in checks), family.question_type, tuple(least),
            tuple(tuple(d) for d in disjoint), tuple(r or bool(least[t]) for t, r in enumerate(relaxed)), relaxed,
            any(node.edit is not None for node in nodes),
        )


def _plan_node(family: Family, node: Any, consumers: list[str]) -> PlanNode:
    registry = function_registry()
    if node.is_filter_macro or node.function.startswith("filter_"):
        slots = []
        for value in node.value_inputs:
            if value in family.params:
                mode = EMPTY if value in family.empty else SET if (value in family.not_empty or not node.is_filter_macro) else FREE
                if mode == FREE and family.params[value] == family.answer_type:
                    mode = EMPTY  # a query names no value of the attribute it asks for (the text would rule one out)
                slots.append(Slot(family.params[value], value, mode))
            else:
                slots.append(Slot(load_vocabulary().attribute_of(value), None, FIXED, value))
        need_some = any(value in family.some_set for value in node.value_inputs)
        need_single = "unique" in consumers
        # Families name their parameters differently (<Z2>, <Z3>); the options depend only on the slots' kinds.
        kinds = tuple((slot.attribute, slot.mode, slot.literal) for slot in slots)
        option_kind = (kinds, need_single, need_some)
        return PlanNode(
            "filter", node.function, node.inputs, slots=tuple(slots), need_single=need_single, need_some=need_some,
            option_kind=option_kind, option_id=_number(option_kind), kinds_id=_number(kinds),
        )
    if node.function == "unique":
        return PlanNode("unique", "unique", node.inputs)
    function = registry[node.function]
    gives_set = function.output == OBJECTS
    if function.value_type is not None:  # relate, exclude_<attribute>, most, second: one value to choose
        value = node.value_inputs[0]
        param, literal = (value, "") if value in family.params else (None, value)
        return PlanNode(
            "valued", node.function, node.inputs, value_param=param, value_literal=literal,
            value_type=function.value_type, handler=function.handler, gives_set=gives_set, edit=function.edit,
        )
    return PlanNode("call", node.function, node.inputs, handler=function.handler, gives_set=gives_set, edit=function.edit)


def run_plan(
    plan: Plan,
    choices: tuple[Any, ...],
    scene: SceneIndex,
    replace: tuple[int, Callable[[Any, tuple[Any, ...]], Any]] | None = None,
    known: Sequence[Any] = (),
) -> list[Any]:
    """Every template node's output with ``choices`` on ``scene``: what the release-form program
    of :func:`expand_program` gives at each template node's position, without writing it out.

    ``replace`` is (node, function of its output and its inputs' values) whose result is used
    instead; the outputs of the nodes before it may be passed as ``known`` and are reused.
    ExecutionError where a node cannot be answered (the search's well-posedness rules are not
    checked here).
    """
    start = replace[0] if replace is not None and known and not has_edit(plan) else 0
    outputs = list(known[:start])
    for t in range(start, len(plan.nodes)):
        node, choice = plan.nodes[t], choices[t]
        args = tuple(outputs[i] for i in node.inputs)
        try:
            scene = _scene_after(node, choice, scene, args)
            output = _node_output(node, choice, scene, args)
        except (SceneError, KeyError) as error:
            raise ExecutionError(f"node {t} ({node.function}): {error}") from None
        if replace is not None and replace[0] == t:
            output = replace[1](output, args)
        outputs.append(output)
    return outputs


def run_plan_with(
    plan: Plan, choices: tuple[Any, ...], scene: SceneIndex, replacements: Mapping[int, Callable[[Any, tuple[Any, ...]], Any]],
    known: Sequence[Any],
) -> list[Any]:
    """:func:`run_plan` with several nodes' outputs replaced (node -> function of its output and its
    inputs' values), given every node's output without them (``known``): only the nodes that a
    replaced output reaches are computed again."""
    outputs = list(known)
    changed = [False] * len(plan.nodes)
    new_scene = False  # an edit node read changed inputs: every later node reads another scene
    for t in range(0 if has_edit(plan) else min(replacements), len(plan.nodes)):
        node = plan.nodes[t]
        args = tuple(outputs[i] for i in node.inputs)
        if node.edit is not None:
            new_scene = new_scene or any(changed[i] for i in node.inputs)
            scene = _scene_after(node, choices[t], scene, args)
        if t not in replacements and not new_scene and not any(changed[i] for i in node.inputs):
            continue
        try:
            output = _node_output(node, choices[t], scene, args)
        except (SceneError, KeyError) as error:
            raise ExecutionError(f"node {t} ({node.function}): {error}") from None
        if t in replacements:
            output = replacements[t](output, args)
        changed[t] = output != known[t]
        outputs[t] = output
    return outputs


def has_edit(plan: Plan) -> bool:
    """Whether the plan has an edit node (a what-if question: later nodes read the edited scene)."""
    return plan.edits


def _scene_after(node: PlanNode, choice: Any, scene: SceneIndex, args: tuple[Any, ...]) -> SceneIndex:
    """The scene the nodes after ``node`` read: the edited copy after an edit node, else ``scene``."""
    if node.edit is None:
        return scene
    return node.edit(scene, args, choice if node.kind == "valued" else None)


def _node_output(node: PlanNode, choice: Any, scene: SceneIndex, args: tuple[Any, ...]) -> Any:
    if node.edit is not None:
        return scene.all  # ``scene`` is already the edited one
    if node.kind == "filter":
        mask = args[0]
        for slot, value in zip(node.slots, choice, strict=True):
            if value:
                mask &= scene.mask(slot.attribute, value)
        return mask
    if node.kind == "unique":
        return unique_object(args[0])
    return node.handler(scene, args, choice if node.kind == "valued" else None)


def expand_program(plan: Plan, choices: tuple[Any, ...]) -> list[dict[str, Any]]:
    """The release-form program of a candidate: one ``filter_<attribute>`` per non-empty slot."""
    return expand_program_positions(plan, choices)[0]


def expand_program_positions(plan: Plan, choices: tuple[Any, ...]) -> tuple[list[dict[str, Any]], list[int]]:
    """The release-form program and, per template node, the release-form node giving its output."""
    nodes, position = release_nodes(plan, choices)
    program = [{"function": function, "inputs": list(inputs), "value_inputs": list(values)} for function, inputs, values in nodes]
    return program, position


ReleaseNode = tuple[str, tuple[int, ...], tuple[str, ...]]


def release_nodes(plan: Plan, choices: tuple[Any, ...]) -> tuple[list[ReleaseNode], list[int]]:
    """The release-form program as (function, inputs, value inputs) per node, and, per template
    node, the release-form node giving its output."""
    program: list[ReleaseNode] = []
    position: list[int] = []
    for node, choice in zip(plan.nodes, choices, strict=True):
        if node.kind == "filter":
            current = position[node.inputs[0]]
            for slot, value in zip(node.slots, choice, strict=True):
                if value:
                    program.append((slot.function, (current,), (value,)))
                    current = len(program) - 1
            position.append(current)
            continue
        program.append((node.function, tuple(position[i] for i in node.inputs), (choice,) if node.kind == "valued" else ()))
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
