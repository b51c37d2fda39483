"""Questions whose answer does not hang on a pair the image leaves unclear.

With the scene's camera, ``relate`` and ``between`` give the objects the image shows clearly in the
relation (:mod:`questions.image_geometry`); the objects it shows clearly in neither direction
(almost on one vertical line, near the edge of "between") are *unclear*: a reader may count them
in or out. A question is asked only if every way of taking them, object by object, gives the same
answer, and no step of the program becomes unanswerable. A question with more than
:data:`MAX_UNCLEAR` unclear objects is not asked (2**MAX_UNCLEAR readings at most are executed).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from questions.functions import ExecutionError, between_split, format_answer
from questions.plan import Plan, run_plan_with
from questions.scene_index import SceneIndex

MAX_UNCLEAR = 4


def answer_is_clear(plan: Plan, choices: tuple[Any, ...], outputs: tuple[Any, ...] | list[Any], scene: SceneIndex) -> bool:
    """Whether the answer of the candidate (its per-node ``choices`` and ``outputs``) is the same
    whichever unclear objects a reader counts into its ``relate`` and ``between`` steps."""
    doubts = unclear_steps(plan, choices, outputs, scene)
    if not doubts:
        return True
    bits = [(t, 1 << j) for t, mask in doubts for j in range(scene.count) if mask >> j & 1]
    if len(bits) > MAX_UNCLEAR:
        return False
    answer = format_answer(outputs[-1])
    for reading in range(1, 1 << len(bits)):
        extra: dict[int, int] = {}
        for k, (t, bit) in enumerate(bits):
            if reading >> k & 1:
                extra[t] = extra.get(t, 0) | bit
        replacements = {t: _counted_in(mask, _inputs(plan, outputs, t)) for t, mask in extra.items()}
        try:
            other = format_answer(run_plan_with(plan, choices, scene, replacements, outputs)[-1])
        except ExecutionError:
            return False
        if other != answer:
            return False
    return True


def unclear_steps(plan: Plan, choices: tuple[Any, ...], outputs: tuple[Any, ...] | list[Any], scene: SceneIndex) -> list[tuple[int, int]]:
    """(node, unclear objects) for each ``relate`` and ``between`` node with some."""
    found = []
    for t in _spatial_nodes(plan):
        node = plan.nodes[t]
        read = _scene_read_by(plan, choices, outputs, scene, t) if plan.edits else scene
        if node.function == "relate":
            mask = read.unclear(choices[t], outputs[node.inputs[0]])
        elif node.function == "between":
            mask = between_split(read, outputs[node.inputs[0]], outputs[node.inputs[1]])[1]
        if mask:
            found.append((t, mask))
    return found


#: Per plan (by id, the entry holding the plan so the id stays its own), what these checks look up
#: in its nodes; emptied when it grows past _CACHED plans (a long run makes a few hundred).
_BY_PLAN: dict[int, tuple[Plan, tuple[int, ...], dict[int, int]]] = {}
_CACHED = 2000


def _nodes_of(plan: Plan) -> tuple[tuple[int, ...], dict[int, int]]:
    entry = _BY_PLAN.get(id(plan))
    if entry is None or entry[0] is not plan:
        if len(_BY_PLAN) >= _CACHED:
            _BY_PLAN.clear()
        spatial = tuple(t for t, node in enumerate(plan.nodes) if node.function in ("relate", "between"))
        last = plan.nodes[-1]
        sure = {
            t: node.inputs[0] for t, node in enumerate(plan.nodes)
            if node.kind == "filter" and plan.nodes[node.inputs[0]].function == "relate"
            and (node.need_single or (last.function == "count" and last.inputs == (t,)))
        }
        entry = _BY_PLAN[id(plan)] = (plan, spatial, sure)
    return entry[1], entry[2]


def _scene_read_by(plan: Plan, choices: tuple[Any, ...], outputs: tuple[Any, ...] | list[Any], scene: SceneIndex,
                   t: int) -> SceneIndex:
    """The scene node ``t`` reads: ``scene`` edited by every what-if edit node before it (a relation
    after a swap is judged where the objects stand then)."""
    for e in range(t):
        node = plan.nodes[e]
        if node.edit is not None:
            scene = node.edit(scene, _inputs(plan, outputs, e), choices[e] if node.kind == "valued" else None)
    return scene


def _spatial_nodes(plan: Plan) -> tuple[int, ...]:
    return _nodes_of(plan)[0]


def _inputs(plan: Plan, outputs: tuple[Any, ...] | list[Any], t: int) -> tuple[Any, ...]:
    return tuple(outputs[i] for i in plan.nodes[t].inputs)


def _counted_in(extra: int, intended: tuple[Any, ...]) -> Callable[[Any, tuple[Any, ...]], Any]:
    def widen(output: int, args: tuple[Any, ...]) -> int:
        if args != intended:  # another reading moved the anchor itself: the answer is not the same question's
            raise ExecutionError("an unclear object changed which object a later step is about")
        return output | extra

    return widen


def sure_refusals(plan: Plan) -> dict[int, int]:
    """Filter node -> the ``relate`` node it reads, where any unclear object of that relate passing
    the filter surely changes the answer (the filter feeds a ``unique``, which would see two
    objects, or the ``count`` that is the answer): the search drops such options at once."""
    return _nodes_of(plan)[1]


def unclear_passes(scene: SceneIndex, slots: tuple[Any, ...], values: tuple[str, ...], unclear: int) -> bool:
    """Whether some of the ``unclear`` objects have every value of a filter node's ``values``."""
    for slot, value in zip(slots, values, strict=True):
        if value:
            unclear &= scene.mask(slot.attribute, value)
    return unclear != 0
