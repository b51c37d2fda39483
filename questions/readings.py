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
- ``self:<P>`` — the same-attribute set that phrase ``<P>`` is drawn from includes its anchor;
- ``distribute:<P>:<Q>`` — the attributes of phrase ``<P>`` also describe the coordinated phrase
  ``<Q>`` («жёлтых сфер и кубов»: yellow cubes too), or the compared one after «чем»/"than"
  («крупных кубов больше, чем шаров»: large spheres?), or the other object of a swap («поменять
  местами серый куб и шар»: the grey sphere?);
- ``union:<n>`` — the sum of two counts at program node ``n`` read as the number of objects in
  either set, each counted once («сколько всего A и B вместе»);
- ``same:<P>:<Q>`` — in a chain, phrase ``<P>`` read as the earlier object ``<Q>`` said again
  («Впереди крупного блестящего предмета находится предмет. Какой формы крупный блестящий
  предмет слева от него?»): written, like ``self``, wherever the two are different objects, so
  that a realiser may say «другой».

A repeated phrase that an earlier object also fits («…находится крупный предмет. Сколько
предметов левее крупного предмета») is an ``anchor`` reading: which texts admit it is the
realiser's to say: no attribute named differently in the two (``questions.text.fits``).

A phrase is named by the shape parameter of its filter (``<S2>``). The question engine executes
every other reading on the scene and writes into the question the readings that would give
another answer or no answer (``unsafe_readings``); ``self:<P>`` is written when the anchor
itself fits the description of ``<P>``. A realiser refuses a realisation whose text admits an
unsafe reading and takes the next template.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

from questions.family import Family, TemplateNode
from questions.functions import ExecutionError, format_answer
from questions.plan import Plan, choices_of, run_plan
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
    coordinated: tuple[tuple[str, str], ...]  # scene-wide phrases joined by a union, sum, comparison…, in program order
    sums: tuple[int, ...]  # program nodes that add the counts of two sets
    readings: tuple[str, ...]  # every other reading the program structure allows
    # the coordinated pairs whose order is the meaning (the two sides of a comparison, the objects
    # of a swap): never said the other way round
    ordered: tuple[tuple[str, str], ...] = ()
    # phrases whose ``unique`` reads a filter of the whole scene -> that filter's parameters: said
    # with every one of them, such a phrase can only be its own object (no other fits all its words)
    scene_unique: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


def phrase_name(family: Family, node: TemplateNode, index: int) -> str:
    """A phrase's name: the shape parameter of its filter, else its first parameter, else ``#index``."""
    params = [value for value in node.value_inputs if value in family.params]
    shapes = [value for value in params if family.params[value] == "shape"]
    return (shapes or params or [f"#{index}"])[0]


@cache
def _structure_cached(family_id: str, program: tuple[TemplateNode, ...], params: tuple[tuple[str, str], ...]) -> Structure:
    return _structure(Family(family_id, "", dict(params), program, frozenset(), frozenset(), (), {}, "", 0))


_BY_FAMILY: dict[int, tuple[Family, Structure]] = {}


def structure_of(family: Family) -> Structure:
    """The phrases, relations and other readings of ``family`` (cached by its program)."""
    known = _BY_FAMILY.get(id(family))
    if known is not None and known[0] is family:  # the family object itself, kept alive by the cache
        return known[1]
    structure = _structure_cached(family.id, family.program, tuple(family.params.items()))
    _BY_FAMILY[id(family)] = (family, structure)
    return structure


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
    coordinated, sums, ordered = _coordination(program, by_filter)
    readings += [f"distribute:{p}:{q}" for pair in coordinated for p, q in (pair, pair[::-1])]
    readings += [f"union:{node}" for node in sums]
    if relation_target:  # chains: a described object a reader may take for an earlier one said again
        readings += [f"same:{p}:{q}" for p in phrases for q in phrases
                     if p != q and phrases[p].unique is not None and phrases[q].unique is not None]
    scene_unique = {name: program[phrase.filter].value_inputs for name, phrase in phrases.items()
                    if phrase.unique is not None and _reads_the_scene(program, phrase.filter)
                    and all(value in family.params for value in program[phrase.filter].value_inputs)}  # no fixed value left unsaid
    return Structure(phrases, relation_target, relation_anchor, same_anchor, unions, coordinated, sums, tuple(readings), ordered,
                     scene_unique)


def _reads_the_scene(program: tuple[TemplateNode, ...], index: int) -> bool:
    """Whether the filter at ``index`` reads the whole scene (not a relation's set, nor an edited scene)."""
    sources = program[index].inputs
    return bool(sources) and all(program[source].function == "scene" for source in sources)


#: Joins whose two sides are not interchangeable: «A больше, чем B», «На сколько A больше, чем B»;
#: «поменять местами A и B».
ORDERED_JOINS = frozenset({"greater_than", "less_than", "subtract", "swap"})
#: Edits whose scene two compared sets may both be drawn from («Если убрать …, будет ли A больше, чем B?»).
_EDITED_SCENES = frozenset({"remove", "recolor", "set_material"})


def _coordination(
    program: tuple[TemplateNode, ...], by_filter: Mapping[int, str]
) -> tuple[tuple[tuple[str, str], ...], tuple[int, ...], tuple[tuple[str, str], ...]]:
    """Pairs of phrases drawn from the whole scene (or both from one edited scene, or both located
    around one object: «красных кубов слева от шара, чем цилиндров за ним») and joined by a
    union, a sum, an equality (of their counts or of an attribute of their objects), «между» (the
    two ends of ``between``: «между маленьким шаром и цилиндром» may make the cylinder small too),
    a comparison of their counts («крупных кубов больше, чем шаров») or a swap of their objects
    (sets around one object: only a comparison); the sums of two counts of sets; and of the pairs,
    those whose order is the meaning (:data:`ORDERED_JOINS`)."""
    def scene_phrase(index: int) -> tuple[str, object] | None:
        """The phrase a count, query or unique reads, and what it is drawn from (-1: the picture;
        an edit's node; ("around", n): the objects related to the object of ``unique`` node n)."""
        while program[index].function == "count" or program[index].function.startswith("query_") or program[index].function == "unique":
            index = program[index].inputs[0]
        name = by_filter.get(index)
        sources = program[index].inputs
        if name is None or not sources:
            return None
        if all(program[source].function == "scene" for source in sources):
            return name, -1
        if len(sources) == 1 and program[sources[0]].function in _EDITED_SCENES:
            return name, sources[0]
        if len(sources) == 1 and program[sources[0]].function == "relate" and program[program[sources[0]].inputs[0]].function == "unique":
            return name, ("around", program[sources[0]].inputs[0])
        return None

    pairs: list[tuple[str, str]] = []
    ordered: list[tuple[str, str]] = []
    sums: list[int] = []
    joins = ("union", "add", "between", *ORDERED_JOINS)
    for index, node in enumerate(program):
        if not (node.function in joins or node.function.startswith("equal_")) or len(node.inputs) != 2:
            continue
        first, second = (scene_phrase(i) for i in node.inputs)
        # Sets around one object pair only in a comparison: the second said after «чем» may leave
        # the first one's adjectives understood; joined by «и», each keeps its own words.
        around = first is not None and isinstance(first[1], tuple)
        if first is not None and second is not None and first[1] == second[1] and (not around or node.function in ORDERED_JOINS):
            pairs.append((first[0], second[0]))
            if node.function in ORDERED_JOINS:
                ordered.append((first[0], second[0]))
        if node.function == "add" and all(program[i].function == "count" for i in node.inputs):
            sums.append(index)
    return tuple(pairs), tuple(sums), tuple(ordered)


def phrase_values(family: Family, structure: Structure, name: str) -> dict[str, str]:
    """Attribute type -> parameter of phrase ``name``'s filter (``{"size": "<Z2>", ...}``)."""
    node = family.program[structure.phrases[name].filter]
    return {family.params[value]: value for value in node.value_inputs if value in family.params}


def said_apart(family: Family, structure: Structure, params: Mapping[str, str]) -> bool:
    """Whether the words alone keep every same-attribute phrase's anchor out of it: both name
    one attribute, with different values ("green things … as the blue cube"). Only then is
    "other"/«другой» left unsaid: a reader who does not see the scene cannot tell otherwise
    whether "the sphere of the same size as the green thing" may be the green thing itself."""
    if not structure.same_anchor:
        return False
    for phrase, anchor in structure.same_anchor.items():
        mine, theirs = phrase_values(family, structure, phrase), phrase_values(family, structure, anchor)
        if not any(params.get(mine[kind], "") and params.get(theirs[kind], "") and params[mine[kind]] != params[theirs[kind]]
                   for kind in mine.keys() & theirs.keys()):
            return False
    return True


def names_its_anchor(family: Family, structure: Structure, params: Mapping[str, str]) -> bool:
    """Whether a phrase names every attribute an earlier object's description names, so that only
    that object can be it: a same-attribute phrase and its anchor ("other cylinders … as the
    cylinder": none whatever the scene), or two objects of a chain («Впереди цилиндра расположен
    маленький предмет. За ним расположен цилиндр»: the first cylinder again, read as a new one).
    Readers take the repeated description for one that picks out another object: no text says
    such a question."""
    pairs = list(structure.same_anchor.items())
    if structure.relation_target:
        ones = [name for name, phrase in structure.phrases.items() if phrase.unique is not None]
        program = family.program
        # an object found by a relation («За ним расположен цилиндр») and an earlier one, the only
        # one so described in the whole scene (its filter reads the scene)
        found = set(structure.relation_target.values())
        pairs += [(later, earlier) for i, earlier in enumerate(ones) for later in ones[i + 1:]
                  if later in found and program[program[structure.phrases[earlier].filter].inputs[0]].function == "scene"]
    for phrase, anchor in pairs:
        mine, theirs = phrase_values(family, structure, phrase), phrase_values(family, structure, anchor)
        said = {kind: params.get(value, "") for kind, value in theirs.items() if params.get(value, "")}
        if said and all(kind in mine and params.get(mine[kind], "") == value for kind, value in said.items()):
            return True
    return False


def loops_back(family: Family, structure: Structure, params: Mapping[str, str], unsafe: Sequence[str]) -> bool:
    """Whether an object found by a relation is an earlier object of the chain that its words fit,
    said as if new («Правее серого шара расположен другой шар. Впереди этого шара расположен
    шар»: the gray ball again). ``same:<P>:<Q>`` is recorded wherever the two differ; no text says
    such a question."""
    recorded = set(unsafe)
    for later in set(structure.relation_target.values()):
        if structure.phrases[later].unique is None:
            continue
        mine = {kind: params.get(value, "") for kind, value in phrase_values(family, structure, later).items() if params.get(value, "")}
        for earlier, phrase in structure.phrases.items():
            if earlier == later or phrase.unique is None or f"same:{later}:{earlier}" in recorded:
                continue
            theirs = {kind: params.get(value, "") for kind, value in phrase_values(family, structure, earlier).items() if params.get(value, "")}
            if mine.items() <= theirs.items() or theirs and theirs.items() <= mine.items():
                return True
    return False


def bare_noun_first(family: Family, structure: Structure, params: Mapping[str, str]) -> Mapping[str, str]:
    """``params`` with the values of two coordinated phrases of a union or sum swapped where the
    first has attributes and the second none, so that the text says the bare noun first («cubes
    and yellow spheres», not «yellow spheres and cubes»: the sets are the same, one reading).
    Never the two sides of a comparison or the objects of a swap (``Structure.ordered``)."""
    for first, second in structure.coordinated:
        if (first, second) in structure.ordered:
            continue
        mine, theirs = phrase_values(family, structure, first), phrase_values(family, structure, second)
        if mine.keys() != theirs.keys():
            continue
        if any(params.get(mine[k], "") for k in mine if k != "shape") and not any(params.get(theirs[k], "") for k in theirs if k != "shape"):
            params = {**params, **{mine[k]: params.get(theirs[k], "") for k in mine}, **{theirs[k]: params.get(mine[k], "") for k in mine}}
    return params


def _ancestors(program: tuple[TemplateNode, ...]) -> list[set[int]]:
    found: list[set[int]] = []
    for node in program:
        found.append(set().union(*(found[i] | {i} for i in node.inputs)) if node.inputs else set())
    return found


# ---------------------------------------------------------------------------------------------
# Executing the other readings


class ReadingCheck:
    """A family's other readings made ready to execute: each anchor/attach reading's edited
    program compiled once, so that checking a question runs only the template nodes."""

    def __init__(self, family: Family) -> None:
        self.family = family
        self.plan = Plan.of(family)
        self.structure = structure_of(family)
        self.edited: dict[str, Plan | None] = {}
        for reading in self.structure.readings:
            kind, _, rest = reading.partition(":")
            if kind in ("anchor", "attach"):
                relation, _, name = rest.partition(":")
                edited = _edit(family, self.structure, kind, relation, name)
                self.edited[reading] = None if edited is None else Plan.of(edited)

    def unsafe(self, params: Mapping[str, str], scene: SceneIndex, outputs: Sequence[Any] = ()) -> list[str]:
        """The other readings of the family with ``params`` that give another answer on ``scene``,
        or none where the intended reading has one; and ``self:<P>`` where the anchor fits ``<P>``.

        ``outputs``: the intended reading's output at each template node, when already known
        (the search's); they are computed otherwise.
        """
        if not self.structure.readings:
            return []
        choices = choices_of(self.plan, params)
        outputs = outputs or run_plan(self.plan, choices, scene)
        answer = format_answer(outputs[-1])
        unsafe = []
        for reading in self.structure.readings:
            kind, _, rest = reading.partition(":")
            try:
                if kind in ("anchor", "attach"):
                    edited = self.edited[reading]
                    if edited is None:
                        continue
                    other = format_answer(run_plan(edited, choices_of(edited, params), scene)[-1])
                elif kind == "exclusive":
                    other = format_answer(run_plan(self.plan, choices, scene, (int(rest), _exclusive), outputs)[-1])
                elif kind == "distribute":
                    giver, _, taker = rest.partition(":")
                    widened_params = self._distributed(params, giver, taker)
                    if widened_params is None:
                        continue
                    other = format_answer(run_plan(self.plan, choices_of(self.plan, widened_params), scene)[-1])
                elif kind == "union":
                    node = self.family.program[int(rest)]
                    sets = [outputs[self.family.program[i].inputs[0]] for i in node.inputs]
                    counted_once = (sets[0] | sets[1]).bit_count()
                    other = format_answer(run_plan(self.plan, choices, scene, (int(rest), _constant(counted_once)), outputs)[-1])
                elif kind == "same":  # two objects, not one: recorded whatever the answer
                    mine, _, theirs = rest.partition(":")
                    phrases = self.structure.phrases
                    if outputs[phrases[mine].unique] != outputs[phrases[theirs].unique]:  # type: ignore[index]  # both have one
                        unsafe.append(reading)
                    continue
                else:  # self: does the anchor pass the phrase's own description?
                    phrase = self.structure.phrases[rest]
                    source = self.family.program[phrase.filter].inputs[0]
                    widened = run_plan(self.plan, choices, scene, (source, _with_anchor), outputs)
                    if widened[phrase.filter] != outputs[phrase.filter]:
                        unsafe.append(reading)
                    continue
            except ExecutionError:
                unsafe.append(reading)
                continue
            if other != answer:
                unsafe.append(reading)
        return unsafe


    def _distributed(self, params: Mapping[str, str], source: str, target: str) -> dict[str, str] | None:
        """``params`` with the empty attributes of ``target`` given ``source``'s values; None where
        that changes nothing."""
        theirs = phrase_values(self.family, self.structure, source)
        changed = dict(params)
        for kind, slot in phrase_values(self.family, self.structure, target).items():
            if kind != "shape" and not params.get(slot, "") and params.get(theirs.get(kind, ""), ""):
                changed[slot] = params[theirs[kind]]
        return changed if changed != dict(params) else None


_CHECKS: dict[tuple[object, ...], ReadingCheck] = {}


def reading_check(family: Family) -> ReadingCheck:
    """The :class:`ReadingCheck` of ``family`` (made once per family program)."""
    key = (family.id, family.program, tuple(family.params.items()))
    check = _CHECKS.get(key)
    if check is None:
        check = _CHECKS[key] = ReadingCheck(family)
    return check


def unsafe_readings(family: Family, params: Mapping[str, str], scene: SceneIndex) -> list[str]:
    """:meth:`ReadingCheck.unsafe` of ``family`` with ``params`` on ``scene``."""
    return reading_check(family).unsafe(params, scene)


def _constant(value: int) -> Callable[[Any, tuple[Any, ...]], int]:
    return lambda _output, _args: value


def _exclusive(output: int, args: tuple[Any, ...]) -> int:
    return args[0] ^ args[1]


def _with_anchor(output: int, args: tuple[Any, ...]) -> int:
    return output | (1 << args[0])


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
    order = _topological(nodes, len(family.program) - 1)
    if order is None:
        return None
    new_index = {old: new for new, old in enumerate(order)}
    program = tuple(replace(nodes[old], inputs=tuple(new_index[i] for i in nodes[old].inputs)) for old in order)
    # The family's constraints name template nodes: renumber them, dropping any whose node the edit left out.
    different = tuple((new_index[i], new_index[j]) for i, j in family.different_outputs if i in new_index and j in new_index)
    least = tuple((new_index[i], count) for i, count in family.least if i in new_index)
    disjoint = tuple((new_index[i], new_index[j]) for i, j in family.disjoint if i in new_index and j in new_index)
    allowed = tuple((new_index[i], new_index[j]) for i, j in family.same_object_allowed if i in new_index and j in new_index)
    return replace(family, program=program, different_outputs=different, least=least, disjoint=disjoint, same_object_allowed=allowed)


def _topological(nodes: list[TemplateNode], answer: int) -> list[int] | None:
    """The positions of the nodes the answer needs, ordered so that every input comes first (answer
    node last), or None on a cycle."""
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

    return order if visit(answer) else None


def admitted(readings: Iterable[str], unsafe: Iterable[str] | None) -> list[str]:
    """The readings a text admits that would change its answer (none known when ``unsafe`` is None:
    a question written before the engine recorded them)."""
    if unsafe is None:
        return []
    unsafe_set = set(unsafe)
    return [reading for reading in readings if reading in unsafe_set]
