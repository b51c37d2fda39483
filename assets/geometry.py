"""Procedural geometry for every shape, as plain NumPy arrays (no Blender).

The same vertices are handed to Blender by ``render/blender.py`` and used by the pure-Python
scene sampler for each shape's real ground footprint, so the gap the sampler checks is the
gap between the objects that are rendered.

Every mesh is built in *unit space*: centred on the origin, spanning z in [-1, 1]. The
vocabulary's ``geometry.half_extent`` shrinks a shape relative to its size (cubes are
1/sqrt(2) of the size, as in CLEVR, so that a cube's diagonal matches a sphere's diameter),
and the size's ``scale`` multiplies everything. Shading normals are analytic per vertex, so
the flat faces of the cube stay flat and the bevels, the cylinder's side and the sphere are
smooth without any auto-smooth heuristics.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

from assets.vocabulary import Vocabulary, load_vocabulary


@dataclass(frozen=True)
class Mesh:
    """A polygon mesh: ``faces`` index ``vertices``; ``normals`` are per-vertex shading normals."""

    vertices: np.ndarray  # (V, 3) float64
    faces: tuple[tuple[int, ...], ...]
    normals: np.ndarray  # (V, 3) float64, unit length

    def scaled(self, factor: float) -> Mesh:
        return Mesh(self.vertices * factor, self.faces, self.normals)

    @property
    def half_height(self) -> float:
        """Distance from the centre to the lowest point: where the centre sits above the ground."""
        return float(-self.vertices[:, 2].min())


def bevelled_cube(bevel: float, segments: int = 4) -> Mesh:
    """Cube of half side 1 whose edges and corners are rounded with radius ``bevel``.

    Built as a subdivided cube whose points are pushed onto the rounded box: a point p moves to
    q + bevel * (p - q) / |p - q| with q = p clamped to the inner box; the normal is the same
    unit vector, which is exactly the face normal on the flat parts.
    """
    if not 0.0 < bevel < 1.0:
        raise ValueError(f"bevel must be in (0, 1), got {bevel}")
    inner = 1.0 - bevel
    bevel_steps = np.linspace(inner, 1.0, segments + 1)
    axis = np.concatenate([-bevel_steps[::-1], bevel_steps])  # -1 .. -inner, inner .. 1
    points, faces = _cube_grid(axis)
    clamped = np.clip(points, -inner, inner)
    offset = points - clamped
    length = np.linalg.norm(offset, axis=1, keepdims=True)
    normals = offset / length
    vertices = clamped + bevel * normals
    return _weld(vertices, normals, faces)


def smooth_cylinder(segments: int = 48) -> Mesh:
    """Cylinder of radius 1 and half height 1: smooth side, flat caps (separate rim vertices)."""
    angles = np.linspace(0.0, 2.0 * np.pi, segments, endpoint=False)
    ring = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    vertices, normals, faces = [], [], []

    def add(xyz, normal) -> int:
        vertices.append(xyz)
        normals.append(normal)
        return len(vertices) - 1

    bottom_side = [add((x, y, -1.0), (x, y, 0.0)) for x, y in ring]
    top_side = [add((x, y, 1.0), (x, y, 0.0)) for x, y in ring]
    for k in range(segments):
        nxt = (k + 1) % segments
        faces.append((bottom_side[k], bottom_side[nxt], top_side[nxt], top_side[k]))
    top_cap = [add((x, y, 1.0), (0.0, 0.0, 1.0)) for x, y in ring]
    bottom_cap = [add((x, y, -1.0), (0.0, 0.0, -1.0)) for x, y in ring]
    faces.append(tuple(top_cap))  # type: ignore[arg-type]  # a cap is one polygon of many corners
    faces.append(tuple(reversed(bottom_cap)))  # type: ignore[arg-type]  # a cap is one polygon of many corners
    return Mesh(np.asarray(vertices, float), tuple(faces), np.asarray(normals, float))


def uv_sphere(segments: int = 48, rings: int = 24) -> Mesh:
    """Sphere of radius 1 with a vertex at each pole; the normal is the position."""
    vertices = [(0.0, 0.0, -1.0)]
    for ring in range(1, rings):
        polar = np.pi * ring / rings - np.pi / 2.0
        for k in range(segments):
            azimuth = 2.0 * np.pi * k / segments
            vertices.append((np.cos(polar) * np.cos(azimuth), np.cos(polar) * np.sin(azimuth), np.sin(polar)))
    vertices.append((0.0, 0.0, 1.0))
    south, north = 0, len(vertices) - 1

    def at(ring: int, k: int) -> int:
        return 1 + (ring - 1) * segments + k % segments

    faces: list[tuple[int, ...]] = []
    for k in range(segments):
        faces.append((south, at(1, k + 1), at(1, k)))
        faces.append((north, at(rings - 1, k), at(rings - 1, k + 1)))
    for ring in range(1, rings - 1):
        for k in range(segments):
            faces.append((at(ring, k), at(ring, k + 1), at(ring + 1, k + 1), at(ring + 1, k)))
    points = np.asarray(vertices, float)
    return Mesh(points, tuple(faces), points.copy())


BUILDERS: dict[str, Callable[..., Mesh]] = {"cube": bevelled_cube, "cylinder": smooth_cylinder, "sphere": uv_sphere}


def shape_mesh(shape: str, vocabulary: Vocabulary | None = None) -> Mesh:
    """The mesh of one vocabulary shape in *size units* (multiply by the size's ``scale``)."""
    return _cached_shape_mesh(_geometry_key(shape, vocabulary))


def shape_footprint(shape: str, vocabulary: Vocabulary | None = None) -> np.ndarray:
    """The ground outline (convex hull, counter-clockwise) of one shape in size units, unrotated."""
    return _cached_footprint(_geometry_key(shape, vocabulary))


def footprint_hull(mesh: Mesh) -> np.ndarray:
    """Convex hull (counter-clockwise, (K, 2)) of the mesh projected onto the ground plane."""
    return convex_hull_2d(mesh.vertices[:, :2])


def convex_hull_2d(points: np.ndarray) -> np.ndarray:
    """Andrew's monotone chain; returns the hull counter-clockwise without repeating the start."""
    unique = np.unique(np.round(np.asarray(points, float), 12), axis=0)
    if len(unique) < 3:
        return unique
    ordered = unique[np.lexsort((unique[:, 1], unique[:, 0]))]

    def half(sequence) -> list[np.ndarray]:
        chain: list[np.ndarray] = []
        for point in sequence:
            while len(chain) >= 2 and _cross(chain[-2], chain[-1], point) <= 0.0:
                chain.pop()
            chain.append(point)
        return chain

    lower, upper = half(ordered), half(ordered[::-1])
    return np.asarray(lower[:-1] + upper[:-1])


def _cross(o: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    return float((a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]))


def _geometry_key(shape: str, vocabulary: Vocabulary | None) -> tuple:
    """The shape's geometry entry as a hashable key, so equal entries share one cached mesh."""
    vocabulary = vocabulary or load_vocabulary()
    geometry = vocabulary.value("shape", shape).extra["geometry"]
    return tuple(sorted((k, _hashable(v)) for k, v in dict(geometry).items()))


@cache
def _cached_footprint(geometry_items: tuple) -> np.ndarray:
    hull = footprint_hull(_cached_shape_mesh(geometry_items))
    hull.setflags(write=False)  # shared between callers
    return hull


@cache
def _cached_shape_mesh(geometry_items: tuple) -> Mesh:
    geometry: Mapping[str, Any] = dict(geometry_items)
    kind = str(geometry["kind"])
    if kind not in BUILDERS:
        raise ValueError(f"unknown geometry kind {kind!r}; allowed: {', '.join(BUILDERS)}")
    parameters = {k: v for k, v in geometry.items() if k not in ("kind", "half_extent")}
    mesh = BUILDERS[kind](**parameters)
    return mesh.scaled(float(geometry.get("half_extent", 1.0)))


def _hashable(value: object) -> object:
    return tuple(value) if isinstance(value, list) else value


def _cube_grid(axis: np.ndarray) -> tuple[np.ndarray, list[tuple[int, int, int, int]]]:
    """Quad grids on the six faces of [-1, 1]^3 using ``axis`` as the coordinates along each edge."""
    n = len(axis)
    u, v = np.meshgrid(axis, axis, indexing="ij")
    u, v = u.ravel(), v.ravel()
    points: list[np.ndarray] = []
    faces: list[tuple[int, int, int, int]] = []
    for normal_axis in range(3):
        a, b = [k for k in range(3) if k != normal_axis]
        for sign in (-1.0, 1.0):
            grid = np.zeros((n * n, 3))
            grid[:, normal_axis] = sign
            grid[:, a], grid[:, b] = u, v
            base = sum(len(p) for p in points)
            points.append(grid)
            # Wind each quad so that its normal points out of the cube.
            flip = (sign > 0) != ((b - a) % 3 == 1)
            for i in range(n - 1):
                for j in range(n - 1):
                    quad = (base + i * n + j, base + (i + 1) * n + j, base + (i + 1) * n + j + 1, base + i * n + j + 1)
                    faces.append(quad[::-1] if flip else quad)
    return np.concatenate(points), faces


def _weld(vertices: np.ndarray, normals: np.ndarray, faces) -> Mesh:
    """Merge coincident vertices (cube edges are shared by two face grids) and drop degenerate faces."""
    keys = np.round(vertices, 9)
    unique, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.ravel()
    welded_faces = []
    for face in faces:
        mapped: list[int] = []
        for index in face:
            target = int(inverse[index])
            if target not in mapped:
                mapped.append(target)
        if len(mapped) >= 3:
            welded_faces.append(tuple(mapped))
    return Mesh(vertices[first], tuple(welded_faces), normals[first])
