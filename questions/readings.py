"""Other readings of a question: the programs a text could mean besides the intended one.

A question's text can admit another reading where a relative word or pronoun could stand for
another noun phrase, a relation phrase could attach to another noun, «или»/"or" could be read
exclusively, or a description could name the anchor object itself. Which of these the text
admits is for each language's realiser to say (it knows its words, their gender and number);
what each reading would mean is fixed by the family's program alone, so it is worked out here
once, for every language:

- ``anchor:<R>:<P>`` — relation ``<R>`` is taken from the object of phrase ``<P>``;
- ``attach:<R>:<P>`` — the phrase with relation ``<R>`` describes phrase ``<P>`` instead of its own noun;
- ``exclusive:<n>`` — the union at program node ``n`` is read as "one or the other, not both";
- ``self:<P>`` — the same-attribute set that phrase ``<P>`` is drawn from includes its anchor.

A phrase is named by the shape parameter of its filter (``<S2>``). The question engine executes
every other reading on the scene and writes into the question the readings that would give
another answer or no answer (``unsafe_readings``); ``self:<P>`` is written when the anchor
itself fits the description of ``<P>``. A realiser refuses a realisation whose text admits an
unsafe reading and takes the next template.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from questions.executor import run_program
from questions.family import Family, TemplateNode
from questions.functions import ExecutionError, format_answer
from questions.scene_index import SceneIndex

UNSAFE_FIELD = "unsafe_readings"
#: The refusal key ("<family> <language> all") of a question no template could say with one reading.
NO_TEMPLATE = "all"


@dataclass(frozen=True)
class Phrase:
    """A described object or set of the program: its filter node and, if any, its ``unique`` node."""

    name: str
    filter: int
    unique: int | None


@dataclass(frozen=True)
class Structure:
    """What a family's program says about its phrases, for realisers and for the engine."""

    phrases: Mapping[str, Phrase]
    relation_target: Mapping[str, str]  # relation parameter -> phrase its relate node's output describes
    relation_anchor: Mapping[str, str]  # relation parameter -> phrase whose object it is taken from
    same_anchor: Mapping[str, str]  # phrase drawn from a same-attribute set -> the anchor phrase
    unions: tuple[int, ...]  # program nodes that join two sets
    readings: tuple[str, ...]  # every other reading the program structure allows


def phrase_name(family: Family, node: TemplateNode, index: int) -> str:
    """A phrase's name: the shape parameter of its filter, else its first parameter, else ``#index``."""
    params = [value for value in node.value_inputs if value in family.params]
    shapes = [value for value in params if family.params[value] == "shape"]
    return (shapes or params or [f"#{index}"])[0]


@cache
def _structure_cached(family_id: str, program: tuple[TemplateNode, ...], params: tuple[tuple[str, str], ...]) -> Structure:
    return _structure(Family(family_id, "", dict(params), program, frozenset(), frozenset(), (), {}, "", 0))


def structure_of(family: Family) -> Structure:
    """The phrases, relations and other readings of ``family`` (cached by its program)."""
    return _structure_cached(family.id, family.program, tuple(family.params.items()))


def _structure(family: Family) -> Structure:
    program = family.program
    phrases: dict[str, Phrase] = {}
    by_filter: dict[int, str] = {}
    for index, node in enumerate(program):
        if node.is_filter_macro or node.function.startswith("filter_"):
            if any(program[source].is_filter_macro or program[source].function.startswith("filter_") for source in node.inputs):
                continue  # a filter chained onto another describes the same phrase
            unique = next((j for j, other in enumerate(program) if other.function == "unique" and other.inputs == (index,)), None)
            name = phrase_name(family, node, index)
            phrases[name] = Phrase(name, index, unique)
            by_filter[index] = name
    by_unique = {phrase.unique: name for name, phrase in phrases.items() if phrase.unique is not None}
    consumers: dict[int, list[int]] = {}
    for index, node in enumerate(program):
        for source in node.inputs:
            consumers.setdefault(source, []).append(index)
    ancestors = _ancestors(program)
    relation_target: dict[str, str] = {}
    relation_anchor: dict[str, str] = {}
    same_anchor: dict[str, str] = {}
    readings: list[str] = []
    for index, node in enumerate(program):
        if node.function == "relate" and node.value_inputs:
            relation = node.value_inputs[0]
            anchor = by_unique.get(node.inputs[0])
            target = next((by_filter[j] for j in consumers.get(index, []) if j in by_filter), None)
            if anchor is not None:
                relation_anchor[relation] = anchor
                for name, phrase in phrases.items():
                    if name != anchor and phrase.unique is not None and index not in ancestors[phrase.unique]:
                        readings.append(f"anchor:{relation}:{name}")
            if target is not None:
                relation_target[relation] = target
                for name, phrase in phrases.items():
                    if name != target and phrase.filter not in ancestors[index] and phrase.filter != index:
                        readings.append(f"attach:{relation}:{name}")
        elif node.function == "union":
            readings.append(f"exclusive:{index}")
        elif node.function.startswith("same_"):
            anchor = by_unique.get(node.inputs[0])
            for j in consumers.get(index, []):
                if j in by_filter and anchor is not None:
                    same_anchor[by_filter[j]] = anchor
                    readings.append(f"self:{by_filter[j]}")
    unions = tuple(i for i, node in enumerate(program) if node.function == "union")
    return Structure(phrases, relation_target, relation_anchor, same_anchor, unions, tuple(readings))


def _ancestors(program: tuple[TemplateNode, ...]) -> list[set[int]]:
    found: list[set[int]] = []
    for node in program:
        found.append(set().union(*(found[i] | {i} for i in node.inputs)) if node.inputs else set())
    return found


# ---------------------------------------------------------------------------------------------
# Executing the other readings


def unsafe_readings(
    family: Family,
    params: Mapping[str, str],
    scene: SceneIndex,
    expand: Callable[[Family, Mapping[str, str]], tuple[list[dict[str, Any]], list[int]]],
) -> list[str]:
    """The other readings of ``family`` with ``params`` that give another answer on ``scene``, or
    none where the intended reading has one; and ``self:<P>`` where the anchor fits ``<P>``.

    ``expand`` turns a family (possibly with an edited program) and the values into the
    release-form program and the release-form node of each template node.
    """
    program, positions = expand(family, params)
    outputs = run_program(program, scene)
    answer = format_answer(outputs[-1])
    structure = structure_of(family)
    unsafe = []
    for reading in structure.readings:
        kind, _, rest = reading.partition(":")
        try:
            if kind in ("anchor", "attach"):
                relation, _, name = rest.partition(":")
                edited = _edited(family, structure, kind, relation, name)
                if edited is None:
                    continue
                other_program, _ = expand(edited, params)
                other = format_answer(run_program(other_program, scene)[-1])
            elif kind == "exclusive":
                node = positions[int(rest)]
                other = format_answer(run_program(program, scene, {node: _exclusive})[-1])
            else:  # self: does the anchor pass the phrase's own description?
                phrase = structure.phrases[rest]
                source = positions[family.program[phrase.filter].inputs[0]]
                widened = run_program(program, scene, {source: _with_anchor})
                if widened[positions[phrase.filter]] != outputs[positions[phrase.filter]]:
                    unsafe.append(reading)
                continue
        except ExecutionError:
            unsafe.append(reading)
            continue
        if other != answer:
            unsafe.append(reading)
    return unsafe


def _exclusive(output: int, args: tuple[Any, ...]) -> int:
    return args[0] ^ args[1]


def _with_anchor(output: int, args: tuple[Any, ...]) -> int:
    return output | (1 << args[0])


_EDITED: dict[tuple[object, ...], Family | None] = {}


def _edited(family: Family, structure: Structure, kind: str, relation: str, name: str) -> Family | None:
    """The family with relation ``relation`` re-anchored on, or re-attached to, phrase ``name``
    (None where that makes a cycle); made once per family program and reading."""
    key = (family.id, family.program, kind, relation, name)
    if key not in _EDITED:
        _EDITED[key] = _edit(family, structure, kind, relation, name)
    return _EDITED[key]


def _edit(family: Family, structure: Structure, kind: str, relation: str, name: str) -> Family | None:
    nodes = list(family.program)
    relate = next(i for i, node in enumerate(nodes) if node.function == "relate" and node.value_inputs[:1] == (relation,))
    phrase = structure.phrases[name]
    if kind == "anchor":
        nodes[relate] = replace(nodes[relate], inputs=(phrase.unique,))  # type: ignore[arg-type]  # an anchor has a unique node
    else:
        target = structure.phrases[structure.relation_target[relation]]
        scene, both = len(nodes), len(nodes) + 1
        nodes.append(TemplateNode("scene", (), (), "objects"))
        nodes.append(TemplateNode("intersect", (nodes[phrase.filter].inputs[0], relate), (), "objects"))
        nodes[target.filter] = replace(nodes[target.filter], inputs=(scene,))
        nodes[phrase.filter] = replace(nodes[phrase.filter], inputs=(both,))
    ordered = _topological(nodes, len(family.program) - 1)
    return None if ordered is None else replace(family, program=ordered)


def _topological(nodes: list[TemplateNode], answer: int) -> tuple[TemplateNode, ...] | None:
    """The nodes reordered so that every input comes first (answer node last), or None on a cycle."""
    order: list[int] = []
    state: dict[int, int] = {}

    def visit(index: int) -> bool:
        if state.get(index) == 2:
            return True
        if state.get(index) == 1:
            return False
        state[index] = 1
        if not all(visit(source) for source in nodes[index].inputs):
            return False
        state[index] = 2
        order.append(index)
        return True

    if not visit(answer):
        return None
    new_index = {old: new for new, old in enumerate(order)}
    return tuple(replace(nodes[old], inputs=tuple(new_index[i] for i in nodes[old].inputs)) for old in order)


def admitted(readings: Iterable[str], unsafe: Iterable[str] | None) -> list[str]:
    """The readings a text admits that would change its answer (none known when ``unsafe`` is None:
    a question written before the engine recorded them)."""
    if unsafe is None:
        return []
    unsafe_set = set(unsafe)
    return [reading for reading in readings if reading in unsafe_set]
