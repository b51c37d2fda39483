"""Instantiating a family on one scene: depth-first search over parameter values, pruned by the scene.

The search walks the program template node by node, keeping every node's output, so a branch
dies as soon as it breaks a rule; the question that comes out is well posed by construction:

- every ``unique`` sees exactly one object (no ambiguous reference);
- every filter is needed: dropping any one filter of a description would change its set, so no
  filter changes nothing and no word of a description is idle;
- the family's constraints hold (``empty``, ``not_empty`` and ``some_set`` parameters, ``different_outputs``,
  two ``unique`` nodes never the same object unless ``same_object_allowed``, ``not_empty``/``min_count``
  sets and counts, ``disjoint`` objects and sets);
- the two inputs of a comparison, union or intersection are not the same description, nor one
  a narrowing of the other ("more red cubes than cubes" tells its answer);
- ``exist`` is never asked of the whole scene, and a query's answer is never a word of the question;
- with the scene's camera, spatial relations are those the image shows by a margin, and the answer
  is the same whichever way a reader takes the pairs it leaves unclear (:mod:`questions.unclear`);
- beyond CLEVR: a function that cannot answer (an ordinal of too small a set, a tie for the most
  common value, "how many more" of fewer) prunes its branch; ``between`` must find something
  between, ``all`` a member of the first set in the second, ``add`` two counted sets with nothing
  in common, ``exclude_<attribute>`` a member with the excluded value.

Only values that the scene makes meaningful are tried: a filter that must end in one object is
built from that object's own attribute values. Each search has a step budget, so no scene stalls.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from assets.vocabulary import ATTRIBUTES, load_vocabulary
from questions.functions import RELATION, ExecutionError, format_answer
from questions.hypothetical import edit_matters, removal_decides
from questions.named_objects import early_checks, refuse_decided, refused_early
from questions.plan import EMPTY, FIXED, FREE, SET, Plan, PlanNode, Slot, run_plan
from questions.random_stream import RandomStream
from questions.scene_index import SceneIndex
from questions.unclear import answer_is_clear, sure_refusals, unclear_passes

_SCENE_SET: tuple[str, tuple[str, ...], frozenset[object]] = ("set", ("scene",), frozenset())
#: Nodes where the search asks whether a what-if edit matters to the answer (questions.hypothetical).
_EDIT_JUDGED = frozenset({"count", "greater_than", "less_than", "equal_integer"})

@dataclass(frozen=True)
class Candidate:
    """One well-posed instantiation: the value of each filter/relate node and the answer."""

    choices: tuple[Any, ...]  # per template node: tuple of slot values (filter), relation (relate), or None
    answer: str
    outputs: tuple[Any, ...] = ()  # per template node: its output on the scene (what run_plan gives)


class SceneSearch:
    """Everything the search reuses across the families asked on one scene."""

    def __init__(self, scene: SceneIndex, stream: RandomStream) -> None:
        self.scene = scene
        self.stream = stream
        self.steps = 0  # across all searches on this scene: the scene's budget counts these
        vocabulary = load_vocabulary()
        self._names = {attribute: vocabulary.names(attribute) for attribute in ATTRIBUTES}
        self._relations = tuple(name for name in vocabulary.relations if name in scene.relations())
        self._filter_options: dict[tuple[int, int], list[tuple[tuple[str, ...], int]]] = {}
        self._object_descriptions: dict[tuple[int, int], tuple[list[int], _Worded] | None] = {}
        self._slot_masks: dict[tuple[str, str], list[tuple[str, int]]] = {}
        self._pairs: dict[tuple[int, tuple[str, ...]], frozenset[tuple[str, str]]] = {}
        self._edited: dict[tuple[Any, ...], SceneSearch] = {}  # per what-if edit: the search on the edited scene

    def find(self, plan: Plan, stop_at: int, relaxed: bool = False) -> Candidate | None:
        """One depth-first search in a fresh random order; None when the scene allows no candidate
        or the step count reaches ``stop_at`` first. Repeated calls find other candidates.
        ``relaxed``: the family's ``not_empty``/``min_count`` nodes may be empty here (its ``empty_share``)."""
        return _Walk(self, plan, stop_at, relaxed=relaxed).run()

    def instantiate(self, plan: Plan, params: Mapping[str, str], relaxed: bool = False) -> Candidate | None:
        """The family with the given parameter values (missing ones empty), or None if that
        question is not well posed on this scene. The same rules as the search apply
        (``relaxed``: as on a scene where the family's ``empty_share`` lets its sets be empty)."""
        unknown = set(params) - set(plan.family.params)
        if unknown:
            raise KeyError(f"{plan.family.id} has no parameter {', '.join(sorted(unknown))}")
        return _Walk(self, plan, self.steps + 1_000_000, wanted=params, relaxed=relaxed).run()

    def edited_search(self, node: PlanNode, scene: SceneIndex, args: tuple[Any, ...], value: Any) -> SceneSearch:
        """The search on ``scene`` after edit ``node`` with its ``args`` and ``value`` (made once per
        edit); ExecutionError where the edit changes nothing. Steps and the random stream stay this one's."""
        key = (node.function, args, value)
        found = self._edited.get(key)
        if found is None:
            found = self._edited[key] = SceneSearch(node.edit(scene, args, value), self.stream)
        return found

    def value_options(self, value_type: str) -> tuple[str, ...]:
        """The values a valued node may take here: the scene's relations, or an attribute's names."""
        return self._relations if value_type == RELATION else self._names[value_type]

    def filter_options(self, base: int, node: PlanNode) -> list[tuple[tuple[str, ...], int]]:
        """Every assignment of a filter node's slots in which each filter is needed, with its output mask.

        "Needed": dropping any one of the chosen filters would give a different set. So no filter
        changes nothing, whichever order they are applied in, and no word of a description is idle
        ("the large red cube" is not asked when "the red cube" is already the only one).
        """
        key = (base, node.option_id)
        options = self._filter_options.get(key)
        if options is None:
            options = self._single_options(base, node.slots, node.kinds_id) if node.need_single else self._all_options(base, node.slots)
            if node.need_some:
                options = [option for option in options if any(option[0])]
            self._filter_options[key] = options
        return options

    def described_pairs(self, node: PlanNode, values: tuple[str, ...]) -> frozenset[tuple[str, str]]:
        """The (attribute, value) pairs a filter node's chosen ``values`` add to the canonical description of its input."""
        key = (node.option_id, values)
        pairs = self._pairs.get(key)
        if pairs is None:
            pairs = self._pairs[key] = frozenset((slot.attribute, value) for slot, value in zip(node.slots, values, strict=True) if value)
        return pairs

    def _single_options(self, base: int, slots: tuple[Slot, ...], kinds: int) -> list[tuple[tuple[str, ...], int]]:
        # A description of one object uses only that object's own values: for each object in the
        # input, each allowed subset of slots whose filters narrow the input to it, each one needed.
        subsets = _allowed_subsets(slots)
        options = []
        for index in self.scene.indices(base):
            described = self._descriptions(index, slots, kinds)
            if described is None:
                continue
            ands, worded = described
            target = 1 << index
            for subset in subsets:
                if base & ands[subset] == target and _each_needed(base, ands, subset, target):
                    options.append((worded[subset], target))
        return options

    def _descriptions(
        self, index: int, slots: tuple[Slot, ...], kinds: int
    ) -> tuple[list[int], _Worded] | None:
        """Per subset of ``slots`` (a bit set), the objects having all of object ``index``'s values in
        those slots, and those values as slot values (others empty); None when a literal slot does
        not fit it (``kinds``: the number standing for the slots' kinds, the cache key)."""
        key = (index, kinds)
        if key in self._object_descriptions:
            return self._object_descriptions[key]
        own = [self.scene.values[slot.attribute][index] for slot in slots]
        described: tuple[list[int], _Worded] | None = None
        if not any(slot.mode == FIXED and value != slot.literal for slot, value in zip(slots, own, strict=True)):
            masks = [self.scene.mask(slot.attribute, value) for slot, value in zip(slots, own, strict=True)]
            size = len(slots)
            ands = [-1] * (1 << size)
            for subset in range(1, 1 << size):
                lowest = subset & -subset
                ands[subset] = ands[subset ^ lowest] & masks[lowest.bit_length() - 1]
            described = (ands, _Worded(own))
        self._object_descriptions[key] = described
        return described

    def _all_options(self, base: int, slots: tuple[Slot, ...]) -> list[tuple[tuple[str, ...], int]]:
        # Slot by slot, keeping partial assignments whose every filter is needed so far: with each
        # one, the set given by all the other filters (``without``), which must stay another set.
        # A filter not needed now is not needed after more filters either (both sets narrow
        # alike), so dropping such an assignment early gives the same list as checking at the end;
        # after an empty set no filter can narrow, so such branches stay empty to the end.
        partial: list[tuple[tuple[str, ...], int, tuple[int, ...]]] = [((), base, ())]
        for slot in slots:
            masks = self._value_masks(slot)
            may_stay_empty, may_take_value = slot.mode in (FREE, EMPTY), slot.mode != EMPTY
            grown: list[tuple[tuple[str, ...], int, tuple[int, ...]]] = []
            add = grown.append
            for chosen, current, without in partial:
                if may_stay_empty:
                    add((chosen + ("",), current, without))
                if may_take_value and current:
                    for value, mask in masks:
                        narrowed = current & mask
                        if narrowed == current:
                            continue
                        if not without:
                            add((chosen + (value,), narrowed, (current,)))
                            continue
                        others = tuple([rest & mask for rest in without])
                        if narrowed not in others:
                            add((chosen + (value,), narrowed, (*others, current)))
            partial = grown
        return [(chosen, current) for chosen, current, _ in partial]

    def _value_masks(self, slot: Slot) -> list[tuple[str, int]]:
        """The values a slot may take, each with the objects having it."""
        key = (slot.attribute, slot.literal if slot.mode == FIXED else "")
        masks = self._slot_masks.get(key)
        if masks is None:
            values = (slot.literal,) if slot.mode == FIXED else self._names[slot.attribute]
            masks = self._slot_masks[key] = [(value, self.scene.mask(slot.attribute, value)) for value in values]
        return masks


class _Worded(dict[int, tuple[str, ...]]):
    """An object's values in a filter node's slots, per subset of the slots (a bit set): the values
    in the subset's slots, the others empty; each made when first asked for."""

    def __init__(self, own: list[str]) -> None:
        super().__init__()
        self.own = own

    def __missing__(self, subset: int) -> tuple[str, ...]:
        worded = self[subset] = tuple(value if subset >> k & 1 else "" for k, value in enumerate(self.own))
        return worded


@cache
def _allowed_subsets(slots: tuple[Slot, ...]) -> tuple[int, ...]:
    """Bit sets of slots that may carry a value together: with every set/fixed slot, no empty one."""
    required = sum(1 << k for k, slot in enumerate(slots) if slot.mode in (SET, FIXED))
    forbidden = sum(1 << k for k, slot in enumerate(slots) if slot.mode == EMPTY)
    return tuple(subset for subset in range(1 << len(slots)) if subset & required == required and not subset & forbidden)


def _each_needed(base: int, ands: list[int], subset: int, result: int) -> bool:
    rest = subset
    while rest:
        lowest = rest & -rest
        if base & ands[subset ^ lowest] == result:
            return False
        rest ^= lowest
    return True


class _Walk:
    """One depth-first search for one candidate, in a random order."""

    def __init__(
        self, search: SceneSearch, plan: Plan, stop_at: int, wanted: Mapping[str, str] | None = None, relaxed: bool = False
    ) -> None:
        self.search = search
        self.checked = plan.relaxed_checked_at if relaxed else plan.checked_at
        self.least = () if relaxed else plan.least_at
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
        self.sure = sure_refusals(plan)
        self.named = early_checks(plan)
        self.after: list[SceneSearch] = [search] * size  # per node: the search on the scene the next node reads

    def _search_at(self, t: int) -> SceneSearch:
        """The search on the scene node ``t`` reads: the edited one after a what-if edit node."""
        return self.after[t - 1] if t else self.search

    def run(self) -> Candidate | None:
        return self._visit(0)

    def _visit(self, t: int) -> Candidate | None:
        if t == len(self.nodes):
            return self._finish()
        node = self.nodes[t]
        search = self.search
        checks = self.checked[t]
        if node.kind == "filter":
            base = self.out[node.inputs[0]]
            here = self._search_at(t)
            self.after[t] = here
            options = here.filter_options(base, node)
            if self.wanted is not None:
                want = tuple(self.wanted.get(slot.param, "") if slot.param else slot.literal for slot in node.slots)
                options = [option for option in options if option[0] == want]
            out, choices, canons, stop_at = self.out, self.choices, self.canon, self.stop_at
            source = canons[node.inputs[0]]  # an earlier node's: fixed while this one tries its options
            relate = self.sure.get(t)
            doubt = 0
            if relate is not None:
                doubt = self._search_at(relate).scene.unclear(choices[relate], out[self.nodes[relate].inputs[0]])
            for k in self.stream.lazy_order(len(options)):
                if search.steps >= stop_at:
                    return None
                search.steps += 1
                values, mask = options[k]
                if doubt and unclear_passes(here.scene, node.slots, values, doubt):
                    continue  # an unclear object would pass too: the end's check would refuse it
                out[t] = mask
                choices[t] = values
                canons[t] = ("set", source[1], source[2] | search.described_pairs(node, values))
                if (not checks or self._holds(t)) and not (self.named[t] and self._named_refusal(t)):
                    found = self._visit(t + 1)
                    if found is not None:
                        return found
            return None
        if node.kind == "valued":
            values = (node.value_literal,) if node.value_literal else search.value_options(node.value_type)
            if self.wanted is not None and node.value_param is not None:
                values = tuple(v for v in values if v == self.wanted.get(node.value_param))
            if node.function == "seen_from" and self._viewpoint_blurred(node):
                return None  # "facing the red metal thing, is the red sphere on your left?": the words allow one object
            args = tuple(self.out[i] for i in node.inputs)
            for k in self.stream.lazy_order(len(values)):
                if search.steps >= self.stop_at:
                    return None
                search.steps += 1
                value = values[k]
                try:
                    self.out[t] = self._run_node(t, node, args, value)
                except ExecutionError:
                    continue  # not answerable with this value (an ordinal of a set too small, a tie)
                if node.function.startswith("exclude_") and self.out[t] == args[0]:
                    continue  # excluding a value no object has says nothing
                self.choices[t] = value
                canon = (node.function, value, *(self.canon[i] for i in node.inputs))
                self.canon[t] = ("set", canon, frozenset()) if node.gives_set else canon
                if (not checks or self._holds(t)) and not (self.named[t] and self._named_refusal(t)):
                    found = self._visit(t + 1)
                    if found is not None:
                        return found
            return None
        search.steps += 1
        self.after[t] = self._search_at(t)
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
                self.out[t] = self._run_node(t, node, args, None)
            except ExecutionError:
                return None  # e.g. a most common value shared by a tie, fewer more than more
            if node.function == "between" and not self.out[t]:
                return None  # nothing lies between the two: "what is between them?" has no subject
            canon = (node.function, *(self.canon[i] for i in node.inputs))
            self.canon[t] = ("set", canon, frozenset()) if node.gives_set else canon
        if checks and not self._holds(t) or self.named[t] and self._named_refusal(t):
            return None
        return self._visit(t + 1)

    def _run_node(self, t: int, node: PlanNode, args: tuple[Any, ...], value: Any) -> Any:
        """Node ``t``'s output on the scene it reads; after an edit node, the nodes after it read the edited scene."""
        here = self._search_at(t)
        if node.edit is None:
            self.after[t] = here
            return node.handler(here.scene, args, value)
        edited = here.edited_search(node, here.scene, args, value)
        self.after[t] = edited
        return edited.scene.all

    def _well_posed_call(self, node: PlanNode) -> bool:
        if node.function in ("exist", "none") and self.canon[node.inputs[0]] == _SCENE_SET:
            return False  # "is there a thing?" is always yes
        if len(node.inputs) == 2 and _overlapping(self.canon[node.inputs[0]], self.canon[node.inputs[1]]):
            return False
        if node.function == "all" and not self.out[node.inputs[0]] & self.out[node.inputs[1]]:
            return False  # "are all the red things cubes?" when no red thing is a cube says no twice over
        if node.function == "add" and self._counted_sets_overlap(node):
            return False  # "how many red things and cubes in total" counts a red cube twice, or once?
        if node.function in _EDIT_JUDGED and not self._edit_matters(node):
            return False  # "if the cube were blue, how many green things?": the "if" changes nothing
        return True

    def _viewpoint_blurred(self, node: PlanNode) -> bool:
        """Whether the object a perspective question asks about (``seen_from``'s last input) may be, by
        the words alone, the one stood at or faced: its description and theirs name no attribute with
        two values. Two blind readers took «красный шар» for «красный блестящий объект» faced."""
        *places, asked = (self._description(unique) for unique in node.inputs)
        return any(not any(kind in place and place[kind] != value for kind, value in asked.items()) for place in places)

    def _description(self, unique: int) -> dict[str, str]:
        """Attribute -> value the words give the object of ``unique`` node (its description's canonical pairs)."""
        return dict(self.canon[self.nodes[unique].inputs[0]][2])

    def _edit_matters(self, node: PlanNode) -> bool:
        """For the answer's count, or a comparison of counts, of descriptions read right after a what-if
        edit: whether the edit changes one of them and the words decide none (True where there is none)."""
        if node.function == "count":
            if node is not self.nodes[-1]:
                return True  # a count compared with another is judged at the comparison
            counts = [node]
        else:
            counts = [self.nodes[i] for i in node.inputs if self.nodes[i].function == "count"]
        verdicts = [self._count_after_edit(count) for count in counts]
        if "decided" in verdicts:
            return False
        return "changed" in verdicts or all(verdict == "plain" for verdict in verdicts)

    def _count_after_edit(self, node: PlanNode) -> str:
        """"plain" (not a description read right after an edit), "decided" (the words say what is left
        after a removal), "same" (the edit does not change the count) or "changed"."""
        source = node.inputs[0]
        described = self.nodes[source]
        edit = self.nodes[described.inputs[0]] if described.kind == "filter" else None
        if edit is None or edit.edit is None:
            return "plain"
        pairs = self.canon[source][2]
        if edit.function == "remove" and removal_decides(self.canon[edit.inputs[0]], pairs):
            return "decided"
        return "changed" if edit_matters(self.scene, pairs, self.out[source]) else "same"

    def _counted_sets_overlap(self, node: PlanNode) -> bool:
        counted = [self.nodes[i] for i in node.inputs]
        if not all(source.function == "count" for source in counted):
            return False
        first, second = (self.out[source.inputs[0]] for source in counted)
        return bool(first & second)

    def _named_refusal(self, t: int) -> bool:
        """Whether the candidate so far is refused, whatever comes next, for an object it names
        (:func:`questions.named_objects.refused_early`)."""
        return refused_early(self.plan, self.choices, self.out, self.named[t]) is not None

    def _holds(self, t: int) -> bool:
        """Node ``t``'s constraints: outputs that must differ, its least size, objects kept out of sets."""
        out = self.out
        value = out[t]
        for other in self.plan.checks_at[t]:
            if value == out[other]:
                return False
        least = self.least[t] if self.least else 0
        node = self.nodes[t]
        if least and (value.bit_count() if node.kind == "filter" or node.gives_set else value) < least:
            return False
        return not any(out[group] >> out[thing] & 1 for thing, group in self.plan.disjoint_at[t])

    def _finish(self) -> Candidate | None:
        answer = format_answer(self.out[-1])
        if self.plan.family.answer_type in ATTRIBUTES and any(
            isinstance(choice, tuple) and answer in choice for choice in self.choices
        ):
            return None  # the question would name its own answer
        if not answer_is_clear(self.plan, tuple(self.choices), self.out, self.scene):
            return None  # its answer hangs on a pair the image leaves unclear
        if refuse_decided(self.plan, self.choices, self.out, self.scene):
            return None  # its words decide the answer, or leave open whether a named object counts
        if any(node.function == "swap" for node in self.nodes) and answer == self._answer_unswapped():
            return None  # "if A and B changed places …": the answer is the picture's, the "if" changes nothing
        return Candidate(tuple(self.choices), answer, tuple(self.out))

    def _answer_unswapped(self) -> str | None:
        """The answer with the swap node leaving the objects where they stand; None where that cannot be answered."""
        unswapped = replace(self.plan, nodes=tuple(
            replace(node, edit=None, handler=_every_object) if node.function == "swap" else node for node in self.nodes))
        try:
            return format_answer(run_plan(unswapped, tuple(self.choices), self.scene)[-1])
        except ExecutionError:
            return None


def _every_object(scene: SceneIndex, args: tuple[Any, ...], value: Any) -> int:
    return scene.all


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


