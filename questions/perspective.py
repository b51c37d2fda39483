"""Perspective-taking: where an object is for someone standing at one object and facing another.

"If you stood where the green cylinder is, facing the red cube, would the blue sphere be on your
left?" The answer is computed on the floor (each object's ``3d_coords`` x, y): the viewer stands at
A and faces B; the target C is at the signed angle from the facing direction (positive: turning
left, counter-clockwise seen from above, as the floor's x, y, z axes are right-handed with z up).

People judge that angle from the picture, where perspective bends it, so a side is given only
when it is clear both on the floor and among the ground points as the image shows them
(:mod:`questions.image_geometry`), by :data:`SIDE_MARGIN` degrees off the facing line (and its
extension behind the viewer); both legs must be long enough to see a direction in:
:data:`MIN_LEG` scene units on the floor, :data:`MIN_LEG_MARGINS` relation margins in the image.
Anything else is *unclear* and not asked.
"""

from __future__ import annotations

import math

from questions.scene_index import SceneIndex

#: Smallest angle (degrees) between the facing line and the target, either side, for left/right;
#: front/behind need the target this far from the sideways line (90 degrees).
SIDE_MARGIN = 20.0
#: Shortest floor distance (scene units) from the viewer to the object faced and to the target.
MIN_LEG = 1.0
#: Shortest distance in the image, in relation margins (12 px at 480 wide each), of either leg.
MIN_LEG_MARGINS = 3.0

#: The side of the facing line (or of the sideways line) each relation word means.
SIDES = ("left", "right", "front", "behind")


def signed_angle(viewer: tuple[float, float], faced: tuple[float, float], target: tuple[float, float]) -> float:
    """Degrees from the direction viewer → faced to the direction viewer → target, in (-180, 180]:
    positive to the left (counter-clockwise), negative to the right, with x right and y up."""
    return _angle_from((faced[0] - viewer[0], faced[1] - viewer[1]), viewer, target)


def _angle_from(facing: tuple[float, float], viewer: tuple[float, float], target: tuple[float, float]) -> float:
    """:func:`signed_angle` with the facing direction (viewer → faced) given."""
    fx, fy = facing
    tx, ty = target[0] - viewer[0], target[1] - viewer[1]
    return math.degrees(math.atan2(fx * ty - fy * tx, fx * tx + fy * ty))


def side_of(angle: float, relation: str, margin: float = SIDE_MARGIN) -> bool | None:
    """Whether a target at ``angle`` is clearly on the ``relation`` side (True), clearly on the other
    (False), or too near the dividing line to say (None)."""
    if relation in ("left", "right"):
        off_line = min(abs(angle), 180.0 - abs(angle))
        if off_line < margin:
            return None
        return (angle > 0) == (relation == "left")
    if relation in ("front", "behind"):
        if abs(abs(angle) - 90.0) < margin:
            return None
        return (abs(angle) < 90.0) == (relation == "front")
    raise ValueError(f"unknown relation {relation!r}; allowed: {', '.join(SIDES)}")


def _length(first: tuple[float, float], second: tuple[float, float]) -> float:
    return math.hypot(second[0] - first[0], second[1] - first[1])


def _image_up(point: tuple[float, float]) -> tuple[float, float]:
    # Image y grows downwards; turned up, the floor seen from above keeps its left and right.
    return point[0], -point[1]


class Viewpoint:
    """Someone standing at object ``viewer`` facing object ``faced``: the facing direction on the
    floor and in the image, and whether that leg is long enough, worked out once for every target."""

    def __init__(self, scene: SceneIndex, viewer: int, faced: int) -> None:
        self.scene, self.viewer, self.faced = scene, viewer, faced
        floor = scene.ground
        #: False where no target can be judged: the same object twice, no coordinates, a short leg on the floor.
        self.usable = viewer != faced and floor is not None and _length(floor[viewer], floor[faced]) >= MIN_LEG
        if not self.usable or floor is None:
            return
        self.floor_facing = (floor[faced][0] - floor[viewer][0], floor[faced][1] - floor[viewer][1])
        if scene.image is None:
            return
        self.seen_viewer = _image_up(scene.image.points[viewer])
        seen_faced = _image_up(scene.image.points[faced])
        self.seen_facing = (seen_faced[0] - self.seen_viewer[0], seen_faced[1] - self.seen_viewer[1])
        self.min_seen_leg = MIN_LEG_MARGINS * scene.image.margin
        self.seen_leg_ok = _length(self.seen_viewer, seen_faced) >= self.min_seen_leg

    def side(self, target: int, relation: str) -> bool | None:
        """:func:`seen_side` of ``target`` for this viewpoint."""
        if not self.usable or target in (self.viewer, self.faced):
            return None
        floor = self.scene.ground
        assert floor is not None  # usable
        if _length(floor[self.viewer], floor[target]) < MIN_LEG:
            return None
        answer = side_of(_angle_from(self.floor_facing, floor[self.viewer], floor[target]), relation)
        image = self.scene.image
        if answer is None or image is None:
            return answer
        seen_target = _image_up(image.points[target])
        if not self.seen_leg_ok or _length(self.seen_viewer, seen_target) < self.min_seen_leg:
            return None
        in_image = side_of(_angle_from(self.seen_facing, self.seen_viewer, seen_target), relation)
        return answer if in_image == answer else None


def seen_side(scene: SceneIndex, viewer: int, faced: int, target: int, relation: str) -> bool | None:
    """Whether object ``target`` is on the ``relation`` side of someone standing at ``viewer`` facing
    ``faced``: True or False when the floor and the image agree by the margins, None otherwise
    (unclear, too short a leg, the same object twice, or a scene without coordinates). Asking of
    many targets, make the :class:`Viewpoint` once and ask its :meth:`~Viewpoint.side`."""
    return Viewpoint(scene, viewer, faced).side(target, relation)
