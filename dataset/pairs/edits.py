"""One change to a scene graph: an object removed, recoloured, its material swapped, or moved.

An edited graph keeps the source's camera, lights and render settings (Cycles' noise seed too),
so a re-render differs from the source image only where the change shows (the object, its
shadow and reflections). What only a render can tell (visible pixels, 2D boxes, occlusion records:
:data:`dataset.augment.RENDER_ONLY_OBJECT_KEYS`, augment's list) is dropped until the re-render
recomputes it; a removal or a move recomputes the relations from the objects'
positions, as the renderer computes them (a removal renumbers the mask ids). An object moves to a
point of a grid over the floor where the sampler's own rules allow it among the others
(:func:`render.model.moves.pose_problem`: the relation margin, the gap, the frame).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from assets.vocabulary import Vocabulary, load_vocabulary
from dataset.augment import RENDER_ONLY_OBJECT_KEYS
from render import (
    DEFAULT_RELATION_EPS,
    Camera,
    SceneOptions,
    pixel_coords,
    pose_problem,
    relationships,
    scene_from_graph,
)

REMOVE = "remove"
RECOLOUR = "recolour"
MATERIAL = "material"
MOVE = "move"
#: Every kind of change, in the order the seeded choice draws from.
KINDS = (REMOVE, RECOLOUR, MATERIAL, MOVE)
#: The places an object may move to: a grid over the floor (the sampler's area) at this step ...
MOVE_STEP = 0.75
#: ... at least this far from where it stood (scene units).
MIN_MOVE = 1.0


@dataclass(frozen=True)
class Edit:
    """Object ``target`` of the source scene removed, given ``value`` as its colour or material, or moved to ``place`` (x, y)."""

    kind: str
    target: int
    value: str | None = None
    place: tuple[float, float] | None = None

    def describe(self, scene: Mapping[str, Any]) -> dict[str, Any]:
        """The change as records keep it: kind, the object (index and description) and the values."""
        obj = scene["objects"][self.target]
        record: dict[str, Any] = {
            "kind": self.kind,
            "object": self.target,
            "object_described": f"{obj['size']} {obj['color']} {obj['material']} {obj['shape']}",
        }
        if self.kind == MOVE:
            record.update({"from": [float(v) for v in obj["3d_coords"][:2]], "to": list(self.place or ())})
        elif self.kind != REMOVE:
            attribute = "color" if self.kind == RECOLOUR else "material"
            record.update({"attribute": attribute, "from": obj[attribute], "to": self.value})
        return record


def candidate_edits(scene: Mapping[str, Any], kind: str, vocabulary: Vocabulary | None = None) -> Iterator[Edit]:
    """Every edit of ``kind`` the scene allows: a removal leaves at least one object; a new value
    differs from the object's."""
    vocabulary = vocabulary or load_vocabulary()
    objects = scene["objects"]
    if kind == MOVE:
        yield from candidate_moves(scene, vocabulary)
        return
    for target, obj in enumerate(objects):
        if kind == REMOVE:
            if len(objects) > 1:
                yield Edit(REMOVE, target)
            continue
        attribute = "color" if kind == RECOLOUR else "material"
        for value in vocabulary.names(attribute):
            if value != obj[attribute]:
                yield Edit(kind, target, value)


def candidate_moves(scene: Mapping[str, Any], vocabulary: Vocabulary) -> Iterator[Edit]:
    """Every object to every grid point at least MIN_MOVE away where the sampler would allow it."""
    sampled = scene_from_graph(dict(scene))
    steps = int(SceneOptions().area / MOVE_STEP)
    grid = [MOVE_STEP * k for k in range(-steps, steps + 1)]
    for target, obj in enumerate(scene["objects"]):
        x0, y0 = obj["3d_coords"][:2]
        for x in grid:
            for y in grid:
                if math.hypot(x - x0, y - y0) >= MIN_MOVE and pose_problem(sampled, target, (x, y), vocabulary=vocabulary) is None:
                    yield Edit(MOVE, target, place=(x, y))


def edited_scene(scene: Mapping[str, Any], edit: Edit) -> dict[str, Any]:
    """The scene graph with ``edit`` made (file name and index still the source's)."""
    edited = copy.deepcopy(dict(scene))
    objects = edited["objects"]
    for obj in objects:
        for key in RENDER_ONLY_OBJECT_KEYS:
            obj.pop(key, None)
    if edit.kind in (REMOVE, MOVE):
        if edit.kind == REMOVE:
            del objects[edit.target]
            for k, obj in enumerate(objects):
                obj["mask_id"] = k + 1
        else:
            moved = objects[edit.target]
            moved["3d_coords"] = [*(edit.place or ()), moved["3d_coords"][2]]
            moved["pixel_coords"] = pixel_coords(Camera.from_dict(edited["camera"]), [moved["3d_coords"]])[0]
        edited["relationships"] = relationships([obj["3d_coords"] for obj in objects], edited["directions"], DEFAULT_RELATION_EPS)
    else:
        objects[edit.target]["color" if edit.kind == RECOLOUR else "material"] = edit.value
    edited.pop("augmentation", None)
    return edited


def renamed(scene: dict[str, Any], image_index: int, image_filename: str, source: Mapping[str, Any], edit: Edit) -> dict[str, Any]:
    """``scene`` under its own index and file name, recording its source and the change."""
    scene["image_index"] = image_index
    scene["image_filename"] = image_filename
    scene["augmentation"] = {
        "kind": "minimal_pair",
        "source_image_filename": source["image_filename"],
        "source_image_index": source["image_index"],
        "change": edit.describe(source),
    }
    return scene


def edited_object_index(edit: Edit) -> int | None:
    """Where the changed object is in the edited scene (None: it was removed)."""
    return None if edit.kind == REMOVE else edit.target
