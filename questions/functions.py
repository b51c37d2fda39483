"""The program functions of CLEVR's release form: each one's signature and its small handler.

Signatures let the validator check a family's program before it ever meets a scene; handlers
are what the executor and the instantiation search run. Values passed between nodes are kept
cheap to compute with: a set of objects is an ``int`` bit mask (bit ``i`` = object ``i``), an
object is its index, and integers, booleans and attribute values are plain Python values.

Attribute functions (``filter_color``, ``query_shape``, ...) are made for every attribute the
vocabulary lists, so a new attribute needs no code here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from assets.vocabulary import ATTRIBUTES, load_vocabulary
from questions.hypothetical import EditRefused, edited_scene, swapped_scene
from questions.image_geometry import OPPOSITE, between_masks
from questions.occlusion import SceneOcclusion
from questions.perspective import Viewpoint, seen_side
from questions.scene_index import SceneIndex

#: Value types flowing between nodes (attribute values are typed by their attribute's name).
OBJECTS = "objects"
OBJECT = "object"
INTEGER = "integer"
BOOL = "bool"
RELATION = "relation"

#: The template-only node that expands into one ``filter_<attribute>`` per non-empty parameter.
FILTER_MACRO = "filter"


class ExecutionError(ValueError):
    """A program that cannot be answered on a scene: a ``unique`` that does not see exactly one
    object, an unknown function, or inputs of the wrong kind."""


class MalformedProgram(ExecutionError):
    """A program that no scene can run: an unknown function, an input that is not an earlier node,
    a wrong count or type of inputs (bad input data, not a property of the scene)."""


@dataclass(frozen=True)
class Function:
    """One program function: input types, the type of its single value input (or None), output type."""

    name: str
    inputs: tuple[str, ...]
    value_type: str | None
    output: str
    handler: Callable[[SceneIndex, tuple[Any, ...], Any], Any]
    # An edit node's scene after it (questions.hypothetical): every later node of the program reads it.
    edit: Callable[[SceneIndex, tuple[Any, ...], Any], SceneIndex] | None = None


def unique_object(mask: int) -> int:
    """The index of the only object in ``mask``; ExecutionError unless there is exactly one."""
    if mask.bit_count() != 1:
        raise ExecutionError(f"unique: expected exactly one object, found {mask.bit_count()}")
    return mask.bit_length() - 1


def _attribute_functions(attribute: str) -> list[Function]:
    def filter_handler(scene: SceneIndex, args: tuple[Any, ...], value: Any) -> int:
        return args[0] & scene.mask(attribute, value)

    def query_handler(scene: SceneIndex, args: tuple[Any, ...], value: Any) -> str:
        return scene.values[attribute][args[0]]

    def same_handler(scene: SceneIndex, args: tuple[Any, ...], value: Any) -> int:
        # CLEVR's same_<attribute> excludes the object itself ("other things with the same ...").
        index = args[0]
        return scene.mask(attribute, scene.values[attribute][index]) & ~(1 << index)

    def equal_handler(scene: SceneIndex, args: tuple[Any, ...], value: Any) -> bool:
        return args[0] == args[1]

    def exclude_handler(scene: SceneIndex, args: tuple[Any, ...], value: Any) -> int:
        return args[0] & ~scene.mask(attribute, value)

    def most_common_handler(scene: SceneIndex, args: tuple[Any, ...], value: Any) -> str:
        return most_common_value(scene, attribute, args[0])

    return [
        Function(f"filter_{attribute}", (OBJECTS,), attribute, OBJECTS, filter_handler),
        Function(f"query_{attribute}", (OBJECT,), None, attribute, query_handler),
        Function(f"same_{attribute}", (OBJECT,), None, OBJECTS, same_handler),
        Function(f"equal_{attribute}", (attribute, attribute), None, BOOL, equal_handler),
        Function(f"exclude_{attribute}", (OBJECTS,), attribute, OBJECTS, exclude_handler),
        Function(f"most_common_{attribute}", (OBJECTS,), None, attribute, most_common_handler),
    ]


def most_common_value(scene: SceneIndex, attribute: str, members: int) -> str:
    """The value of ``attribute`` that more objects of ``members`` have than any other value;
    ExecutionError for fewer than two objects or a tie."""
    if members.bit_count() < 2:
        raise ExecutionError(f"most_common_{attribute}: needs at least two objects, found {members.bit_count()}")
    counts = sorted(((scene.mask(attribute, value) & members).bit_count(), value) for value in allowed_values(attribute))
    if counts[-1][0] == counts[-2][0]:
        raise ExecutionError(f"most_common_{attribute}: {counts[-1][1]} and {counts[-2][1]} are equally common")
    return counts[-1][1]


def ranked_object(scene: SceneIndex, members: int, relation: str, rank: int) -> int:
    """The object of ``members`` with exactly ``rank`` other members in ``relation`` to it and all the
    others in the opposite relation: rank 0 with ``left`` is the leftmost, rank 1 the second from the
    left. With the scene's camera, relations are those the image shows by the margin, so the winner
    stands clear of its neighbours in the ranking (a near tie is no answer). ExecutionError when the
    set is too small for the rank to mean anything (fewer than ``rank + 2`` objects) or when no
    object or several have that rank."""
    size = members.bit_count()
    if size < rank + 2:
        raise ExecutionError(f"needs at least {rank + 2} objects to rank, found {size}")
    opposite = OPPOSITE.get(relation)
    found = [
        index for index in scene.indices(members)
        if (scene.related(relation, index) & members).bit_count() == rank
        and (opposite is None or (scene.related(opposite, index) & members).bit_count() == size - 1 - rank)
    ]
    if len(found) != 1:
        raise ExecutionError(f"{len(found)} objects clearly have rank {rank + 1} {relation}")
    return found[0]


def between_split(scene: SceneIndex, first: int, second: int) -> tuple[int, int]:
    """(objects between ``first`` and ``second``, objects that may or may not be): near the segment
    joining their ground points as the image shows them (on the floor plan without a camera)."""
    if first == second:
        raise ExecutionError("between: the two objects are the same")
    points = scene.plan_points()
    if points is None:
        raise ExecutionError("between: the scene gives no positions")
    inside, unclear = between_masks(points, first, second)
    return inside & scene.all, unclear & scene.all


def between_objects(scene: SceneIndex, first: int, second: int) -> int:
    """The objects clearly between two objects (:func:`between_split`)."""
    return between_split(scene, first, second)[0]


#: How much nearer the closest object must be than the next one (scene units; objects are at least 0.25 apart).
CLOSEST_MARGIN = 0.2


def closest_object(scene: SceneIndex, anchor: int, members: int) -> int:
    """The object of ``members`` (the anchor itself left out) nearest to ``anchor`` on the ground
    plane; ExecutionError for fewer than two candidates, a scene without coordinates, or a runner-up
    within CLOSEST_MARGIN (too close to call from the image). With the scene's camera, the same
    object must also be the nearest in the image, the runner-up further by the image margin."""
    candidates = scene.indices(members & ~(1 << anchor))
    if len(candidates) < 2 or scene.ground is None:
        raise ExecutionError(f"closest: needs two other objects with coordinates, found {len(candidates)}")
    ax, ay = scene.ground[anchor]
    ranked = sorted((((scene.ground[i][0] - ax) ** 2 + (scene.ground[i][1] - ay) ** 2) ** 0.5, i) for i in candidates)
    if ranked[1][0] - ranked[0][0] < CLOSEST_MARGIN:
        raise ExecutionError(f"closest: objects {ranked[0][1]} and {ranked[1][1]} are about as near")
    image = scene.image
    if image is not None:
        seen = sorted((image.distance(anchor, i), i) for i in candidates)
        if seen[0][1] != ranked[0][1] or seen[1][0] - seen[0][0] <= image.margin:
            raise ExecutionError(f"closest: in the image, objects {seen[0][1]} and {seen[1][1]} look about as near")
    return ranked[0][1]


def scene_occlusion_of(scene: SceneIndex, members: int) -> SceneOcclusion:
    """The scene's occlusion (questions/occlusion.py); ExecutionError without one, or when an object of
    ``members`` shows too little of itself to be seen at all."""
    occlusion = scene.occlusion
    if occlusion is None:
        raise ExecutionError("the scene records no occlusion (not rendered, or rendered before it was recorded)")
    if not occlusion.seen_to_exist(members):
        raise ExecutionError("an object shows too little of itself to be seen at all")
    return occlusion


def occluded_members(scene: SceneIndex, members: int) -> int:
    """The objects of ``members`` clearly partly hidden by others; ExecutionError if one of them is unclear."""
    occlusion = scene_occlusion_of(scene, members)
    if members & occlusion.unclear:
        raise ExecutionError("occluded: whether an object is partly hidden is unclear")
    return members & occlusion.hidden


def unoccluded_members(scene: SceneIndex, members: int) -> int:
    """The objects of ``members`` clearly in full view; ExecutionError if one is unclear or none is hidden
    (then "in full view" says nothing: the question is a plain count)."""
    hidden = occluded_members(scene, members)
    if not hidden:
        raise ExecutionError("unoccluded: no object of the set is hidden")
    return members & ~hidden


def including_occluded(scene: SceneIndex, members: int) -> int:
    """``members`` themselves, asked only when some are clearly partly hidden and every one is seen to exist."""
    if not members & scene_occlusion_of(scene, members).hidden:
        raise ExecutionError("including_occluded: no object of the set is partly hidden")
    return members


def occluders_of(scene: SceneIndex, index: int) -> int:
    """The objects clearly hiding part of object ``index``; ExecutionError if another one may or may not."""
    occlusion = scene_occlusion_of(scene, 1 << index)
    if occlusion.unclear_hiders[index]:
        raise ExecutionError(f"occluders: whether some object hides part of object {index} is unclear")
    return scene_occlusion_of(scene, occlusion.hiders[index]).hiders[index]


def is_occluded(scene: SceneIndex, index: int) -> bool:
    """Whether object ``index`` is clearly partly hidden; ExecutionError when it is unclear."""
    return occluded_members(scene, 1 << index) != 0


def _subtract(scene: SceneIndex, args: tuple[Any, ...], value: Any) -> int:
    if args[0] <= args[1]:
        raise ExecutionError(f"subtract: {args[0]} is not more than {args[1]} (\"how many more\" needs more)")
    return args[0] - args[1]


def _all(scene: SceneIndex, args: tuple[Any, ...], value: Any) -> bool:
    if args[0].bit_count() < 2:
        raise ExecutionError(f"all: needs at least two objects to quantify over, found {args[0].bit_count()}")
    return args[0] & ~args[1] == 0


def _relate(scene: SceneIndex, args: tuple[Any, ...], value: Any) -> int:
    return scene.related(value, args[0])


def _general_functions() -> list[Function]:
    return [
        Function("scene", (), None, OBJECTS, lambda scene, args, value: scene.all),
        Function("unique", (OBJECTS,), None, OBJECT, lambda scene, args, value: unique_object(args[0])),
        Function("relate", (OBJECT,), RELATION, OBJECTS, _relate),
        Function("union", (OBJECTS, OBJECTS), None, OBJECTS, lambda scene, args, value: args[0] | args[1]),
        Function("intersect", (OBJECTS, OBJECTS), None, OBJECTS, lambda scene, args, value: args[0] & args[1]),
        Function("count", (OBJECTS,), None, INTEGER, lambda scene, args, value: args[0].bit_count()),
        Function("exist", (OBJECTS,), None, BOOL, lambda scene, args, value: args[0] != 0),
        Function("equal_integer", (INTEGER, INTEGER), None, BOOL, lambda scene, args, value: args[0] == args[1]),
        Function("less_than", (INTEGER, INTEGER), None, BOOL, lambda scene, args, value: args[0] < args[1]),
        Function("greater_than", (INTEGER, INTEGER), None, BOOL, lambda scene, args, value: args[0] > args[1]),
        # Beyond CLEVR: extremes, ordinals, betweenness, arithmetic on counts, quantifiers.
        Function("most", (OBJECTS,), RELATION, OBJECT, lambda scene, args, value: ranked_object(scene, args[0], value, 0)),
        Function("second", (OBJECTS,), RELATION, OBJECT, lambda scene, args, value: ranked_object(scene, args[0], value, 1)),
        Function("between", (OBJECT, OBJECT), None, OBJECTS, lambda scene, args, value: between_objects(scene, args[0], args[1])),
        Function("closest", (OBJECT, OBJECTS), None, OBJECT, lambda scene, args, value: closest_object(scene, args[0], args[1])),
        Function("add", (INTEGER, INTEGER), None, INTEGER, lambda scene, args, value: args[0] + args[1]),
        Function("subtract", (INTEGER, INTEGER), None, INTEGER, _subtract),
        Function("all", (OBJECTS, OBJECTS), None, BOOL, _all),
        Function("none", (OBJECTS,), None, BOOL, lambda scene, args, value: args[0] == 0),
        # Occlusion, as the rendered mask shows it (questions/occlusion.py).
        Function("occluded", (OBJECTS,), None, OBJECTS, lambda scene, args, value: occluded_members(scene, args[0])),
        Function("unoccluded", (OBJECTS,), None, OBJECTS, lambda scene, args, value: unoccluded_members(scene, args[0])),
        Function("including_occluded", (OBJECTS,), None, OBJECTS, lambda scene, args, value: including_occluded(scene, args[0])),
        Function("occluders", (OBJECT,), None, OBJECTS, lambda scene, args, value: occluders_of(scene, args[0])),
        Function("is_occluded", (OBJECT,), None, BOOL, lambda scene, args, value: is_occluded(scene, args[0])),
    ]


def _edit_function(name: str, input_type: str, value_type: str | None) -> Function:
    """A what-if edit node: its output is every object of the edited scene, which later nodes read."""

    def edit(scene: SceneIndex, args: tuple[Any, ...], value: Any) -> SceneIndex:
        try:
            return edited_scene(scene, name, args[0], value)
        except EditRefused as error:
            raise ExecutionError(f"{name}: {error}") from None

    return Function(name, (input_type,), value_type, OBJECTS, lambda scene, args, value: edit(scene, args, value).all, edit)


def _swap(scene: SceneIndex, args: tuple[Any, ...], value: Any) -> SceneIndex:
    try:
        return swapped_scene(scene, args[0], args[1])
    except EditRefused as error:
        raise ExecutionError(str(error)) from None


def _seen_from(scene: SceneIndex, args: tuple[Any, ...], value: Any) -> bool:
    side = seen_side(scene, args[0], args[1], args[2], value)
    if side is None:
        raise ExecutionError(f"seen_from: object {args[2]} is not clearly {value} or the other way")
    return side


def _seen_from_set(scene: SceneIndex, args: tuple[Any, ...], value: Any) -> int:
    viewer, faced = args
    viewpoint = Viewpoint(scene, viewer, faced)  # the facing direction once, for every target
    found = 0
    for index in scene.indices(scene.all & ~(1 << viewer) & ~(1 << faced)):
        side = viewpoint.side(index, value)
        if side is None:
            raise ExecutionError(f"seen_from_set: object {index} is not clearly {value} or the other way")
        found |= side << index
    return found


def _beyond_clevr_functions() -> list[Function]:
    """What-if edits and perspective-taking (questions/hypothetical.py, questions/perspective.py)."""
    return [
        _edit_function("remove", OBJECTS, None),
        _edit_function("recolor", OBJECT, "color"),
        _edit_function("set_material", OBJECT, "material"),
        Function("swap", (OBJECT, OBJECT), None, OBJECTS, lambda scene, args, value: _swap(scene, args, value).all, _swap),
        Function("seen_from", (OBJECT, OBJECT, OBJECT), RELATION, BOOL, _seen_from),
        Function("seen_from_set", (OBJECT, OBJECT), RELATION, OBJECTS, _seen_from_set),
    ]


@cache
def function_registry() -> Mapping[str, Function]:
    """Every release-form function by name (built on first use, not at import)."""
    functions = _general_functions() + _beyond_clevr_functions()
    for attribute in ATTRIBUTES:
        functions.extend(_attribute_functions(attribute))
    return {function.name: function for function in functions}


def answer_types() -> tuple[str, ...]:
    """Types a program may end with: the answer of a question."""
    return (BOOL, INTEGER, *ATTRIBUTES)


@cache
def allowed_values(value_type: str) -> tuple[str, ...]:
    """The values a value input of ``value_type`` may take: an attribute's names or the relation names."""
    vocabulary = load_vocabulary()
    if value_type == RELATION:
        return tuple(vocabulary.relations)
    return vocabulary.names(value_type)


def format_answer(value: Any) -> str:
    """The answer string of the contract: ``yes``/``no``, digits, or a vocabulary value name."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, str)):
        return str(value)
    raise ExecutionError(f"a program must end in a yes/no, a number or an attribute value, not {value!r}")
