"""A pinhole camera in Blender's conventions, as plain NumPy, so projection needs no Blender.

Blender cameras look down their local -Z axis with +Y up. The camera here is placed by a
look-at point and handed to Blender as the very same 4x4 world matrix, so ``pixel_coords`` and
``directions`` are computed from the camera that renders the image (CLEVR computed them from
a camera whose jitter had not been applied yet).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

WORLD_UP = np.array([0.0, 0.0, 1.0])


def look_at_matrix(location, target) -> np.ndarray:
    """World matrix of an object at ``location`` whose -Z axis points at ``target`` (+Y up-ish)."""
    eye = np.asarray(location, float)
    forward = np.asarray(target, float) - eye
    forward /= np.linalg.norm(forward)
    right = np.cross(forward, WORLD_UP)
    if np.linalg.norm(right) < 1e-9:  # looking straight down or up: any right vector will do
        right = np.array([1.0, 0.0, 0.0])
    right /= np.linalg.norm(right)
    up = np.cross(right, forward)
    matrix = np.eye(4)
    matrix[:3, 0], matrix[:3, 1], matrix[:3, 2], matrix[:3, 3] = right, up, -forward, eye
    return matrix


@dataclass(frozen=True)
class Camera:
    """Pose (location, look-at target) and intrinsics (lens, horizontal sensor width, image size)."""

    location: tuple[float, float, float]
    target: tuple[float, float, float]
    focal_length_mm: float
    sensor_width_mm: float
    width: int
    height: int

    @cached_property  # the camera is immutable; projection is called once per placement attempt
    def matrix_world(self) -> np.ndarray:
        return look_at_matrix(self.location, self.target)

    @property
    def focal_length_px(self) -> float:
        # Blender is told sensor_fit = HORIZONTAL, so the sensor width spans the image width.
        return self.focal_length_mm / self.sensor_width_mm * self.width

    @property
    def intrinsics(self) -> np.ndarray:
        """3x3 K for pixel coordinates with a top-left origin (pixel (i, j) covers [i, i+1) x [j, j+1))."""
        f = self.focal_length_px
        return np.array([[f, 0.0, self.width / 2.0], [0.0, f, self.height / 2.0], [0.0, 0.0, 1.0]])

    def to_camera_space(self, points) -> np.ndarray:
        """World points (N, 3) in camera coordinates (x right, y up, z backwards, Blender's axes)."""
        matrix = self.matrix_world
        return (np.atleast_2d(np.asarray(points, float)) - matrix[:3, 3]) @ matrix[:3, :3]

    def project(self, points) -> np.ndarray:
        """World points (N, 3) to (N, 3) rows [x, y, depth]: continuous pixels, top-left origin.

        ``depth`` is the distance along the viewing axis (what CLEVR stores), positive in front.
        """
        local = self.to_camera_space(points)
        depth = -local[:, 2]
        f = self.focal_length_px
        x = self.width / 2.0 + f * local[:, 0] / depth
        y = self.height / 2.0 - f * local[:, 1] / depth
        return np.stack([x, y, depth], axis=1)

    def to_dict(self) -> dict:
        return {
            "location": [float(v) for v in self.location],
            "look_at": [float(v) for v in self.target],
            "matrix_world": [[float(v) for v in row] for row in self.matrix_world],
            "focal_length_mm": self.focal_length_mm,
            "sensor_width_mm": self.sensor_width_mm,
            "sensor_fit": "HORIZONTAL",
            "width": self.width,
            "height": self.height,
            "intrinsics": [[float(v) for v in row] for row in self.intrinsics],
        }

    @classmethod
    def from_dict(cls, data: dict) -> Camera:
        return cls(
            location=tuple(data["location"]),
            target=tuple(data["look_at"]),
            focal_length_mm=float(data["focal_length_mm"]),
            sensor_width_mm=float(data["sensor_width_mm"]),
            width=int(data["width"]),
            height=int(data["height"]),
        )
