"""``render verify``'s geometry check: each scene's spatial record recomputed from its 3-D poses and camera.

The renderer derives ``directions``, ``relationships``, ``pixel_coords`` and where each object can
appear in the image from the camera and the objects' ``3d_coords``, ``rotation`` and ``scale``.
Recomputing them here catches an edit that left the files valid: an object moved in the record
(its ``3d_coords`` and ``pixel_coords`` shifted together in both scene files), relationships
emptied or rewritten, a camera record that is not the camera it claims. Against the mask, each
object's visible box (``bbox_2d``, checked against the mask by verify) must lie inside the box its
recorded pose projects to, so a record moved consistently, pixel coordinates and relationships
recomputed, still disagrees with the image.
"""

from __future__ import annotations

import numpy as np

from assets.geometry import shape_mesh
from assets.vocabulary import load_vocabulary
from render.model.camera import Camera
from render.model.relations import DEFAULT_RELATION_EPS, directions, projected_box, relationships
from render.model.sampler import object_footprint

#: Slack for numbers a re-run on another machine may round differently in the last bits.
TOLERANCE = 1e-6
#: Pixels a visible box may reach past its projected pose's box (mask pixels are whole pixels).
BOX_SLACK_PX = 1.0


def geometry_problems(index: int, scene: dict) -> list[str]:
    """What in ``scene``'s spatial record is not what its camera and poses give (one line each)."""
    vocabulary = load_vocabulary()
    try:
        camera = Camera.from_dict(scene["camera"])
        objects = scene["objects"]
        coords = np.array([[float(v) for v in obj["3d_coords"]] for obj in objects]).reshape(-1, 3)
        footprints = [object_footprint(obj["shape"], float(obj["scale"]), float(obj["rotation"]), coords[k, :2], vocabulary)
                      for k, obj in enumerate(objects)]
    except (KeyError, TypeError, ValueError, IndexError) as error:
        return [f"index {index}: the scene's camera or object poses cannot be read ({type(error).__name__}: {error})"]
    problems = _camera_problems(index, scene["camera"], camera)
    expected_directions = directions(camera)
    if not _close(scene.get("directions"), expected_directions):
        problems.append(f"index {index}: directions are not those of the scene's camera")
    expected = relationships(coords.tolist(), expected_directions, DEFAULT_RELATION_EPS)
    recorded = scene.get("relationships")
    for name, lists in expected.items():
        got = recorded.get(name) if isinstance(recorded, dict) else None
        if got != lists:
            first = next((k for k in range(len(lists)) if not isinstance(got, list) or k >= len(got) or got[k] != lists[k]), 0)
            problems.append(f"index {index}: relationships[{name!r}] are not what the 3d_coords give "
                            f"(object {first}: recorded {_at(got, first)}, computed {lists[first]})")
    projected = camera.project(coords)
    for k, obj in enumerate(objects):
        problems += _object_problems(index, k, obj, projected[k], footprints[k], camera, vocabulary)
    return problems


def _camera_problems(index: int, record: dict, camera: Camera) -> list[str]:
    problems = []
    if not _close(record.get("matrix_world"), camera.matrix_world.tolist()):
        problems.append(f"index {index}: the camera's matrix_world is not the one its location and look_at give")
    if not _close(record.get("intrinsics"), camera.intrinsics.tolist()):
        problems.append(f"index {index}: the camera's intrinsics are not those of its lens, sensor and image size")
    return problems


def _object_problems(index: int, k: int, obj: dict, projected: np.ndarray, footprint: np.ndarray, camera: Camera, vocabulary) -> list[str]:
    problems = []
    pixel = obj.get("pixel_coords")
    x, y, depth = (float(v) for v in projected)
    if not (isinstance(pixel, list) and len(pixel) == 3 and all(isinstance(v, (int, float)) for v in pixel)
            and abs(pixel[0] - x) <= 0.5 + TOLERANCE and abs(pixel[1] - y) <= 0.5 + TOLERANCE and abs(pixel[2] - depth) <= TOLERANCE):
        problems.append(f"index {index}: object {k}'s pixel_coords {pixel} are not where its 3d_coords project "
                        f"([{x:.1f}, {y:.1f}, {depth:.4f}])")
    height = shape_mesh(obj["shape"], vocabulary).half_height * float(obj["scale"])
    if abs(float(obj["3d_coords"][2]) - height) > TOLERANCE:
        problems.append(f"index {index}: object {k} does not stand on the floor (z {obj['3d_coords'][2]}, its half height {height:.4f})")
    box = obj.get("bbox_2d")
    if isinstance(box, list) and len(box) == 4:
        x0, y0, x1, y1 = projected_box(camera, footprint, 2 * height)
        if box[0] < x0 - BOX_SLACK_PX or box[1] < y0 - BOX_SLACK_PX or box[2] > x1 + BOX_SLACK_PX or box[3] > y1 + BOX_SLACK_PX:
            problems.append(f"index {index}: object {k}'s visible box {box} lies outside the box its pose projects to "
                            f"[{x0:.1f}, {y0:.1f}, {x1:.1f}, {y1:.1f}] (the record does not place it where the image shows it)")
    return problems


def _close(recorded, expected) -> bool:
    """Whether ``recorded`` (from JSON) holds the numbers of ``expected`` (nested lists or a dict of lists)."""
    if isinstance(expected, dict):
        return isinstance(recorded, dict) and recorded.keys() == expected.keys() and all(
            _close(recorded[key], value) for key, value in expected.items())
    try:
        got = np.asarray(recorded, float)
    except (TypeError, ValueError):
        return False
    want = np.asarray(expected, float)
    return got.shape == want.shape and bool(np.allclose(got, want, rtol=0.0, atol=TOLERANCE))


def _at(lists, k: int):
    return lists[k] if isinstance(lists, list) and k < len(lists) else None
