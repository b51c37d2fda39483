"""CLEVR's spatial vocabulary (directions, relationships, pixel coordinates) from the camera used.

Semantics are CLEVR v1.0's: ``directions[name]`` is a unit vector; ``relationships[name][i]``
lists the objects j that are ``name`` of object i, i.e. whose offset from i has a component
greater than ``eps`` along ``directions[name]``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from render.model.camera import Camera

DEFAULT_RELATION_EPS = 0.2  # CLEVR's threshold; the sampler's margin keeps every pair well above it


def directions(camera: Camera) -> dict[str, list[float]]:
    """Camera left / behind projected onto the ground plane (and their opposites), plus up/down."""
    rotation = camera.matrix_world[:3, :3]
    behind = _on_ground(rotation @ np.array([0.0, 0.0, -1.0]))  # where the camera looks
    left = _on_ground(rotation @ np.array([-1.0, 0.0, 0.0]))
    up = np.array([0.0, 0.0, 1.0])
    vectors = {"behind": behind, "front": -behind, "left": left, "right": -left, "above": up, "below": -up}
    return {name: [float(c) for c in vector] for name, vector in vectors.items()}


def relationships(
    coords: Sequence[Sequence[float]], direction_vectors: dict[str, list[float]], eps: float = DEFAULT_RELATION_EPS
) -> dict[str, list[list[int]]]:
    """For each relation, for each object i, the sorted indices j standing in that relation to i."""
    points = np.asarray(coords, float).reshape(-1, 3)
    result: dict[str, list[list[int]]] = {}
    for name in ("behind", "front", "left", "right"):
        along = points @ np.asarray(direction_vectors[name], float)
        offsets = along[None, :] - along[:, None]  # offsets[i, j]: how far j is from i along `name`
        result[name] = [
            [j for j in range(len(points)) if j != i and offsets[i, j] > eps] for i in range(len(points))
        ]
    return result


def pixel_coords(camera: Camera, coords: Sequence[Sequence[float]]) -> list[list[float]]:
    """CLEVR's ``pixel_coords``: [x, y] rounded to whole pixels (top-left origin) and the depth."""
    projected = camera.project(coords)
    return [[int(round(x)), int(round(y)), float(depth)] for x, y, depth in projected]


def _on_ground(vector: np.ndarray) -> np.ndarray:
    flat = np.array([vector[0], vector[1], 0.0])
    return flat / np.linalg.norm(flat)


def projected_box(camera: Camera, footprint: np.ndarray, top: float) -> list[float]:
    """[x_min, y_min, x_max, y_max] in pixels of the prism ``footprint`` x [0, top]: the box every
    pixel of the object lies in, whatever hides part of it (a hull's projection bounds the mesh's)."""
    k = len(footprint)
    corners = np.zeros((2 * k, 3))
    corners[:k, :2] = corners[k:, :2] = footprint
    corners[k:, 2] = top
    x, y, _ = camera.project(corners).T
    return [float(x.min()), float(y.min()), float(x.max()), float(y.max())]
