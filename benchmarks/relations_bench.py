"""Relations read in the image: what the margins measure, and how many questions each rule removes.

On graph-only scenes (the renderer's sampler, no rendering, 480x320 by default):

1. how large objects look: each object's projected width in pixels (the box of its prism), so a
   margin can be set against the smallest, furthest objects;
2. object pairs on one image axis: the share closer than each candidate margin, and the pairs the
   perspective turns around (the 3-D record says left, the image right);
3. per family, of the questions the engine asks without the image rules (the scenes' cameras
   removed: the record's relations, as in CLEVR), how many each rule refuses, for each candidate
   margin and ``between`` angle (the constants of questions/image_geometry.py, set in this process
   only); and any whose answer the image reading would change instead (there should be none).

    python benchmarks/relations_bench.py --scenes 300
"""

from __future__ import annotations

import argparse
import statistics
from collections import Counter

import numpy as np

from assets.vocabulary import load_vocabulary
from questions import image_geometry
from questions.families import load_families
from questions.generate import Settings, generate
from questions.plan import Plan
from questions.random_stream import RandomStream
from questions.scene_index import SceneIndex
from questions.search import SceneSearch
from render import SceneOptions, sample_scene_graph
from render.model.camera import Camera
from render.model.relations import projected_box
from render.model.sampler import object_footprint

MARGINS = (0.0, 0.0125, 0.025, 0.05)
BETWEEN = ((150.0, 150.0), (150.0, 120.0), (165.0, 135.0))  # (between from, clearly not below)


def apparent_widths(scenes: list[dict]) -> list[float]:
    vocabulary = load_vocabulary()
    widths = []
    for scene in scenes:
        camera = Camera.from_dict(scene["camera"])
        for obj in scene["objects"]:
            footprint = object_footprint(obj["shape"], obj["scale"], obj["rotation"], obj["3d_coords"][:2], vocabulary)
            box = projected_box(camera, footprint, 2 * obj["3d_coords"][2])
            widths.append(box[2] - box[0])
    return widths


def pair_offsets(scenes: list[dict]) -> tuple[list[float], list[float], int, int]:
    """|dx|, |dy| (pixels) of every pair's ground points, and pairs whose image order contradicts the record."""
    dxs, dys, inverted, pairs = [], [], 0, 0
    for scene in scenes:
        placement = image_geometry.image_placement(scene)
        assert placement is not None
        left = scene["relationships"]["left"]
        behind = scene["relationships"]["behind"]
        points = placement.points
        for i in range(len(points)):
            for j in range(i + 1, len(points)):
                pairs += 1
                dxs.append(abs(points[i][0] - points[j][0]))
                dys.append(abs(points[i][1] - points[j][1]))
                if (j in left[i]) != (points[j][0] < points[i][0]) or (j in behind[i]) != (points[j][1] < points[i][1]):
                    inverted += 1
    return dxs, dys, inverted, pairs


def without_camera(scene: dict) -> dict:
    """The scene as the engine saw it before the image rules: no camera, so the record's relations."""
    return {key: value for key, value in scene.items() if key != "camera"}


def removed(questions: list[dict], scenes: list[dict], plans: dict[str, Plan], seed: int) -> tuple[Counter[str], Counter[str]]:
    """Per family, the questions (asked by the engine without the image rules) that the rules refuse,
    and those among them whose answer the image reading would change."""
    refused: Counter[str] = Counter()
    changed: Counter[str] = Counter()
    indexes = {}
    for question in questions:
        image_index = question["image_index"]
        if image_index not in indexes:
            indexes[image_index] = SceneIndex.from_scene(scenes[image_index])
        search = SceneSearch(indexes[image_index], RandomStream.for_unit("questions.search", seed, image_index))
        candidate = search.instantiate(plans[question["family"]], question["params"])
        if candidate is None:
            refused[question["family"]] += 1
        elif candidate.answer != question["answer"]:
            changed[question["family"]] += 1
    return refused, changed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenes", type=int, default=300, help="number of sampled scenes (default 300)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the scenes (default 0)")
    args = parser.parse_args()
    scenes = [sample_scene_graph(args.seed, index, SceneOptions()) for index in range(args.scenes)]
    width = scenes[0]["camera"]["width"]

    widths = sorted(apparent_widths(scenes))
    print(f"{len(widths)} objects, apparent width in px at {width} wide: min {widths[0]:.1f}, "
          f"p5 {widths[len(widths) // 20]:.1f}, median {statistics.median(widths):.1f}, max {widths[-1]:.1f}")
    dxs, dys, inverted, pairs = pair_offsets(scenes)
    print(f"{pairs} object pairs; image order against the 3-D record: {inverted} ({100 * inverted / pairs:.2f} %)")
    for margin in MARGINS[1:]:
        px = margin * width
        print(f"margin {margin} ({px:.0f} px): pairs closer in x {100 * np.mean(np.array(dxs) <= px):.1f} %, "
              f"in y {100 * np.mean(np.array(dys) <= px):.1f} %")

    families = load_families()
    plans = {family_id: Plan.of(family) for family_id, family in families.items()}
    questions = generate([without_camera(scene) for scene in scenes], families, Settings(seed=args.seed), progress=False)
    asked = Counter(question["family"] for question in questions)
    shipped = (image_geometry.RELATION_MARGIN, image_geometry.BETWEEN_ANGLE, image_geometry.NOT_BETWEEN_ANGLE)
    columns: dict[str, Counter[str]] = {}
    for margin in MARGINS:
        image_geometry.RELATION_MARGIN = margin
        columns[f"m={margin}"], changed = removed(questions, scenes, plans, args.seed)
        if sum(changed.values()):
            print(f"margin {margin}: {sum(changed.values())} answers would change (not refused): {dict(changed)}")
    image_geometry.RELATION_MARGIN = shipped[0]
    for inside, outside in BETWEEN:
        image_geometry.BETWEEN_ANGLE, image_geometry.NOT_BETWEEN_ANGLE = inside, outside
        columns[f"b={inside:.0f}/{outside:.0f}"], _ = removed(questions, scenes, plans, args.seed)
    image_geometry.BETWEEN_ANGLE, image_geometry.NOT_BETWEEN_ANGLE = shipped[1], shipped[2]

    print(f"\n{len(questions)} questions asked without the image rules (scenes' cameras removed); refused with them, "
          f"per family that refuses any (m: margin as a fraction of the width, b: between angles; shipped: "
          f"m={shipped[0]}, b={shipped[1]:.0f}/{shipped[2]:.0f})")
    names = list(columns)
    print("family".ljust(40) + "asked".rjust(7) + "".join(name.rjust(11) for name in names))
    by_group: dict[str, Counter[str]] = {}
    group_asked: Counter[str] = Counter()
    for family_id in sorted(asked):
        group = families[family_id].group
        group_asked[group] += asked[family_id]
        for name in names:
            by_group.setdefault(group, Counter())[name] += columns[name][family_id]
        if any(columns[name][family_id] for name in names):
            print(family_id.ljust(40) + str(asked[family_id]).rjust(7) + "".join(str(columns[name][family_id]).rjust(11) for name in names))
    print("\nper group (refused / asked)")
    for group in sorted(group_asked):
        print(group.ljust(40) + str(group_asked[group]).rjust(7) + "".join(
            f"{100 * by_group[group][name] / group_asked[group]:.1f}%".rjust(11) for name in names))
    total = sum(asked.values())
    print("all".ljust(40) + str(total).rjust(7) + "".join(f"{100 * sum(columns[name].values()) / total:.1f}%".rjust(11) for name in names))


if __name__ == "__main__":
    main()
