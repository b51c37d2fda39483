"""What-if questions: a program node that edits the scene, and the rules that keep such a question honest.

An edit node (``remove``, ``recolor``, ``set_material``, ``swap``; registered in
:mod:`questions.functions`) takes objects described in the picture and makes a copy of the scene
graph with them taken away, recoloured, made of another material, or two of them in each other's
places (:meth:`SceneIndex.edited`). Every node after the edit
node reads that copy: "If all the red things were removed, how many cubes would be left?" is
``scene → filter red → remove → filter cube → count``, the cubes counted in the edited scene.
Objects keep their indices and places, so a description made before the edit still names the
same object after it. The image is not changed.

A what-if question is asked only where

- the edit changes something: a removed set is not empty (and not the whole scene), a recoloured
  object is not that colour already, a material is not the object's own (the counterfactual
  "if the cube were metal" presupposes it is not);
- the edit matters: what is counted after it differs from the same description counted in the
  picture (:func:`edit_matters`), so the question cannot be answered by ignoring the "if";
- the words do not decide it: what is counted after a removal is not a narrowing of what was
  removed ("remove the red things; how many red cubes are left?" is 0 whatever the picture;
  :func:`removal_decides`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from questions.scene_index import SceneIndex

#: The edit functions, each with the attribute it changes ("" for removal, "place" for two objects
#: changing places: :func:`swapped_scene`).
EDITS = {"remove": "", "recolor": "color", "set_material": "material", "swap": "place"}


def edit_value_params(program: Iterable[Any]) -> frozenset[str]:
    """The parameters a program's edit nodes take as their value (``set_material``'s <M2>): a
    question always gives them a value (:func:`edited_scene` refuses an edit without one)."""
    return frozenset(value for node in program if node.function in EDITS for value in node.value_inputs)


def plainly_said_kinds(program: Iterable[Any]) -> frozenset[str]:
    """The attribute kinds a question of this program says in their plain word only: the material
    where an edit changes it («Если бы резиновый предмет был блестящим, сколько было бы резиновых
    предметов?» reads as a finish put on rubber, the count unchanged: a blind reader, R29), so
    «резиновый/металлический», "rubber/metal", never «матовый/блестящий», "matte/shiny"."""
    return frozenset(EDITS[node.function] for node in program if node.function == "set_material")


class EditRefused(ValueError):
    """An edit that changes nothing (an empty set removed, a colour an object already has)."""


def swapped_scene(scene: SceneIndex, first: int, second: int) -> SceneIndex:
    """``scene`` with objects ``first`` and ``second`` in each other's places (:meth:`SceneIndex.edited`);
    EditRefused for one object twice."""
    if first == second:
        raise EditRefused("swap: an object cannot change places with itself")
    return scene.edited(swapped=(first, second))


def removed_scene(scene: SceneIndex, removed: int) -> SceneIndex:
    """``scene`` without the objects of ``removed``; EditRefused for none or all of the scene."""
    removed &= scene.all
    if not removed:
        raise EditRefused("remove: no object to remove")
    if removed == scene.all:
        raise EditRefused("remove: removing every object leaves nothing to ask about")
    return scene.edited(removed=removed)


def changed_scene(scene: SceneIndex, attribute: str, index: int, value: str) -> SceneIndex:
    """``scene`` with object ``index``'s ``attribute`` set to ``value``; EditRefused when it has it already."""
    if scene.values[attribute][index] == value:
        raise EditRefused(f"the object's {attribute} is {value} already")
    return scene.edited(changes={(attribute, index): value})


def edited_scene(scene: SceneIndex, function: str, argument: int, value: str | None) -> SceneIndex:
    """The scene after edit node ``function`` with its input (a set for ``remove``, an object otherwise)."""
    attribute = EDITS[function]
    if not attribute:
        return removed_scene(scene, argument)
    if attribute == "place":
        raise EditRefused(f"{function}: takes two objects (swapped_scene)")
    if value is None:
        raise EditRefused(f"{function}: needs a value")
    return changed_scene(scene, attribute, argument, value)


def described(scene: SceneIndex, pairs: Iterable[tuple[str, str]]) -> int:
    """The objects of ``scene`` having every (attribute, value) of ``pairs``."""
    mask = scene.all
    for attribute, value in pairs:
        mask &= scene.mask(attribute, value)
    return mask


def edit_matters(original: SceneIndex, pairs: Iterable[tuple[str, str]], after: int) -> bool:
    """Whether the objects of a description after the edit (``after``) are not as many as the objects
    of the same description (its ``pairs``) in the picture: the edit changes the count."""
    return described(original, pairs).bit_count() != after.bit_count()


def removal_decides(removed: tuple[object, ...], pairs: frozenset[tuple[str, str]]) -> bool:
    """Whether a description (its ``pairs``) read after removing the objects of description ``removed``
    (the search's canonical form: ``("set", base, pairs)``) holds nothing by the words alone: the
    removed set was the scene filtered by some of the same values."""
    return removed[0] == "set" and removed[1] == ("scene",) and isinstance(removed[2], frozenset) and removed[2] <= pairs
