"""Relations as a person reads them in the image: where each object stands in the picture, and margins.

A scene record (the renderer's) holds its camera, so each object's ground point (its ``3d_coords``
at floor level) can be projected to the pixel where the object stands in the image. The engine
reads the spatial relations there, the way a person looking at the picture does:

- ``left``/``right``: the image x of the two objects' ground points; ``behind``/``front``: their
  image y (further up is further behind: with a level camera, image height on the floor is
  distance, whatever the objects' sizes, which an object's centre is not).
- A pair is in a relation only when the record's ``relationships`` (CLEVR's 3-D definition) say
  so **and** the image shows it by more than :data:`RELATION_MARGIN` of the image width. Every
  other pair is *unclear* on that axis: almost on one vertical (or horizontal) line, or the
  perspective contradicting the 3-D record. A question is asked only if its answer is the same
  whichever way a reader takes its unclear pairs (:mod:`questions.unclear`).
- ``between`` is read on the segment joining the two objects' ground points in the image: an
  object is between them when the angle the two make at it is at least :data:`BETWEEN_ANGLE`
  degrees, clearly not when under :data:`NOT_BETWEEN_ANGLE`, unclear in between.

The margins' measurements are in docs/questions.md ("Relations read in the image") and
benchmarks/relations_bench.py. A scene without a camera (CLEVR's own scene files, scenes written
by hand) has no image positions: its relations are the record's, as in CLEVR.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

#: Smallest offset, as a fraction of the image width, along an image axis for a relation to hold
#: (12 px at 480 wide: about half the apparent width of the smallest, furthest object).
RELATION_MARGIN = 0.025
#: ``between``: the smallest angle (degrees) the two ends make at an object that is between them.
BETWEEN_ANGLE = 150.0
#: ``between``: under this angle an object is clearly not between; from it up to BETWEEN_ANGLE, unclear.
NOT_BETWEEN_ANGLE = 120.0

#: Each spatial relation's image axis (0: x, 1: y) and the sign of "further in the relation" along it.
AXES = {"left": (0, -1.0), "right": (0, 1.0), "behind": (1, -1.0), "front": (1, 1.0)}
OPPOSITE = {"left": "right", "right": "left", "behind": "front", "front": "behind"}


class ImageError(ValueError):
    """A scene whose camera record cannot place its objects in the image."""


class ImagePlacement:
    """Each object's ground point in the image (pixels, top-left origin) and the scene's margin in pixels."""

    __slots__ = ("points", "margin")

    def __init__(self, points: list[tuple[float, float]], width: float) -> None:
        self.points = points
        self.margin = RELATION_MARGIN * width

    def position(self, relation: str, index: int) -> float:
        """How far object ``index`` lies in the direction of ``relation`` (larger: further left, ...)."""
        axis, sign = AXES[relation]
        return sign * self.points[index][axis]

    def distance(self, first: int, second: int) -> float:
        (x1, y1), (x2, y2) = self.points[first], self.points[second]
        return math.hypot(x2 - x1, y2 - y1)


def image_placement(scene: Mapping[str, Any]) -> ImagePlacement | None:
    """The objects' ground points projected with the scene's recorded camera; None without a camera."""
    camera = scene.get("camera")
    if camera is None:
        return None
    try:
        matrix = [[float(v) for v in row] for row in camera["matrix_world"]]
        intrinsics = [[float(v) for v in row] for row in camera["intrinsics"]]
        width = float(camera["width"])
        grounds = [(float(obj["3d_coords"][0]), float(obj["3d_coords"][1])) for obj in scene["objects"]]
    except (KeyError, TypeError, ValueError, IndexError) as error:
        raise ImageError(f"the camera or 3d_coords cannot be read ({type(error).__name__}: {error})") from None
    if not all(math.isfinite(v) for v in [width, *(v for row in matrix + intrinsics for v in row), *(v for point in grounds for v in point)]):
        raise ImageError("the camera or 3d_coords hold a number that is not finite")
    points = [project_ground_point(matrix, intrinsics, x, y) for x, y in grounds]
    return ImagePlacement(points, width)


def project_ground_point(matrix: Sequence[Sequence[float]], intrinsics: Sequence[Sequence[float]], x: float, y: float) -> tuple[float, float]:
    """Pixel (x, y) of the floor point (x, y, 0) for a Blender camera (looks down its -Z; +Y up)."""
    dx, dy, dz = x - matrix[0][3], y - matrix[1][3], -matrix[2][3]
    local = [dx * matrix[0][k] + dy * matrix[1][k] + dz * matrix[2][k] for k in range(3)]
    depth = -local[2]
    if depth <= 0:
        raise ImageError(f"the floor point ({x}, {y}) is behind the camera")
    return (intrinsics[0][2] + intrinsics[0][0] * local[0] / depth, intrinsics[1][2] - intrinsics[1][1] * local[1] / depth)


def clear_relations(
    recorded: dict[str, list[int]], placement: ImagePlacement, count: int
) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
    """Per relation and object, the masks of objects clearly in that relation (in the record and in
    the image by the margin) and of objects unclear on that axis (clearly in neither direction)."""
    clear: dict[str, list[int]] = dict(recorded)
    margin = placement.margin
    for relation, (axis, sign) in AXES.items():
        lists = recorded.get(relation)
        if lists is None:
            continue
        along = [sign * point[axis] for point in placement.points]
        clear[relation] = [_beyond(lists[i], along, along[i] + margin) for i in range(count)]
    unclear: dict[str, list[int]] = {}
    everyone = (1 << count) - 1
    for relation, opposite in OPPOSITE.items():
        if relation in clear and opposite in clear:
            unclear[relation] = [everyone & ~(1 << i) & ~clear[relation][i] & ~clear[opposite][i] for i in range(count)]
    return clear, unclear


def _beyond(members: int, along: list[float], threshold: float) -> int:
    """The objects of ``members`` whose position ``along`` the axis exceeds ``threshold``."""
    mask = 0
    while members:
        lowest = members & -members
        if along[lowest.bit_length() - 1] > threshold:
            mask |= lowest
        members ^= lowest
    return mask


def between_masks(points: Sequence[tuple[float, float]], first: int, second: int) -> tuple[int, int]:
    """(objects between ``first`` and ``second``, objects unclear) by the angle the two make at each
    other object: at least BETWEEN_ANGLE between, under NOT_BETWEEN_ANGLE not, unclear in between."""
    inside = unclear = 0
    (ax, ay), (bx, by) = points[first], points[second]
    for k, (x, y) in enumerate(points):
        if k in (first, second):
            continue
        angle = _angle(ax - x, ay - y, bx - x, by - y)
        if angle >= BETWEEN_ANGLE:
            inside |= 1 << k
        elif angle >= NOT_BETWEEN_ANGLE:
            unclear |= 1 << k
    return inside, unclear


def _angle(ux: float, uy: float, vx: float, vy: float) -> float:
    norms = math.hypot(ux, uy) * math.hypot(vx, vy)
    if norms == 0:
        return 0.0
    return math.degrees(math.acos(max(-1.0, min(1.0, (ux * vx + uy * vy) / norms))))
