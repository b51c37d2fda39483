"""How well each object shows in a render, judged from its instance mask alone (no bpy)."""

from __future__ import annotations

import numpy as np

#: The share of its unoccluded silhouette an object must show in renders of look 3 and later
#: (render/model/silhouette.py); chosen from benchmarks/legibility_bench.py (docs/render.md, "Legible scenes only").
DEFAULT_MIN_VISIBLE_FRACTION = 0.6


def object_visibility(mask: np.ndarray, count: int) -> list[dict]:
    """Per object (mask id k + 1): visible pixels and 2D box [x_min, y_min, x_max, y_max].

    Box edges are pixel-edge coordinates with exclusive maxima, the frame that pixel_coords uses,
    so an object's projected centre inside its visible pixels lies inside its box. An object
    with no visible pixels gets ``None`` as its box.
    """
    counts = np.bincount(mask.ravel(), minlength=count + 1)
    result = []
    for mask_id in range(1, count + 1):
        rows, cols = np.nonzero(mask == mask_id)
        box = None
        if len(rows):
            box = [int(cols.min()), int(rows.min()), int(cols.max()) + 1, int(rows.max()) + 1]
        result.append({"mask_id": mask_id, "visible_pixels": int(counts[mask_id]), "bbox_2d": box})
    return result


def visibility_problems(objects: list[dict], visibility: list[dict], min_pixels: int) -> list[str]:
    """Why a rendered scene is rejected: objects under ``min_pixels``, or whose centre is hidden outside its box."""
    problems = []
    for k, (obj, seen) in enumerate(zip(objects, visibility, strict=True)):
        if seen["visible_pixels"] < min_pixels:
            problems.append(f"object {k} shows {seen['visible_pixels']} < {min_pixels} pixels")
            continue
        if seen["bbox_2d"] is None:  # hidden entirely, which --min-pixels 0 allows
            continue
        x, y = obj["pixel_coords"][:2]
        x0, y0, x1, y1 = seen["bbox_2d"]
        if not (x0 <= x <= x1 and y0 <= y <= y1):
            problems.append(f"object {k}'s centre {x, y} lies outside its visible box {seen['bbox_2d']}")
    return problems


def with_visibility(objects: list[dict], visibility: list[dict]) -> None:
    """Record on each object what only a render can tell: its visible pixels and 2D box."""
    for obj, seen in zip(objects, visibility, strict=True):
        obj["visible_pixels"] = seen["visible_pixels"]
        obj["bbox_2d"] = seen["bbox_2d"]


def hidden_problems(graph: dict, visibility: list[dict], min_fraction: float) -> list[str]:
    """Why a scene is rejected by the visible-fraction floor: objects showing less than ``min_fraction`` of themselves."""
    from render.model.silhouette import visible_fractions

    if min_fraction <= 0:
        return []
    fractions = visible_fractions(graph, [seen["visible_pixels"] for seen in visibility])
    return [f"object {k} shows {fraction:.0%} of itself < {min_fraction:.0%}" for k, fraction in enumerate(fractions) if fraction < min_fraction]
