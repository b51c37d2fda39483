"""The occlusion truth against an independent recomputation from the rendered masks.

    python benchmarks/occlusion_bench.py --out /tmp/occlusion_bench --n 40 --seed 3535

Renders ``--n`` scenes (240x160, 2 samples by default: the truth is the mask, which one camera
sample per pixel draws whatever the samples), then for every scene:

- reads its instance mask back from the PNG on disk;
- renders every object **alone** with Blender (the renderer's mask pass), which is the object's
  unoccluded silhouette as Blender draws it, not the convex hull of its projected mesh that the
  record is computed from (render/model/occlusion.py);
- recomputes per object the pixels of that silhouette each other object covers in the mask (all, and
  those in its upper half), and those near it, with code of its own (no function of
  render/model/occlusion.py);
- judges both with the same margins (questions/occlusion.py) and compares: per object (partly
  hidden: yes / no / unclear) and per pair of objects that show near each other.

Then it asks the occlusion families on the folder (``python -m questions --mix occlusion=1
--mix-by group``) and executes every asked question's program again on the scene with its
occlusion records replaced by the recomputed ones: the answers must agree on 100 %. Printed as
Markdown: the agreement, the silhouette area of the two methods, and the share of candidates
(objects, and pairs of objects near each other) refused as unclear, and how that share moves with
the margin (HIDDEN_SHARE 0.15–0.35, with and without the lower-edge rule: a cover only along an
object's lower edge is unclear).

    python benchmarks/occlusion_bench.py --out OUT --render BUILD/render

reuses a render folder made elsewhere (a build's ``render/``) instead of rendering; with
``--questions BUILD/questions.json`` it checks that file's occlusion questions instead of asking.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from questions.executor import execute_program
from questions.functions import ExecutionError
from questions.occlusion import CLEAR_NO, CLEAR_YES, HIDDEN_SHARE, UNCLEAR, pair_judgement, scene_occlusion
from render import DeviceChoice, RenderBackend, engine_factory, scene_from_graph, settings_from_record
from render.legibility import LegibilityReader, read_frame
from render.model.occlusion import NEAR_PIXELS

NEAR = NEAR_PIXELS  # pixels: the judged quantity must be the renderer's own
MARGINS = (0.15, 0.2, 0.25, 0.3, 0.35)  # HIDDEN_SHARE values whose unclear share is reported


def render_folder(out: Path, args: argparse.Namespace) -> Path:
    from render.cli import main as render_main

    folder = out / "render"
    command = ["--n", str(args.n), "--seed", str(args.seed), "--width", str(args.width), "--height", str(args.height),
               "--samples", str(args.samples), "--device", "cpu", "--workers", "1", "--out", str(folder), "--quiet",
               *args.render_args.split()]
    if render_main(command) != 0:
        raise SystemExit("rendering failed")
    return folder


def solo_masks(session: RenderBackend, scene: dict[str, Any]) -> list[np.ndarray]:
    """Each object rendered with no other object in the scene: where Blender draws it, unoccluded."""
    sampled = scene_from_graph(scene)
    return [session.render_mask(dataclasses.replace(sampled, objects=(obj,))) != 0 for obj in sampled.objects]


def dilated(region: np.ndarray, steps: int) -> np.ndarray:
    """``region`` grown ``steps`` pixels into its 8-neighbourhood (a max filter over a padded copy)."""
    for _ in range(steps):
        padded = np.pad(region, 1)
        height, width = region.shape
        region = np.zeros_like(region)
        for dy in (0, 1, 2):
            for dx in (0, 1, 2):
                region = region | padded[dy:dy + height, dx:dx + width]
    return region


def upper_rows(solo: np.ndarray) -> np.ndarray:
    """The silhouette's pixels in the rows above the middle of the rows it spans (top row first)."""
    rows = np.flatnonzero(solo.any(axis=1))
    upper = solo.copy()
    if len(rows):
        upper[(rows[0] + rows[-1] + 1) // 2:] = False
    return upper


def recomputed_records(mask: np.ndarray, solos: list[np.ndarray]) -> list[dict[str, Any]]:
    """Per object, the occlusion record recomputed from the mask PNG and its solo silhouette."""
    records = []
    for i, solo in enumerate(solos):
        near = dilated(solo, NEAR)
        upper = upper_rows(solo)
        covered_by, near_by, covered_upper = [], [], []
        for j in range(len(solos)):
            if j == i:
                continue
            shown = mask == j + 1
            if int((solo & shown).sum()):
                covered_by.append([j, int((solo & shown).sum())])
            if int((near & shown).sum()):
                near_by.append([j, int((near & shown).sum())])
            if int((upper & shown).sum()):
                covered_upper.append([j, int((upper & shown).sum())])
        records.append({"silhouette_pixels": int(solo.sum()), "covered_by": covered_by, "near": near_by,
                        "covered_upper": covered_upper})
    return records


def object_judgement(records: list[dict[str, Any]], i: int, hidden_share: float = HIDDEN_SHARE) -> str:
    occlusion = scene_occlusion([{"occlusion": record} for record in records], hidden_share)
    assert occlusion is not None
    return CLEAR_YES if occlusion.hidden >> i & 1 else CLEAR_NO if occlusion.unhidden >> i & 1 else UNCLEAR


def without_lower_edge_rule(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records as if every covered pixel lay in the upper half: the margin alone decides."""
    return [{**record, "covered_upper": record["covered_by"]} for record in records]


def margin_counts(records: list[dict[str, Any]], table: Counter[tuple[float, bool, str, str]]) -> None:
    """Add per margin and rule (lower-edge rule on or off) the objects and near pairs judged yes / no / unclear."""
    for share in MARGINS:
        for rule in (True, False):
            judged = records if rule else without_lower_edge_rule(records)
            for i, record in enumerate(judged):
                table[share, rule, "object", object_judgement(judged, i, share)] += 1
                for j, _ in record["near"]:
                    table[share, rule, "pair", pair_judgement(judged, i, j, share)] += 1


def with_records(scene: dict[str, Any], records: list[dict[str, Any]]) -> dict[str, Any]:
    return {**scene, "objects": [{**obj, "occlusion": record} for obj, record in zip(scene["objects"], records, strict=True)]}


def ask(folder: Path, out: Path, seed: int, per_image: int) -> list[dict[str, Any]]:
    from questions.cli import main as questions_main

    path = out / "questions.json"
    command = ["--scenes", str(folder / "scenes.json"), "--out", str(path), "--mix", "occlusion=1", "--mix-by", "group",
               "--per-image", str(per_image), "--seed", str(seed), "--quiet", "--overwrite"]
    if questions_main(command) != 0:
        raise SystemExit("asking failed")
    return json.loads(path.read_text(encoding="utf-8"))["questions"]


def occlusion_questions(path: Path) -> list[dict[str, Any]]:
    """The questions of a questions.json whose program reads occlusion."""
    from questions.occlusion import OCCLUSION_FUNCTIONS

    questions = json.loads(path.read_text(encoding="utf-8"))["questions"]
    return [q for q in questions if any(node.get("function") in OCCLUSION_FUNCTIONS for node in q["program"])]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--seed", type=int, default=3535)
    parser.add_argument("--width", type=int, default=240)
    parser.add_argument("--height", type=int, default=160)
    parser.add_argument("--samples", type=int, default=2)
    parser.add_argument("--per-image", type=int, default=6)
    parser.add_argument("--render-args", default="", help="more render flags, e.g. '--min-visible-fraction 0.3'")
    parser.add_argument("--render", type=Path, help="an existing render folder to read instead of rendering")
    parser.add_argument("--questions", type=Path,
                        help="check this questions.json's occlusion questions (e.g. a build's) instead of asking anew")
    args = parser.parse_args()
    started = time.perf_counter()
    args.out.mkdir(parents=True, exist_ok=True)
    folder = args.render if args.render else render_folder(args.out, args)
    rendered = time.perf_counter()
    scenes = json.loads((folder / "scenes.json").read_text(encoding="utf-8"))["scenes"]
    objects: Counter[tuple[str, str]] = Counter()
    margins: Counter[tuple[float, bool, str, str]] = Counter()
    pairs: Counter[tuple[str, str]] = Counter()
    area_ratio, shown, colour_read = [], [], []
    reader = LegibilityReader.for_look(3)
    recomputed: dict[int, dict[str, Any]] = {}
    session: RenderBackend | None = None
    for scene in scenes:
        if session is None:
            session = engine_factory("cycles")(settings_from_record(scene["render"]), DeviceChoice("cpu", ()))
        picture, mask = read_frame(folder, scene)
        readings = reader.read(picture, mask, len(scene["objects"]))
        truth = [obj["occlusion"] for obj in scene["objects"]]
        again = recomputed_records(mask, solo_masks(session, scene))
        recomputed[scene["image_index"]] = with_records(scene, again)
        margin_counts(truth, margins)
        for i, (mine, theirs) in enumerate(zip(truth, again, strict=True)):
            objects[object_judgement(truth, i), object_judgement(again, i)] += 1
            area_ratio.append(mine["silhouette_pixels"] / max(1, theirs["silhouette_pixels"]))
            shown.append(1 - sum(p for _, p in mine["covered_by"]) / max(1, mine["silhouette_pixels"]))
            colour_read.append(readings[i].values is not None and readings[i].values["color"] == scene["objects"][i]["color"])
            for j in range(len(truth)):
                if j != i and any(other == j for other, _ in mine["near"] + theirs["near"]):
                    pairs[pair_judgement(truth, i, j), pair_judgement(again, i, j)] += 1
    if session is not None:
        session.close()
    questions = occlusion_questions(args.questions) if args.questions else ask(folder, args.out, args.seed, args.per_image)
    agree, by_family = 0, Counter[str]()
    disagreements = []
    for question in questions:
        try:
            answer = execute_program(question["program"], recomputed[question["image_index"]])
        except ExecutionError as error:
            answer = f"not asked ({error})"
        by_family[question["family"]] += 1
        if answer == question["answer"]:
            agree += 1
        else:
            disagreements.append(f"{question['image_index']} {question['question']!r}: {question['answer']} vs {answer}")
    report(args, scenes, objects, pairs, area_ratio, (shown, colour_read), questions, agree, by_family, disagreements,
           rendered - started, time.perf_counter() - rendered)
    report_margins(margins)


def report_margins(margins: Counter[tuple[float, bool, str, str]]) -> None:
    print("\n| HIDDEN_SHARE | lower-edge rule | objects clearly hidden | objects unclear | near pairs clearly hidden | near pairs unclear |")
    print("|---|---|---:|---:|---:|---:|")
    for share in MARGINS:
        for rule in (True, False):
            cells = []
            for kind in ("object", "pair"):
                total = sum(margins[share, rule, kind, verdict] for verdict in (CLEAR_YES, CLEAR_NO, UNCLEAR))
                cells += [str(margins[share, rule, kind, CLEAR_YES]),
                          f"{margins[share, rule, kind, UNCLEAR]} of {total} ({100 * margins[share, rule, kind, UNCLEAR] / max(1, total):.1f} %)"]
            current = " (in use)" if share == HIDDEN_SHARE and rule else ""
            print(f"| {share:.2f}{current} | {'on' if rule else 'off'} | {cells[0]} | {cells[1]} | {cells[2]} | {cells[3]} |")


def report(args, scenes, objects, pairs, area_ratio, shown, questions, agree, by_family, disagreements, render_s, rest_s) -> None:
    total_objects = sum(objects.values())
    total_pairs = sum(pairs.values())
    made = (f"from {args.render}" if args.render else
            f"seed {args.seed}, {args.width}x{args.height}, {args.samples} samples{', ' + args.render_args if args.render_args else ''}")
    print(f"## Occlusion: the record against a recomputation from the masks ({len(scenes)} scenes, {made})\n")
    print(f"asked questions whose answer the recomputation gives too: **{agree} of {len(questions)}** "
          f"({100 * agree / max(1, len(questions)):.1f} %); per family: "
          + ", ".join(f"{family} {n}" for family, n in sorted(by_family.items())))
    for line in disagreements[:10]:
        print(f"- disagrees: {line}")
    print("\n| record \\ recomputed | " + " | ".join((CLEAR_YES, CLEAR_NO, UNCLEAR)) + " |")
    print("|---|---|---|---|")
    for name, table in (("objects (partly hidden?)", objects), ("pairs near each other (i hidden by j?)", pairs)):
        print(f"| **{name}** | | | |")
        for mine in (CLEAR_YES, CLEAR_NO, UNCLEAR):
            print(f"| {mine} | " + " | ".join(str(table[mine, theirs]) for theirs in (CLEAR_YES, CLEAR_NO, UNCLEAR)) + " |")
    flips = sum(table[a, b] for table in (objects, pairs) for a, b in ((CLEAR_YES, CLEAR_NO), (CLEAR_NO, CLEAR_YES)))
    print(f"\nclear answers that flip between the two (yes <-> no): {flips}")
    unclear_objects = sum(objects[UNCLEAR, b] for b in (CLEAR_YES, CLEAR_NO, UNCLEAR))
    unclear_pairs = sum(pairs[UNCLEAR, b] for b in (CLEAR_YES, CLEAR_NO, UNCLEAR))
    hidden = sum(objects[CLEAR_YES, b] for b in (CLEAR_YES, CLEAR_NO, UNCLEAR))
    print(f"refused as unclear: {unclear_objects} of {total_objects} objects ({100 * unclear_objects / max(1, total_objects):.1f} %; "
          f"{hidden} clearly partly hidden), {unclear_pairs} of {total_pairs} pairs near each other "
          f"({100 * unclear_pairs / max(1, total_pairs):.1f} %)")
    ratio = np.asarray(area_ratio)
    print(f"silhouette pixels, convex hull / Blender alone: median {np.median(ratio):.3f}, 5-95 % {np.percentile(ratio, 5):.3f}–"
          f"{np.percentile(ratio, 95):.3f}")
    fractions, colours = (np.asarray(values) for values in shown)
    print("\n| share of its silhouette an object shows | objects | its colour read right from the pixels (legibility reader) |")
    print("|---|---|---|")
    edges = (0.0, 0.3, 0.5, 0.6, 0.85, 0.999, 1.01)
    for low, high in zip(edges, edges[1:], strict=False):
        inside = (fractions >= low) & (fractions < high)
        read = f"{100 * colours[inside].mean():.1f} %" if inside.any() else "–"
        print(f"| [{low:.2f}, {min(high, 1.0):.2f}{']' if high > 1 else ')'} | {int(inside.sum())} | {read} |")
    print(f"\nrender {render_s:.0f} s, solo masks + questions {rest_s:.0f} s")


if __name__ == "__main__":
    main()
