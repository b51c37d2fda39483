"""A scene graph turned into bit masks, so that filtering and relating are single integer operations.

Built once per scene from the CLEVR keys (``objects`` and ``relationships``) of the scene-graph
contract, and, where the scene records its camera, from where each object stands in the image:
the spatial relations are then those the image shows by a margin (:mod:`questions.image_geometry`).
"""

from __future__ import annotations

from collections.abc import Mapping
from copy import copy as shallow_copy
from typing import Any

from assets.vocabulary import ATTRIBUTES
from questions.image_geometry import ImageError, ImagePlacement, clear_relations, image_placement
from questions.occlusion import SceneOcclusion, scene_occlusion


class SceneError(ValueError):
    """A scene graph that lacks what programs need (an attribute, a relation, a valid index)."""


class SceneIndex:
    """Per attribute value the mask of objects having it; per relation and object the mask of related objects."""

    __slots__ = ("count", "all", "values", "ground", "image", "occlusion", "_masks", "_related", "_unclear")

    def __init__(
        self, values: dict[str, list[str]], related: dict[str, list[int]], count: int,
        ground: list[tuple[float, float]] | None = None, image: ImagePlacement | None = None,
        occlusion: SceneOcclusion | None = None,
    ) -> None:
        self.count = count
        self.ground = ground  # each object's (x, y) on the ground plane, when the scene gives 3d_coords
        self.image = image  # where each object stands in the image, when the scene records its camera
        self.occlusion = occlusion  # who hides whom in the rendered image, when the scene records it
        self.all = (1 << count) - 1
        self.values = values
        self._related, self._unclear = clear_relations(related, image, count) if image is not None else (related, {})
        self._masks: dict[str, dict[str, int]] = {}
        for attribute, column in values.items():
            masks: dict[str, int] = {}
            for index, value in enumerate(column):
                masks[value] = masks.get(value, 0) | (1 << index)
            self._masks[attribute] = masks

    @classmethod
    def from_scene(cls, scene: Mapping[str, Any]) -> SceneIndex:
        objects = scene.get("objects")
        if not isinstance(objects, list):
            raise SceneError("scene has no 'objects' list")
        values: dict[str, list[str]] = {attribute: [] for attribute in ATTRIBUTES}
        for position, obj in enumerate(objects):
            for attribute in ATTRIBUTES:
                value = obj.get(attribute) if isinstance(obj, Mapping) else None
                if not isinstance(value, str):
                    raise SceneError(f"object {position} has no {attribute}")
                values[attribute].append(value)
        relationships = scene.get("relationships")
        if not isinstance(relationships, Mapping):
            raise SceneError("scene has no 'relationships'")
        related: dict[str, list[int]] = {}
        for relation, lists in relationships.items():
            if not isinstance(lists, list) or len(lists) != len(objects):
                raise SceneError(f"relationships[{relation!r}] must list one entry per object")
            related[relation] = [_mask_of(members, len(objects), relation, i) for i, members in enumerate(lists)]
        try:
            image = image_placement(scene)
        except ImageError as error:
            raise SceneError(str(error)) from None
        return cls(values, related, len(objects), _ground_positions(objects), image, scene_occlusion(objects))

    def mask(self, attribute: str, value: str) -> int:
        """The objects whose ``attribute`` is ``value`` (0 when none is)."""
        return self._masks[attribute].get(value, 0)

    def related(self, relation: str, index: int) -> int:
        """The objects standing in ``relation`` to object ``index``: CLEVR's ``relationships[relation][index]``,
        less those the image does not show by the margin when the scene records its camera."""
        try:
            return self._related[relation][index]
        except KeyError:
            raise SceneError(f"scene has no relationships[{relation!r}]") from None

    def unclear(self, relation: str, index: int) -> int:
        """The objects clearly neither ``relation`` of object ``index`` nor the opposite (0 without a camera)."""
        lists = self._unclear.get(relation)
        return 0 if lists is None else lists[index]

    def plan_points(self) -> list[tuple[float, float]] | None:
        """Each object's ground point as seen: in the image with a camera, else on the floor plan."""
        return self.image.points if self.image is not None else self.ground

    def relations(self) -> tuple[str, ...]:
        return tuple(self._related)

    def edited(self, removed: int = 0, changes: Mapping[tuple[str, int], str] | None = None,
               swapped: tuple[int, int] | None = None) -> SceneIndex:
        """A copy of this scene with the objects of ``removed`` taken away and each (attribute, object)
        of ``changes`` given its new value (questions.hypothetical): objects keep their indices and
        places, the removed ones are in no set any more. ``swapped``: two objects that change places
        (:func:`_swapped_places`)."""
        keep = self.all & ~removed
        values = {attribute: list(column) for attribute, column in self.values.items()}
        for (attribute, index), value in (changes or {}).items():
            values[attribute][index] = value
        copy = SceneIndex(values, {}, self.count, self.ground, None)
        copy.image = self.image
        copy.all = keep
        copy._masks = {attribute: {value: mask & keep for value, mask in masks.items()} for attribute, masks in copy._masks.items()}
        copy._related = {relation: [mask & keep for mask in lists] for relation, lists in self._related.items()}
        copy._unclear = {relation: [mask & keep for mask in lists] for relation, lists in self._unclear.items()}
        if swapped is not None:
            _swapped_places(copy, *swapped)
        return copy

    def indices(self, mask: int) -> list[int]:
        """The object indices in ``mask``, ascending."""
        return [i for i in range(self.count) if mask >> i & 1]


def _swapped_places(scene: SceneIndex, first: int, second: int) -> None:
    """Objects ``first`` and ``second`` of ``scene`` in each other's places: their floor and image
    points exchanged, and every relation as the renderer and the margin would find it from the new
    places. A relation of two objects depends on their two places alone (CLEVR's relationships
    compare the offset along a direction on the floor, render/model/relations.py; the margin
    compares image points, questions/image_geometry.py), so each object's related set is the one
    of the object whose place it took, with the two exchanged in it. Who hides whom is not known
    for places no render showed: the copy has no occlusion."""

    def exchanged(mask: int) -> int:
        if (mask >> first ^ mask >> second) & 1:
            mask ^= (1 << first) | (1 << second)
        return mask

    def moved(items: list[Any]) -> list[Any]:
        items = list(items)
        items[first], items[second] = items[second], items[first]
        return items

    scene._related = {relation: [exchanged(mask) for mask in moved(lists)] for relation, lists in scene._related.items()}
    scene._unclear = {relation: [exchanged(mask) for mask in moved(lists)] for relation, lists in scene._unclear.items()}
    scene.ground = moved(scene.ground) if scene.ground is not None else None
    if scene.image is not None:
        image = shallow_copy(scene.image)
        image.points = moved(image.points)
        scene.image = image
    scene.occlusion = None


def _ground_positions(objects: list[Any]) -> list[tuple[float, float]] | None:
    """Each object's (x, y) from its ``3d_coords``, or None when an object lacks them."""
    positions = []
    for obj in objects:
        coords = obj.get("3d_coords")
        if not isinstance(coords, list) or len(coords) < 2 or not all(isinstance(v, (int, float)) for v in coords[:2]):
            return None
        positions.append((float(coords[0]), float(coords[1])))
    return positions


def _mask_of(members: Any, count: int, relation: str, index: int) -> int:
    if not isinstance(members, list):
        raise SceneError(f"relationships[{relation!r}][{index}] must be a list of object indices")
    mask = 0
    for j in members:
        if not isinstance(j, int) or not 0 <= j < count or j == index:
            raise SceneError(f"relationships[{relation!r}][{index}] has an invalid object index {j!r}")
        mask |= 1 << j
    return mask
