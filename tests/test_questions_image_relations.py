"""Relations read in the image (questions/image_geometry.py, questions/unclear.py): scenes placed by
pixel with the renderer's own camera, and 1,000 sampled scenes checked against the image directly."""

from __future__ import annotations

import numpy as np
import pytest

from questions.executor import run_program
from questions.families import load_families
from questions.functions import ExecutionError, between_split, closest_object, ranked_object
from questions.generate import Settings, generate
from questions.image_geometry import BETWEEN_ANGLE, RELATION_MARGIN
from questions.plan import Plan
from questions.random_stream import RandomStream
from questions.scene_index import SceneIndex
from questions.search import SceneSearch
from render import sample_scene_graph
from render.model.camera import Camera
from render.model.relations import directions, pixel_coords, relationships

BASE = sample_scene_graph(0, 0)
CAMERA = Camera.from_dict(BASE["camera"])
MARGIN_PX = RELATION_MARGIN * CAMERA.width  # 12 px at 480 wide


def floor_point(u: float, v: float) -> tuple[float, float]:
    """The floor point (z = 0) that the camera shows at pixel (u, v)."""
    f = CAMERA.focal_length_px
    ray = CAMERA.matrix_world[:3, :3] @ np.array([(u - CAMERA.width / 2) / f, -(v - CAMERA.height / 2) / f, -1.0])
    origin = np.asarray(CAMERA.location)
    point = origin + ray * (-origin[2] / ray[2])
    return float(point[0]), float(point[1])


def scene_at(placed: list[tuple[str, str, str, str, float, float]]) -> dict:
    """A scene whose objects (shape, size, colour, material, pixel u, pixel v of the ground point)
    stand where the renderer's camera shows them; relationships as the renderer records them."""
    objects, coords = [], []
    for shape, size, color, material, u, v in placed:
        x, y = floor_point(u, v)
        height = 0.7 if size == "large" else 0.35
        coords.append([x, y, height])
        objects.append({"shape": shape, "size": size, "color": color, "material": material, "3d_coords": [x, y, height],
                        "rotation": 0.0, "scale": height})
    for obj, pixel in zip(objects, pixel_coords(CAMERA, coords), strict=True):
        obj["pixel_coords"] = pixel
    dirs = directions(CAMERA)
    return {"split": "new", "image_index": 0, "image_filename": "x.png", "objects": objects, "directions": dirs,
            "relationships": relationships(coords, dirs), "camera": BASE["camera"]}


@pytest.fixture(scope="module")
def families():
    return load_families()


def ask(families, scene: dict, family_id: str, params: dict[str, str]) -> str | None:
    search = SceneSearch(SceneIndex.from_scene(scene), RandomStream.for_unit("questions.search", 0, 0))
    candidate = search.instantiate(Plan.of(families[family_id]), params)
    return None if candidate is None else candidate.answer


def two_cubes(offset_px: float) -> dict:
    # A red cube left of the image's centre; a blue cube further behind, `offset_px` to the left of it
    # in the image (and, by the perspective, well to the left in 3-D too); a gray sphere far right.
    return scene_at([
        ("cube", "large", "red", "metal", 150, 250),
        ("cube", "small", "blue", "rubber", 150 - offset_px, 120),
        ("sphere", "small", "gray", "rubber", 420, 200),
    ])


def test_a_superlative_whose_winner_and_runner_up_are_within_the_margin_is_not_asked(families) -> None:
    near = two_cubes(MARGIN_PX / 2)  # 6 px apart: "the rightmost cube" cannot be read
    assert 1 in near["relationships"]["left"][0]  # ... though the 3-D record says the blue cube is left of the red one
    assert ask(families, near, "superlative/extreme/color", {"<S>": "cube", "<R>": "right"}) is None
    assert ask(families, near, "superlative/extreme/color", {"<S>": "cube", "<R>": "left"}) is None
    index = SceneIndex.from_scene(near)
    with pytest.raises(ExecutionError, match="clearly"):
        ranked_object(index, 0b011, "right", 0)
    # Clear of each other by twice the margin: asked, with the image's answer.
    far = two_cubes(2 * MARGIN_PX)
    assert ask(families, far, "superlative/extreme/color", {"<S>": "cube", "<R>": "right"}) == "red"
    assert ask(families, far, "superlative/extreme/color", {"<S>": "cube", "<R>": "left"}) == "blue"
    # Front/behind stays readable for the near pair: 130 px apart in image height.
    assert ask(families, near, "superlative/extreme/color", {"<S>": "cube", "<R>": "front"}) == "red"


def test_an_ordinal_needs_its_object_clear_of_both_neighbours(families) -> None:
    def row(second_u: float) -> dict:
        return scene_at([("cube", "large", "red", "metal", 100, 200), ("cube", "small", "blue", "rubber", second_u, 210),
                         ("cube", "large", "green", "rubber", 380, 190), ("sphere", "small", "gray", "metal", 240, 90)])

    assert ask(families, row(240), "ordinal/second/color", {"<S>": "cube", "<R>": "left"}) == "blue"
    assert ask(families, row(100 + MARGIN_PX / 2), "ordinal/second/color", {"<S>": "cube", "<R>": "left"}) is None
    assert ask(families, row(380 - MARGIN_PX / 2), "ordinal/second/color", {"<S>": "cube", "<R>": "left"}) is None


def unclear_scene() -> dict:
    # The sphere; left of it a cube and a cylinder, clearly; a second cylinder on the sphere's
    # vertical line (4 px off, far behind it); a yellow cube clearly right.
    return scene_at([
        ("sphere", "large", "gray", "metal", 260, 230),
        ("cube", "small", "red", "rubber", 120, 200),
        ("cylinder", "small", "blue", "rubber", 150, 120),
        ("cylinder", "large", "green", "metal", 264, 110),
        ("cube", "large", "yellow", "metal", 400, 180),
    ])


def test_a_relation_is_asked_only_if_the_unclear_objects_do_not_change_the_answer(families) -> None:
    scene = unclear_scene()
    index = SceneIndex.from_scene(scene)
    assert index.related("left", 0) == 0b00110 and index.unclear("left", 0) == 0b01000
    # "How many cubes are left of the sphere?" 1 whichever way the cylinder on its line is read.
    assert ask(families, scene, "count/one_hop", {"<S>": "sphere", "<R>": "left", "<S2>": "cube"}) == "1"
    # "How many cylinders ...?" 1 or 2: not asked; nor "Is there a green thing left of the sphere?".
    assert ask(families, scene, "count/one_hop", {"<S>": "sphere", "<R>": "left", "<S2>": "cylinder"}) is None
    assert ask(families, scene, "exist/one_hop", {"<S>": "sphere", "<R>": "left", "<C2>": "green"}) is None
    # Behind the sphere, the green cylinder is clear (120 px up): asked.
    assert ask(families, scene, "exist/one_hop", {"<S>": "sphere", "<R>": "behind", "<C2>": "green"}) == "yes"


def test_between_is_near_the_segment_joining_the_two_in_the_image(families) -> None:
    scene = scene_at([
        ("sphere", "large", "gray", "metal", 80, 220),
        ("cube", "large", "red", "rubber", 400, 220),
        ("cylinder", "small", "blue", "rubber", 240, 228),  # on the segment: between
        ("cube", "small", "green", "metal", 250, 70),  # between them left to right, but far behind: not between
    ])
    index = SceneIndex.from_scene(scene)
    assert between_split(index, 0, 1) == (0b0100, 0)
    assert ask(families, scene, "between/query/color", {"<S>": "sphere", "<S2>": "cube", "<Z2>": "large"}) == "blue"
    # An object just off the segment (the angle under BETWEEN_ANGLE but above NOT_BETWEEN_ANGLE) is unclear.
    doubtful = scene_at([("sphere", "large", "gray", "metal", 80, 220), ("cube", "large", "red", "rubber", 400, 220),
                         ("cylinder", "small", "blue", "rubber", 240, 220 - 160 * np.tan(np.radians((180 - BETWEEN_ANGLE + 10) / 2)))])
    assert between_split(SceneIndex.from_scene(doubtful), 0, 1) == (0, 0b100)
    assert ask(families, doubtful, "between/exist", {"<S>": "sphere", "<S2>": "cube"}) is None


def test_closest_must_be_the_closest_in_the_image_too() -> None:
    # From the sphere, the cube beside it is nearer on the floor; the cylinder behind looks nearer in the image.
    sphere_u, sphere_v = 200, 240
    sx, sy = floor_point(sphere_u, sphere_v)
    scene = scene_at([("sphere", "large", "gray", "metal", sphere_u, sphere_v),
                      ("cube", "small", "red", "rubber", sphere_u + 120, sphere_v),
                      ("cylinder", "small", "blue", "rubber", sphere_u, sphere_v - 70)])
    floor = [np.hypot(*(np.asarray(obj["3d_coords"][:2]) - (sx, sy))) for obj in scene["objects"]]
    assert floor[1] + 0.2 < floor[2]  # on the floor the cube is clearly the nearer
    with pytest.raises(ExecutionError, match="in the image"):
        closest_object(SceneIndex.from_scene(scene), 0, 0b110)


@pytest.fixture(scope="module")
def sampled(thousand_scenes):
    scenes = thousand_scenes[:300]
    return scenes, generate(scenes, load_families(), Settings(seed=0), progress=False)


def test_every_asked_superlative_and_ordinal_is_clear_in_the_image(sampled) -> None:
    """Checked with the renderer's camera (NumPy), not the engine's projection: the winner's ground
    point stands clear of every other member's by the margin, on the relation's image axis."""
    scenes, questions = sampled
    checked = 0
    for question in questions:
        program = question["program"]
        ranked = [k for k, node in enumerate(program) if node["function"] in ("most", "second")]
        if not ranked:
            continue
        scene = scenes[question["image_index"]]
        outputs = run_program(program, SceneIndex.from_scene(scene))
        camera = Camera.from_dict(scene["camera"])
        ground = camera.project([[obj["3d_coords"][0], obj["3d_coords"][1], 0.0] for obj in scene["objects"]])
        for k in ranked:
            relation = program[k]["value_inputs"][0]
            axis, sign = {"left": (0, -1), "right": (0, 1), "behind": (1, -1), "front": (1, 1)}[relation]
            members = [i for i in range(len(scene["objects"])) if outputs[program[k]["inputs"][0]] >> i & 1]
            order = sorted(members, key=lambda i: -sign * ground[i][axis])  # furthest in the relation first
            rank = 0 if program[k]["function"] == "most" else 1
            assert order[rank] == outputs[k]
            gaps = [abs(ground[a][axis] - ground[b][axis]) for a, b in zip(order, order[1:], strict=False)]
            assert min(gaps[max(0, rank - 1) : rank + 1]) > MARGIN_PX, question["question"]
            checked += 1
    assert checked >= 50


def test_a_scene_whose_camera_cannot_place_its_objects_is_refused_in_one_line() -> None:
    from questions.cli import scene_problem

    assert scene_problem(BASE) is None
    broken = {**BASE, "camera": {**BASE["camera"], "intrinsics": [[float("nan")] * 3] * 3}}
    assert scene_problem(broken) == "the camera or 3d_coords hold a number that is not finite"
    behind = {**BASE, "camera": {**BASE["camera"], "matrix_world": np.diag([1.0, 1.0, -1.0, 1.0]).tolist()}}
    assert "behind the camera" in (scene_problem(behind) or "")
