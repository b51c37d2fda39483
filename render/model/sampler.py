"""Scene sampling in pure Python (never imports bpy): objects, camera jitter and light jitter.

Every random choice comes from the ``render.scene`` stream of :mod:`ruclevr.streams`. The generator is
drawn from in a fixed order (camera, lights, object count, then objects), so a scene is a
function of (seed, index, options) alone. :func:`candidate_scenes` keeps drawing from the same
generator, which is how the renderer re-samples a scene whose objects turn out to be hidden:
the k-th candidate is as reproducible as the first.

Placement follows CLEVR, with its loops bounded: each object gets ``max_object_attempts``
tries, a scene whose objects cannot all be placed is restarted, and after
``max_scene_attempts`` restarts :class:`SceneSamplingError` says which constraint failed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from assets.geometry import shape_footprint, shape_mesh
from assets.vocabulary import Vocabulary, load_vocabulary
from render.model.camera import Camera
from render.model.conditions import Condition
from ruclevr import streams

# Base poses roughly those of CLEVR's base scene; positions are jittered per scene.
CAMERA_BASE_LOCATION = (7.358891, -6.925791, 4.958309)
CAMERA_TARGET = (0.0, 0.0, 0.0)


@dataclass(frozen=True)
class LightSpec:
    """A light's base pose and strength, before jitter."""

    name: str
    location: tuple[float, float, float]
    energy: float  # watts
    size: float  # diameter of the spherical light, in scene units


# Large soft spherical lights: small hot highlights on metal are what 8 denoised samples get most
# wrong (measured: 2 -> 5 units gained ~2 dB inside the objects against a 2048-sample reference).
# Spheres light every direction: a one-sided area light leaves the floor behind its own plane
# unlit, which showed as a hard line across the upper left of the frame.
BASE_LIGHTS = (
    LightSpec("key", (6.4467, -2.9052, 4.2584), 1000.0, 5.0),
    LightSpec("fill", (-4.6711, -4.2680, 3.0169), 375.0, 5.0),
    LightSpec("back", (-1.1684, 2.6468, 5.8163), 500.0, 5.0),
)


@dataclass(frozen=True)
class SceneOptions:
    """What a scene may look like. Defaults follow CLEVR; all distances in scene units."""

    min_objects: int = 3
    max_objects: int = 10
    min_gap: float = 0.25  # smallest distance between two objects' ground footprints
    margin: float = 0.4  # smallest centre offset along both camera left/right and front/behind
    area: float = 3.0  # centres lie in [-area, area]^2
    camera_jitter: float = 0.5  # each coordinate of the camera position moves up to this much
    light_jitter: float = 1.0  # each coordinate of each light position moves up to this much
    focal_length_mm: float = 35.0
    sensor_width_mm: float = 32.0
    width: int = 480
    height: int = 320
    frame_margin_px: float = 2.0  # objects' projected bounding boxes stay this far inside the frame
    max_object_attempts: int = 100
    max_scene_attempts: int = 50
    split: str = "new"
    filename_prefix: str = "ruclevr"
    condition: Condition | None = None  # which colours each shape may take (CoGenT); None: any

    def __post_init__(self) -> None:
        problems = []
        if self.min_objects < 1:
            problems.append(f"min_objects must be at least 1, got {self.min_objects}")
        if self.max_objects < self.min_objects:
            problems.append(f"max_objects ({self.max_objects}) is below min_objects ({self.min_objects})")
        if self.max_objects > 254:
            problems.append(f"max_objects must be at most 254 (8-bit mask ids), got {self.max_objects}")
        if self.width < 1 or self.height < 1:
            problems.append(f"image size must be positive, got {self.width}x{self.height}")
        if min(self.min_gap, self.margin, self.camera_jitter, self.light_jitter) < 0:
            problems.append("min_gap, margin and jitters must not be negative")
        if self.max_object_attempts < 1 or self.max_scene_attempts < 1:
            problems.append("attempt budgets must be at least 1")
        if problems:
            raise ValueError("; ".join(problems))


@dataclass(frozen=True)
class Light:
    name: str
    location: tuple[float, float, float]
    target: tuple[float, float, float]
    energy: float
    size: float

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "type": "POINT",
            "location": [float(v) for v in self.location],
            "look_at": [float(v) for v in self.target],
            "energy": self.energy,
            "size": self.size,
        }


@dataclass(frozen=True)
class PlacedObject:
    """One object: vocabulary attributes and its pose. ``location`` is the centre (on the ground + half height)."""

    shape: str
    size: str
    material: str
    color: str
    scale: float
    location: tuple[float, float, float]
    rotation: float  # yaw in degrees, about +Z, exactly what Blender applies
    footprint: np.ndarray = field(repr=False, compare=False)  # (K, 2) ground outline, world units


@dataclass(frozen=True)
class SampledScene:
    seed: int
    index: int
    attempt: int  # which candidate of (seed, index) this is, 0 for the first
    camera: Camera
    lights: tuple[Light, ...]
    objects: tuple[PlacedObject, ...]


class SceneSamplingError(RuntimeError):
    """The options cannot be met within the attempt budget; the message says which constraint failed."""


def candidate_scenes(
    seed: int, index: int, options: SceneOptions | None = None, vocabulary: Vocabulary | None = None
) -> Iterator[SampledScene]:
    """Successive candidate scenes for (seed, index), all drawn from one ``render.scene`` stream."""
    options = options or SceneOptions()
    vocabulary = vocabulary or load_vocabulary()
    rng = streams.generator("render.scene", seed, index=index)
    attempt = 0
    while True:
        yield sample_scene(rng, seed, index, attempt, options, vocabulary)
        attempt += 1


def first_scene(seed: int, index: int, options: SceneOptions | None = None) -> SampledScene:
    return next(candidate_scenes(seed, index, options))


def sample_scene(
    rng: np.random.Generator, seed: int, index: int, attempt: int, options: SceneOptions, vocabulary: Vocabulary
) -> SampledScene:
    """One scene: camera, lights, then a fixed number of objects placed with restarts."""
    camera = sample_camera(rng, options)
    lights = sample_lights(rng, options)
    count = int(rng.integers(options.min_objects, options.max_objects + 1))
    left, behind = _ground_axes(camera)
    failures: dict[str, int] = {}
    for _ in range(options.max_scene_attempts):
        objects = _place_objects(rng, count, camera, left, behind, options, vocabulary, failures)
        if objects is not None:
            return SampledScene(seed, index, attempt, camera, lights, tuple(objects))
    worst = max(failures, key=failures.__getitem__) if failures else "unknown"
    raise SceneSamplingError(
        f"could not place {count} objects (seed {seed}, index {index}) in {options.max_scene_attempts} scene "
        f"attempts of {options.max_object_attempts} tries per object; most rejections by {worst} "
        f"(min gap {options.min_gap}, margin {options.margin}, area ±{options.area}); "
        "ask for fewer objects or relax the constraints"
    )


def sample_camera(rng: np.random.Generator, options: SceneOptions) -> Camera:
    jitter = rng.uniform(-options.camera_jitter, options.camera_jitter, size=3)
    return Camera(
        location=tuple(float(v) for v in np.asarray(CAMERA_BASE_LOCATION) + jitter),  # type: ignore[arg-type]  # x, y, z
        target=CAMERA_TARGET,
        focal_length_mm=options.focal_length_mm,
        sensor_width_mm=options.sensor_width_mm,
        width=options.width,
        height=options.height,
    )


def sample_lights(rng: np.random.Generator, options: SceneOptions) -> tuple[Light, ...]:
    lights = []
    for spec in BASE_LIGHTS:
        jitter = rng.uniform(-options.light_jitter, options.light_jitter, size=3)
        location = tuple(float(v) for v in np.asarray(spec.location) + jitter)
        lights.append(Light(spec.name, location, CAMERA_TARGET, spec.energy, spec.size))  # type: ignore[arg-type]  # x, y, z
    return tuple(lights)


def footprint_gap(a: np.ndarray, b: np.ndarray) -> float:
    """Distance between two convex polygons (counter-clockwise (K, 2) arrays); 0 if they overlap."""
    if _polygons_overlap(a, b):
        return 0.0
    return min(_points_to_edges(a, b), _points_to_edges(b, a))


def object_footprint(shape: str, scale: float, rotation_deg: float, xy, vocabulary: Vocabulary) -> np.ndarray:
    """The ground outline of a placed object: its mesh's hull, rotated, scaled and moved."""
    return _posed_outline(shape_footprint(shape, vocabulary) * scale, rotation_deg, np.asarray(xy, float))


def _posed_outline(scaled_outline: np.ndarray, rotation_deg: float, centre: np.ndarray) -> np.ndarray:
    theta = np.radians(rotation_deg)
    cos, sin = np.cos(theta), np.sin(theta)
    rotation = np.array([[cos, -sin], [sin, cos]])
    return scaled_outline @ rotation.T + centre


# How far a cheap bound must clear a threshold before it decides in place of the exact test:
# far above the rounding error of either (about 1e-15 at these coordinates), so both agree.
_SURE = 1e-9


@dataclass(frozen=True)
class _ShapeGeometry:
    outline: np.ndarray  # ground outline in size units, unrotated (shape_footprint)
    half_height: float  # in size units
    inradius: float  # distance from the centre to the outline's nearest edge, in size units
    outradius: float  # distance from the centre to the outline's farthest corner, in size units


class _Catalogue:
    """What placing an object looks up in the vocabulary: value names, size scales, shape geometry."""

    def __init__(self, vocabulary: Vocabulary) -> None:
        self.shapes, self.sizes = vocabulary.names("shape"), vocabulary.names("size")
        self.materials, self.colors = vocabulary.names("material"), vocabulary.names("color")
        self.scales = {size: float(vocabulary.value("size", size).extra["scale"]) for size in self.sizes}
        self.geometry = {
            shape: _ShapeGeometry(
                outline := shape_footprint(shape, vocabulary), shape_mesh(shape, vocabulary).half_height, _inradius(outline),
                float(np.hypot(outline[:, 0], outline[:, 1]).max()),
            )
            for shape in self.shapes
        }


_CATALOGUES: dict[int, tuple[Vocabulary, _Catalogue]] = {}  # by id; the entry keeps its vocabulary alive


def _catalogue(vocabulary: Vocabulary) -> _Catalogue:
    entry = _CATALOGUES.get(id(vocabulary))
    if entry is None or entry[0] is not vocabulary:
        entry = _CATALOGUES[id(vocabulary)] = (vocabulary, _Catalogue(vocabulary))
    return entry[1]


def _inradius(outline: np.ndarray) -> float:
    """Distance from the origin to the nearest edge line of a counter-clockwise convex outline; 0 if outside."""
    edges = np.roll(outline, -1, axis=0) - outline
    cross = edges[:, 0] * -outline[:, 1] - edges[:, 1] * -outline[:, 0]  # > 0: origin left of the edge
    return max(0.0, float((cross / np.hypot(edges[:, 0], edges[:, 1])).min()))


class _Placement:
    """The objects placed so far in one scene attempt, with what the checks reuse for each new pose:
    their centres as one array, their outlines' bounding radii and their inscribed radii."""

    def __init__(self, camera: Camera, left: np.ndarray, behind: np.ndarray, options: SceneOptions) -> None:
        self.camera, self.left, self.behind, self.options = camera, left, behind, options
        self.objects: list[PlacedObject] = []
        self.radii: list[float] = []
        self.inradii: list[float] = []
        self.centres = np.empty((0, 2))
        self.frame = _FrameTest(camera, options.frame_margin_px)

    def add(self, placed: PlacedObject, radius: float, inradius: float) -> None:
        self.objects.append(placed)
        self.radii.append(radius)
        self.inradii.append(inradius)
        self.centres = np.array([other.location[:2] for other in self.objects])

    def margin_rejected(self, centres: np.ndarray) -> np.ndarray:
        """Which centres lie within the margin of a placed object along camera left/right or front/behind.

        The offsets are projected as a stack of one (placed, 2) @ (2,) product per centre: the
        very product (and so the very rounding) of checking each centre alone.
        """
        if not self.objects:
            return np.zeros(len(centres), bool)
        offsets = centres[:, None, :] - self.centres[None]
        margin = self.options.margin
        return (np.abs(offsets @ self.left) < margin).any(axis=1) | (np.abs(offsets @ self.behind) < margin).any(axis=1)

    def footprint_rejection(
        self, outline: np.ndarray, radius: float, inradius: float, outradius: float, centre: np.ndarray, height: float
    ) -> str | None:
        """Why a pose clear of the margin is not allowed ('gap', 'frame'), or None when it is.

        Objects whose bounding circles stay the gap apart pass; objects whose inscribed circles
        come surely closer than the gap fail; only the rest get the exact outline test.
        """
        if self.objects:
            min_gap = self.options.min_gap
            offsets = centre - self.centres
            distances = np.hypot(offsets[:, 0], offsets[:, 1])
            clearance = distances - radius - np.array(self.radii)
            for k in np.flatnonzero(~(clearance >= min_gap)).tolist():
                if min_gap > _SURE and distances[k] - inradius - self.inradii[k] < min_gap - _SURE:
                    return "gap"  # inscribed circles (inside the outlines) already too close
                other = self.objects[k].footprint
                if _separation(outline, other, offsets[k] / distances[k]) >= min_gap + _SURE:
                    continue  # apart by the gap along the line between the centres already
                if footprint_gap(outline, other) < min_gap:
                    return "gap"
        if not self.frame.surely_inside(centre, outradius, 2 * height) and not _inside_frame(outline, height, self.camera, self.options):
            return "frame"
        return None


class _FrameTest:
    """Whether a box around an object surely projects inside the frame, in plain floats (a few
    microseconds); only an object near the frame's edge then needs its outline projected."""

    def __init__(self, camera: Camera, margin_px: float) -> None:
        matrix = camera.matrix_world
        self.rotation, self.origin = matrix[:3, :3].tolist(), matrix[:3, 3].tolist()
        self.focal, self.width, self.height = camera.focal_length_px, camera.width, camera.height
        self.low, self.high_x, self.high_y = margin_px + _SURE, camera.width - margin_px - _SURE, camera.height - margin_px - _SURE

    def surely_inside(self, centre: np.ndarray, radius: float, top: float) -> bool:
        """The box [x ± r] x [y ± r] x [0, top] is in front of the camera and projects inside the frame's
        margin (with room to spare), so every point inside it does (a projected box is the hull of its corners)."""
        (r00, r01, r02), (r10, r11, r12), (r20, r21, r22) = self.rotation
        x, y = float(centre[0]), float(centre[1])
        reach = radius * (1 + _SURE) + _SURE
        for corner_x in (x - reach, x + reach):
            for corner_y in (y - reach, y + reach):
                for corner_z in (0.0, top):
                    dx, dy, dz = corner_x - self.origin[0], corner_y - self.origin[1], corner_z - self.origin[2]
                    depth = -(dx * r02 + dy * r12 + dz * r22)
                    if depth <= _SURE:
                        return False
                    u = self.width / 2.0 + self.focal * (dx * r00 + dy * r10 + dz * r20) / depth
                    v = self.height / 2.0 - self.focal * (dx * r01 + dy * r11 + dz * r21) / depth
                    if not (self.low < u < self.high_x and self.low < v < self.high_y):
                        return False
        return True


def _place_objects(rng, count, camera, left, behind, options, vocabulary, failures) -> list[PlacedObject] | None:
    placement = _Placement(camera, left, behind, options)
    catalogue = _catalogue(vocabulary)
    for _ in range(count):
        if not _place_one(rng, placement, catalogue, failures):
            return None
    return placement.objects


def _place_one(rng, placement: _Placement, catalogue: _Catalogue, failures: dict[str, int]) -> bool:
    """Attributes are drawn once per object; position and yaw are retried within the budget.

    All the attempts' draws are taken at once and screened for the margin together (what rejects
    most poses); the survivors are checked one by one, in order, and the generator is then left
    exactly where drawing attempt by attempt would have left it, so the scene does not change.
    """
    options = placement.options
    shape = _choice(rng, catalogue.shapes)
    size = _choice(rng, catalogue.sizes)
    material = _choice(rng, catalogue.materials)
    color = _choice(rng, options.condition.colors_for(shape, catalogue.colors) if options.condition else catalogue.colors)
    scale, geometry = catalogue.scales[size], catalogue.geometry[shape]
    height, inradius, outradius = geometry.half_height * scale, geometry.inradius * scale, geometry.outradius * scale
    start = rng.bit_generator.state
    scaled_outline = geometry.outline * scale
    examined = 0
    for first, centres, rotations in _attempt_batches(rng, options):
        for attempt in np.flatnonzero(~placement.margin_rejected(centres)).tolist():
            _count(failures, "margin", first + attempt - examined)
            centre = centres[attempt]
            rotation = float(rotations[attempt])
            outline = _posed_outline(scaled_outline, rotation, centre)
            radius = _bounding_radius(outline, centre)
            reason = placement.footprint_rejection(outline, radius, inradius, outradius, centre, height)
            if reason is None:
                rng.bit_generator.state = start
                rng.random(_DRAWS_PER_ATTEMPT * (first + attempt + 1))  # only the attempts made so far
                location = (float(centre[0]), float(centre[1]), height)
                placement.add(PlacedObject(shape, size, material, color, scale, location, rotation, outline), radius, inradius)
                return True
            _count(failures, reason, 1)
            examined = first + attempt + 1
    _count(failures, "margin", options.max_object_attempts - examined)
    return False


_DRAWS_PER_ATTEMPT = 3  # x and y of the centre, then the yaw
_FIRST_BATCH = 8  # attempts drawn and screened first: about 4 in 5 objects are placed within them


def _attempt_batches(rng: np.random.Generator, options: SceneOptions) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """The attempts' centres and yaws in two batches (the first few, then the rest of the budget), each
    with the number of its first attempt: the same numbers as ``rng.uniform(-area, area, size=2)``
    then ``rng.uniform(0, 360)`` per attempt (numpy's uniform is ``low + (high - low) * random()``)."""
    low, high = -options.area, options.area
    first_batch = min(_FIRST_BATCH, options.max_object_attempts)
    for first, count in ((0, first_batch), (first_batch, options.max_object_attempts - first_batch)):
        draws = rng.random(_DRAWS_PER_ATTEMPT * count).reshape(-1, _DRAWS_PER_ATTEMPT)
        yield first, low + (high - low) * draws[:, :2], 0.0 + (360.0 - 0.0) * draws[:, 2]


def _count(failures: dict[str, int], reason: str, times: int) -> None:
    if times > 0:
        failures[reason] = failures.get(reason, 0) + times


def _inside_frame(outline: np.ndarray, height: float, camera: Camera, options: SceneOptions) -> bool:
    """The object's prism (outline from the ground to twice its half height) projects inside the image."""
    k = len(outline)
    corners = np.zeros((2 * k, 3))
    corners[:k, :2] = corners[k:, :2] = outline
    corners[k:, 2] = 2 * height
    x, y, depth = camera.project(corners).T
    m = options.frame_margin_px
    return bool(
        depth.min() > 0 and x.min() >= m and x.max() <= camera.width - m and y.min() >= m and y.max() <= camera.height - m
    )


def _bounding_radius(outline: np.ndarray, centre: np.ndarray) -> float:
    return float(np.sqrt(((outline - centre) ** 2).sum(axis=1)).max())


def _ground_axes(camera: Camera) -> tuple[np.ndarray, np.ndarray]:
    rotation = camera.matrix_world[:3, :3]
    left, behind = rotation @ np.array([-1.0, 0.0, 0.0]), rotation @ np.array([0.0, 0.0, -1.0])
    return left[:2] / np.linalg.norm(left[:2]), behind[:2] / np.linalg.norm(behind[:2])


def _choice(rng: np.random.Generator, names: tuple[str, ...]) -> str:
    return names[int(rng.integers(len(names)))]


def _separation(a: np.ndarray, b: np.ndarray, direction: np.ndarray) -> float:
    """How far apart ``a`` and ``b`` are along the unit ``direction`` (from ``b`` towards ``a``): at most their distance."""
    return float((a @ direction).min() - (b @ direction).max())


def _polygons_overlap(a: np.ndarray, b: np.ndarray) -> bool:
    """Separating-axis test for two convex polygons."""
    for polygon in (a, b):
        edges = np.roll(polygon, -1, axis=0) - polygon
        normals = np.column_stack([edges[:, 1], -edges[:, 0]])
        pa, pb = a @ normals.T, b @ normals.T
        separated = (pa.max(axis=0) < pb.min(axis=0)) | (pb.max(axis=0) < pa.min(axis=0))
        if separated.any():
            return False
    return True


def _points_to_edges(points: np.ndarray, polygon: np.ndarray) -> float:
    """Smallest distance from any of ``points`` to any edge of ``polygon``."""
    start = polygon
    edge = np.roll(polygon, -1, axis=0) - polygon
    rel = points[:, None, :] - start[None, :, :]
    t = np.clip((rel * edge[None]).sum(axis=2) / (edge * edge).sum(axis=1)[None], 0.0, 1.0)
    closest = start[None] + t[..., None] * edge[None]
    return float(np.sqrt(((points[:, None, :] - closest) ** 2).sum(axis=2)).min())
