"""The renderer's looks as plain data (no bpy): the sky, floor, metal and light cards each look draws with.

A look is everything about a picture that the scene graph does not record: the world, the floor,
the materials' finish and any fixtures that are not objects of the scene. The scene graph (objects,
camera, lights) is the same under every look; a render record's ``look`` says which one drew its
pixels, and :mod:`render.engines.blender` builds a session from :func:`look_parameters`.

* Look 2: a smooth sky brighter overhead (220) than at the horizon (100), the 150 floor, metal
  roughness from the vocabulary (0.25). Metal was legible on spheres only: a flat or vertical
  metal face had nothing with structure to mirror (issue 23).
* Look 3: the same floor and sky as the camera and diffuse light see them (the far floor stays lit),
  but darker in reflections: glossy rays see the sky at 0.45 of its colour and the floor as a
  checkerboard of half-unit squares at 0.9 and 0.5 of its colour, so a vertical metal face (which
  mirrors the floor just in front of it, the camera looking 26 degrees down) shows a mottled
  reflection and a top face a dark sky, where rubber (roughness 0.75) blurs the squares away; and
  light cards: emitting rectangles seen by glossy rays only (not by the camera, not by diffuse
  rays, casting no shadow), so they change metal and barely touch rubber. One card hangs where
  the top faces of cubes and cylinders mirror (up and beyond the scene as the camera sees it),
  a ring of narrow upright cards stands round the scene for curved and bevelled faces. Metal is a
  little smoother (0.2) so the cards show as shapes, not a glow.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LightCard:
    """An emitting rectangle centred at ``location`` facing ``target``; ``width`` x ``height`` scene units."""

    name: str
    location: tuple[float, float, float]
    target: tuple[float, float, float]
    width: float
    height: float
    strength: float  # emission strength (Blender units; 1 = the emitted colour's own radiance)


@dataclass(frozen=True)
class LookParameters:
    number: int
    sky_horizon_srgb: tuple[int, int, int]
    sky_zenith_srgb: tuple[int, int, int]
    ground_srgb: tuple[int, int, int]
    ground_roughness: float
    metal_roughness: float | None  # None: the vocabulary's
    # What glossy rays see of the floor and of the sky, as a fraction of what the camera and diffuse rays see.
    ground_in_reflections: float = 1.0
    sky_in_reflections: float = 1.0
    # A checkerboard of ``reflection_tile``-unit squares that only reflections see: every other square
    # of the floor at ``tile_in_reflections`` (0: no squares).
    reflection_tile: float = 0.0
    tile_in_reflections: float = 0.0
    cards: tuple[LightCard, ...] = ()


def _ring(count: int, radius: float, height: float, first_degrees: float) -> tuple[LightCard, ...]:
    import math

    cards = []
    for k in range(count):
        angle = math.radians(first_degrees + 360.0 * k / count)
        location = (radius * math.cos(angle), radius * math.sin(angle), height)
        cards.append(LightCard(f"ring_{k}", location, (0.0, 0.0, height), 1.2, 4.0, 3.0))
    return tuple(cards)


LOOKS = {
    2: LookParameters(2, (100, 100, 100), (220, 220, 220), (150, 150, 150), 0.9, None),
    3: LookParameters(
        3, (100, 100, 100), (220, 220, 220), (150, 150, 150), 0.9, 0.2, 0.4, 0.45, 0.5, 0.9,
        # The camera looks at the scene from azimuth -43 degrees, 26 degrees down: a top face mirrors
        # the sky 26 degrees up on the far side, at azimuth 137 degrees.
        (LightCard("top", (-8.0, 7.5, 5.4), (0.0, 0.0, 0.0), 9.0, 3.0, 4.0), *_ring(7, 9.0, 1.5, 10.0)),
    ),
}
DRAWABLE_LOOKS = tuple(sorted(LOOKS))


def look_parameters(look: int) -> LookParameters:
    if look not in LOOKS:
        raise ValueError(f"look {look} cannot be drawn: this renderer draws looks {', '.join(map(str, DRAWABLE_LOOKS))}")
    return LOOKS[look]
