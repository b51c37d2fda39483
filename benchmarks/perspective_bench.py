"""Perspective-taking: how many viewpoint triples the margins leave unclear, and whether the camera's frame would do.

Over sampled scene graphs (no rendering; each records its camera), every ordered triple of
different objects (stand at A, face B, is C left or right?) is judged by questions/perspective.py
and sorted: clear; a leg too short (on the floor or in the image); C within SIDE_MARGIN of the
facing line on the floor; clear on the floor but not in the image (perspective bends the angle
to the other side or into the margin). For the clear ones it also counts how often the camera's
own left/right (C against A in the picture) gives the same answer: near 50 % means a model that
ignores the viewpoint is at chance.

    python benchmarks/perspective_bench.py --scenes 500
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from itertools import permutations

from questions.perspective import MIN_LEG, MIN_LEG_MARGINS, seen_side, side_of, signed_angle
from questions.scene_index import SceneIndex
from render import SceneOptions, sample_scene_graph


def classify(scene: SceneIndex, viewer: int, faced: int, target: int) -> str:
    """Why a triple is or is not asked: clear, short leg, near the line, or the image disagrees."""
    if seen_side(scene, viewer, faced, target, "left") is not None:
        return "clear"
    floor, image = scene.ground, scene.image
    assert floor is not None and image is not None
    legs = ((viewer, faced), (viewer, target))
    if any(_distance(floor[a], floor[b]) < MIN_LEG for a, b in legs):
        return "short leg (floor)"
    if side_of(signed_angle(floor[viewer], floor[faced], floor[target]), "left") is None:
        return "near the facing line (floor)"
    seen = [(x, -y) for x, y in image.points]
    if any(_distance(seen[a], seen[b]) < MIN_LEG_MARGINS * image.margin for a, b in legs):
        return "short leg (image)"
    return "image disagrees or within the margin there"


def _distance(first: tuple[float, float], second: tuple[float, float]) -> float:
    return ((second[0] - first[0]) ** 2 + (second[1] - first[1]) ** 2) ** 0.5


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenes", type=int, default=500, help="sampled scene graphs (default 500)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the scenes (default 0)")
    args = parser.parse_args()
    reasons: Counter[str] = Counter()
    agree = clear = 0
    for index in range(args.scenes):
        scene = SceneIndex.from_scene(sample_scene_graph(args.seed, index, SceneOptions(min_objects=3, max_objects=10)))
        assert scene.image is not None
        for viewer, faced, target in permutations(range(scene.count), 3):
            reason = classify(scene, viewer, faced, target)
            reasons[reason] += 1
            if reason == "clear":
                clear += 1
                camera_left = scene.image.points[target][0] < scene.image.points[viewer][0]
                agree += camera_left == seen_side(scene, viewer, faced, target, "left")
    total = sum(reasons.values())
    print(json.dumps({
        "scenes": args.scenes,
        "triples": total,
        "shares": {reason: round(count / total, 4) for reason, count in reasons.most_common()},
        "camera_frame_agrees_on_clear": round(agree / clear, 4) if clear else None,
    }, indent=2))


if __name__ == "__main__":
    main()
