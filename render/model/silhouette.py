"""How much of each object the camera would see if nothing stood in front of it (no bpy).

Every shape is convex, so its unoccluded silhouette is the convex hull of its projected mesh
vertices; its area in pixels against the object's ``visible_pixels`` in the mask is the object's
visible fraction, what the legibility floor of :mod:`render.farm.worker` checks (an object half
hidden behind another loses the outline that tells a cube from a cylinder, docs/render.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from assets.geometry import convex_hull_2d, shape_mesh
from assets.vocabulary import Vocabulary, load_vocabulary
from render.model.camera import Camera


def silhouette_outline(obj: Mapping, camera: Camera, vocabulary: Vocabulary | None = None) -> np.ndarray:
    """The object's unoccluded outline in the image: the convex hull (K, 2) of its projected mesh, in pixels."""
    vertices = shape_mesh(obj["shape"], vocabulary or load_vocabulary()).vertices * float(obj["scale"])
    yaw = math.radians(float(obj["rotation"]))
    rotation = np.array([[math.cos(yaw), -math.sin(yaw), 0.0], [math.sin(yaw), math.cos(yaw), 0.0], [0.0, 0.0, 1.0]])
    world = vertices @ rotation.T + np.asarray(obj["3d_coords"], dtype=np.float64)
    return convex_hull_2d(camera.project(world)[:, :2])


def silhouette_area(obj: Mapping, camera: Camera, vocabulary: Vocabulary | None = None) -> float:
    """The object's projected area in pixels with nothing in front of it (a scene-graph object record)."""
    hull = silhouette_outline(obj, camera, vocabulary)
    if len(hull) < 3:
        return 0.0
    x, y = hull[:, 0], hull[:, 1]
    return float(abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))) / 2.0)


def visible_fractions(graph: Mapping, visible_pixels: list[int]) -> list[float]:
    """Per object of a scene graph, its visible pixels over its unoccluded silhouette (at most 1)."""
    camera = Camera.from_dict(graph["camera"])
    vocabulary = load_vocabulary()
    fractions = []
    for obj, pixels in zip(graph["objects"], visible_pixels, strict=True):
        area = silhouette_area(obj, camera, vocabulary)
        fractions.append(min(1.0, pixels / area) if area > 0 else 0.0)
    return fractions
