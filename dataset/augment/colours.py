"""Colour maps and recoloured scene graphs: which colours change, and the scene graph with them changed."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from assets.vocabulary import Vocabulary, load_vocabulary
from ruclevr import streams
from ruclevr.cli import UsageError

#: A scene graph or question record as JSON gives it.
Scene = Mapping[str, Any]
#: Random permutations drawn for one scene before giving up on changing any of its colours.
MAX_PERMUTATION_DRAWS = 100
#: Per-object keys only a render can tell; recomputed from the new mask.
RENDER_ONLY_OBJECT_KEYS = ("visible_pixels", "bbox_2d", "occlusion")


def parse_color_map(text: str, vocabulary: Vocabulary | None = None) -> dict[str, str]:
    """``"blue=red,cyan=purple"`` → ``{"blue": "red", "cyan": "purple"}``, every name checked."""
    vocabulary = vocabulary or load_vocabulary()
    colours = vocabulary.names("color")
    mapping: dict[str, str] = {}
    for entry in (part.strip() for part in text.split(",")):
        source, sep, target = (piece.strip() for piece in entry.partition("="))
        if not sep or not source or not target:
            raise UsageError(f"--map entry {entry!r} must look like COLOUR=COLOUR, e.g. blue=red")
        for name in (source, target):
            if name not in colours:
                raise UsageError(f"--map: unknown colour {name!r}; allowed: {', '.join(colours)}")
        if source in mapping:
            raise UsageError(f"--map: colour {source!r} is mapped twice")
        if source == target:
            raise UsageError(f"--map: {entry!r} maps a colour to itself")
        mapping[source] = target
    return mapping


def random_color_map(
    seed: int, image_index: int, scene_colours: Iterable[str], vocabulary: Vocabulary | None = None
) -> dict[str, str]:
    """A permutation of the vocabulary's colours that changes at least one colour of the scene.

    Drawn from the ``augment.recolour`` stream (:mod:`ruclevr.streams`); only the colours it moves are returned.
    An empty map means no permutation moved any of the scene's colours (a scene of no objects).
    """
    colours = (vocabulary or load_vocabulary()).names("color")
    present = set(scene_colours)
    rng = streams.generator("augment.recolour", seed, image_index=image_index)
    for _ in range(MAX_PERMUTATION_DRAWS):
        order = rng.permutation(len(colours))
        mapping = {colours[i]: colours[int(j)] for i, j in enumerate(order) if i != j}
        if present & mapping.keys():
            return mapping
    return {}


@dataclass(frozen=True)
class ColorSwap:
    """Which colours change: ``fixed`` for every scene, or (``fixed`` None) a random permutation per scene."""

    fixed: Mapping[str, str] | None
    seed: int = 0
    seed_record: int | str | None = None  # what records say the seed is: a secret seed's commitment (--seed-file)

    @property
    def recorded_seed(self) -> int | str:
        return self.seed if self.seed_record is None else self.seed_record

    def map_for(self, scene: Scene) -> dict[str, str]:
        if self.fixed is not None:
            return dict(self.fixed)
        return random_color_map(self.seed, int(scene["image_index"]), (obj["color"] for obj in scene["objects"]))

    def describe(self) -> dict[str, Any]:
        if self.fixed is not None:
            return {"mode": "map", "map": dict(self.fixed)}
        return {"mode": "random", "seed": self.recorded_seed}


def recoloured_objects(scene: Scene, color_map: Mapping[str, str]) -> list[int]:
    """Indices of the objects whose colour the map changes."""
    return [k for k, obj in enumerate(scene["objects"]) if obj["color"] in color_map]


def recolour_scene(scene: Scene, color_map: Mapping[str, str], image_filename: str) -> dict[str, Any]:
    """The scene graph with the mapped colours, under a new file name, and where it came from.

    Geometry, camera, lights, relations and render settings are kept as they are; what only a
    render can tell (visible pixels, 2D boxes) is removed until the re-render recomputes it.
    """
    recoloured = copy.deepcopy(dict(scene))
    for obj in recoloured["objects"]:
        obj["color"] = color_map.get(obj["color"], obj["color"])
        for key in RENDER_ONLY_OBJECT_KEYS:
            obj.pop(key, None)
    recoloured["image_filename"] = image_filename
    recoloured["augmentation"] = {
        "kind": "color_swap",
        "source_image_filename": scene["image_filename"],
        "source_image_index": scene["image_index"],
        "color_map": dict(color_map),
        "recoloured_objects": recoloured_objects(scene, color_map),
    }
    return recoloured
