"""Moving one object of a recorded scene: whether a new place keeps the sampler's rules.

The sampler places objects so that every centre stands the margin apart from every other along the
camera's left/right and front/behind (relations people can read), outlines stay the gap apart, and
each object projects inside the frame. :func:`pose_problem` applies the same tests, with the
sampler's own code, to one object of a scene at another place among the others (pure Python, no bpy).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from assets.vocabulary import Vocabulary, load_vocabulary
from render.model.sampler import (
    SampledScene,
    SceneOptions,
    _bounding_radius,
    _catalogue,
    _ground_axes,
    _Placement,
    _posed_outline,
)


def pose_problem(scene: SampledScene, target: int, centre: Sequence[float], options: SceneOptions | None = None,
                 vocabulary: Vocabulary | None = None) -> str | None:
    """Why object ``target`` of ``scene`` may not stand with its centre at ``centre`` (x, y), its yaw
    kept, among the other objects: ``area``, ``margin``, ``gap`` or ``frame``; None when it may."""
    options = options or SceneOptions()
    catalogue = _catalogue(vocabulary or load_vocabulary())
    left, behind = _ground_axes(scene.camera)
    placement = _Placement(scene.camera, left, behind, options)
    for k, other in enumerate(scene.objects):
        if k != target:
            inradius = catalogue.geometry[other.shape].inradius * other.scale
            placement.add(other, _bounding_radius(other.footprint, np.asarray(other.location[:2], float)), inradius)
    moved = scene.objects[target]
    geometry = catalogue.geometry[moved.shape]
    point = np.asarray(centre[:2], float)
    if np.abs(point).max() > options.area:
        return "area"
    if placement.margin_rejected(point[None])[0]:
        return "margin"
    outline = _posed_outline(geometry.outline * moved.scale, moved.rotation, point)
    return placement.footprint_rejection(outline, _bounding_radius(outline, point), geometry.inradius * moved.scale,
                                         geometry.outradius * moved.scale, point, geometry.half_height * moved.scale)
