"""Which objects hide which, read from the instance mask and each object's unoccluded silhouette (no bpy).

Every shape is convex, so an object's unoccluded silhouette is the convex hull of its projected
mesh (:func:`render.model.silhouette.silhouette_outline`); rasterised at pixel centres it is the
set of pixels the object would cover with nothing in front of it. Where the instance mask shows
another object inside that set, that object stands in front: the mask is the renderer's depth
test, so no depth is recomputed here. Two convex objects that do not intersect never hide each
other both ways (a plane separates them, and the one on the camera's side is in front along every
ray), so the counts below say who covers whom.

Recorded per object as ``occlusion`` in the scene graph (docs/render.md):

- ``silhouette_pixels``: the pixels of its unoccluded silhouette inside the frame;
- ``covered_by``: ``[[j, pixels], ...]``, the silhouette's pixels that show object ``j`` (j's index);
- ``near``: ``[[j, pixels], ...]``, object ``j``'s pixels within :data:`NEAR_PIXELS` of the silhouette
  (``covered_by`` included): what tells "touching in the image" from "apart";
- ``covered_upper``: ``[[j, pixels], ...]``, the part of ``covered_by`` in the silhouette's upper half
  (:func:`upper_half`): what tells a cover that cuts the outline on a side or at the top from one
  that only follows its lower edge (scenes recorded before it lack it: read as unclear).

The question engine judges from these, with margins, whether an object is partly hidden and by
what (questions/occlusion.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from assets.vocabulary import load_vocabulary
from render.model.camera import Camera
from render.model.silhouette import silhouette_outline

#: How far (pixels, a square neighbourhood) around its silhouette another object's pixels count as near it.
NEAR_PIXELS = 2


def polygon_pixels(outline: np.ndarray, height: int, width: int) -> np.ndarray:
    """A (height, width) boolean array: the pixels whose centre lies inside a convex counter-clockwise outline."""
    inside = np.zeros((height, width), dtype=bool)
    if len(outline) < 3:
        return inside
    x0 = max(0, int(np.floor(outline[:, 0].min())))
    x1 = min(width, int(np.ceil(outline[:, 0].max())) + 1)
    y0 = max(0, int(np.floor(outline[:, 1].min())))
    y1 = min(height, int(np.ceil(outline[:, 1].max())) + 1)
    if x0 >= x1 or y0 >= y1:
        return inside
    ys, xs = np.mgrid[y0:y1, x0:x1]
    px, py = xs + 0.5, ys + 0.5
    box = np.ones(px.shape, dtype=bool)
    for (ax, ay), (bx, by) in zip(outline, np.roll(outline, -1, axis=0), strict=True):
        box &= (bx - ax) * (py - ay) - (by - ay) * (px - ax) >= 0.0
    inside[y0:y1, x0:x1] = box
    return inside


def grown(region: np.ndarray, pixels: int) -> np.ndarray:
    """``region`` grown by ``pixels`` in every direction (a square neighbourhood)."""
    out = region.copy()
    for _ in range(pixels):
        step = out.copy()
        step[1:, :] |= out[:-1, :]
        step[:-1, :] |= out[1:, :]
        step[:, 1:] |= out[:, :-1]
        step[:, :-1] |= out[:, 1:]
        step[1:, 1:] |= out[:-1, :-1]
        step[:-1, :-1] |= out[1:, 1:]
        step[1:, :-1] |= out[:-1, 1:]
        step[:-1, 1:] |= out[1:, :-1]
        out = step
    return out


def upper_half(region: np.ndarray) -> np.ndarray:
    """The pixels of ``region`` whose centre lies above the middle of its bounding box's rows (row 0 at the top)."""
    rows = np.flatnonzero(region.any(axis=1))
    if not len(rows):
        return region.copy()
    above = 2 * np.arange(region.shape[0]) < rows[0] + rows[-1]
    return region & above[:, None]


def silhouettes(graph: Mapping[str, Any], height: int, width: int) -> list[np.ndarray]:
    """Each object's unoccluded silhouette as a boolean (height, width) array."""
    camera = Camera.from_dict(graph["camera"])
    vocabulary = load_vocabulary()
    return [polygon_pixels(silhouette_outline(obj, camera, vocabulary), height, width) for obj in graph["objects"]]


def occlusion_records(mask: np.ndarray, regions: list[np.ndarray]) -> list[dict[str, Any]]:
    """Per object (mask id k + 1, silhouette ``regions[k]``): its ``occlusion`` record (module docstring)."""
    count = len(regions)
    records = []
    for k, region in enumerate(regions):
        covered = np.bincount(mask[region].ravel(), minlength=count + 1)
        near = np.bincount(mask[grown(region, NEAR_PIXELS)].ravel(), minlength=count + 1)
        upper = np.bincount(mask[upper_half(region)].ravel(), minlength=count + 1)
        records.append({
            "silhouette_pixels": int(region.sum()),
            "covered_by": [[j, int(covered[j + 1])] for j in range(count) if j != k and covered[j + 1]],
            "near": [[j, int(near[j + 1])] for j in range(count) if j != k and near[j + 1]],
            "covered_upper": [[j, int(upper[j + 1])] for j in range(count) if j != k and upper[j + 1]],
        })
    return records


def with_occlusion(graph: dict, mask: np.ndarray) -> None:
    """Record on each object of ``graph`` who covers how much of it in ``mask`` (its rendered instance mask)."""
    height, width = mask.shape
    for obj, record in zip(graph["objects"], occlusion_records(mask, silhouettes(graph, height, width)), strict=True):
        obj["occlusion"] = record
