"""``python -m render verify --legibility``: does every image show each object as its scene records it?

Each scene is read by the legibility reader of its recorded look (render/legibility.py: image and
mask only). A problem is printed for an object the reader cannot read with confidence, and for one
whose seen attribute disagrees with the record, which is how verify catches a recolour applied to
image and scene graph alike (their hashes then agree, the pixels and the words do not).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

from render.farm.outputs import OutputLayout
from render.legibility import LegibilityReader, legibility_problems
from ruclevr.io import read_json


def legibility_check(layout: OutputLayout, indices: range) -> list[str]:
    """One line per object of the folder's scenes that its pixels do not show as recorded."""
    readers: dict[int, LegibilityReader | str] = {}
    problems = []
    for index in indices:
        scene = _readable_scene(layout, index)
        if scene is None:
            continue  # verify's own checks say what is missing or broken
        look = int((scene.get("render") or {}).get("look", 1))
        if look not in readers:
            try:
                readers[look] = LegibilityReader.for_look(look)
            except ValueError as error:
                readers[look] = str(error)
        reader = readers[look]
        if isinstance(reader, str):
            problems.append(f"index {index}: {reader}")
            continue
        image, mask = _arrays(layout.image_path(index)), _arrays(layout.mask_path(index))
        if image is None or mask is None or image.ndim != 3 or mask.shape != image.shape[:2]:
            continue
        problems += [f"index {index}: legibility: {line}" for line in legibility_problems(scene, image, mask, reader)]
    return problems


def _readable_scene(layout: OutputLayout, index: int) -> dict | None:
    try:
        scene = read_json(layout.scene_path(index))
    except (OSError, ValueError):
        return None
    return scene if isinstance(scene, dict) and isinstance(scene.get("objects"), list) else None


def _arrays(path: Path) -> np.ndarray | None:
    try:
        with Image.open(path) as image:
            return np.asarray(image.convert("RGB") if image.mode == "RGB" else image)
    except (OSError, SyntaxError, ValueError):
        return None
