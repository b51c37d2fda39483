"""Whether an edited scene's re-render shows its one change: checked in the pixels.

- the change shows where the object was: the mean absolute difference between the two images
  over the changed object's pixels in the source mask is at least :data:`MIN_REGION_CHANGE`;
- a removed object is gone: the edited mask names no id beyond the remaining objects, so its
  region shows the floor or what it hid (and differs, as above);
- a changed (or moved) object is as legible as before: render's legibility reader reads its
  changed attribute as the new value, and every attribute it read right on the source render
  still right; and every object still shows as the render stage requires (its pixels and its
  visible-fraction floor).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dataset.pairs.edits import MATERIAL, RECOLOUR, REMOVE, Edit
from render import hidden_problems, object_visibility, visibility_problems
from render.legibility import READ_ATTRIBUTES, LegibilityReader

#: The least mean absolute difference (0-255, over RGB) between source and re-render over the
#: changed object's source pixels (docs/dataset.md, "Minimal pairs", gives the measured spread).
MIN_REGION_CHANGE = 10.0


@dataclass
class PixelCheck:
    """What the pixels say about one edited scene: its problems (empty: accepted) and measures."""

    problems: list[str] = field(default_factory=list)
    region_pixels: int = 0
    region_change: float = 0.0
    reading: dict[str, str] | None = None

    def record(self) -> dict[str, Any]:
        return {"region_pixels": self.region_pixels, "region_change": round(self.region_change, 2),
                "reading": self.reading, "problems": list(self.problems)}


def region_change(source_image: np.ndarray, image: np.ndarray, region: np.ndarray) -> float:
    """Mean absolute difference per channel between the two RGB images over ``region``."""
    if not region.any():
        return 0.0
    difference = np.abs(source_image[..., :3].astype(np.int16) - image[..., :3].astype(np.int16))
    return float(difference[region].mean())


def shown_problems(scene: Mapping[str, Any], mask: np.ndarray) -> list[str]:
    """Every object shows as the render stage required of the source (its recorded floors)."""
    visibility = object_visibility(mask, len(scene["objects"]))
    record = scene["render"]
    return visibility_problems(list(scene["objects"]), visibility, int(record.get("min_pixels", 1))) or hidden_problems(
        dict(scene), visibility, float(record.get("min_visible_fraction", 0.0)))


def check_pixels(edit: Edit, source: tuple[np.ndarray, np.ndarray], edited_scene: Mapping[str, Any],
                 edited: tuple[np.ndarray, np.ndarray], reader: LegibilityReader) -> PixelCheck:
    """The checks above for the re-render ``edited`` (image, mask) of the source render ``source``."""
    (source_image, source_mask), (image, mask) = source, edited
    region = source_mask == edit.target + 1
    check = PixelCheck(region_pixels=int(region.sum()), region_change=region_change(source_image, image, region))
    if check.region_change < MIN_REGION_CHANGE:
        check.problems.append(f"change: hardly shows, mean difference {check.region_change:.1f} < {MIN_REGION_CHANGE} "
                              f"over the object's {check.region_pixels} pixels")
    check.problems += [f"shown: {problem}" for problem in shown_problems(edited_scene, mask)]
    if edit.kind == REMOVE:
        check.problems += removal_problems(mask, len(edited_scene["objects"]))
        return check
    check.reading = reader.read(image, mask, edit.target + 1)[edit.target].values  # mask ids 1 .. target + 1
    was = reader.read(source_image, source_mask, edit.target + 1)[edit.target].values
    check.problems += legibility_problems(edited_scene["objects"][edit.target], check.reading, was, changed_attribute(edit))
    return check


def changed_attribute(edit: Edit) -> str | None:
    return {RECOLOUR: "color", MATERIAL: "material"}.get(edit.kind)


def legibility_problems(obj: Mapping[str, Any], now: Mapping[str, str] | None, was: Mapping[str, str] | None,
                        changed: str | None) -> list[str]:
    """The changed object reads as legibly as before: its changed attribute as the new value, and every
    attribute the reader read right in the source still right."""
    if now is None:
        return ["legibility: too few pixels to read the changed object"]
    problems = []
    for attribute in READ_ATTRIBUTES:
        must = attribute == changed or (was is not None and was[attribute] == obj[attribute])
        if must and now[attribute] != obj[attribute]:
            problems.append(f"legibility: its {attribute} reads as {now[attribute]}, not {obj[attribute]}")
    return problems


def removal_problems(mask: np.ndarray, count: int) -> list[str]:
    """A removed object left no mask id behind: the edited mask names none above its ``count`` objects
    (its region then shows the floor or the objects it hid)."""
    if int(mask.max(initial=0)) > count:
        return [f"removal: the edited mask has an id above its {count} objects: the removed object is still drawn"]
    return []
