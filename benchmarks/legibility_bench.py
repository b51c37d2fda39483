"""How well the pixels show each object's attributes: the legibility reader against the scene graphs.

    python benchmarks/legibility_bench.py --folder /tmp/look_2_score --folder /tmp/look_3_score

Each folder is read with the reader of its recorded look (render/legibility_calibration.json,
fitted by benchmarks/legibility_fit.py on other seeds). Printed per folder, as Markdown: accuracy
per attribute x shape x size; accuracy by visible fraction and by visible pixels (what chose the
legibility floors); the confusion pairs; and the same table for the objects the floors keep
(``--min-visible-fraction``, ``--min-pixels``, default the renderer's look-3 floors), which is what
a render with those floors contains.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from render.farm.worker import DEFAULT_MIN_PIXELS
from render.legibility import (
    CALIBRATION_PATH,
    CONFIDENT,
    FEATURE_NAMES,
    READ_ATTRIBUTES,
    LegibilityReader,
    object_features,
    read_frame,
)
from render.model.silhouette import visible_fractions
from render.model.visibility import DEFAULT_MIN_VISIBLE_FRACTION

#: Single cues a person sees at a glance (the issue's measure was the first): how far each alone tells metal from rubber.
CUES = ("lum_cv", "p98_over_med", "texture_coarse")
CELLS = [(shape, size) for shape in ("cube", "cylinder", "sphere") for size in ("large", "small")]
FRACTION_BINS = (0.0, 0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 1.01)
PIXEL_BINS = (0, 100, 200, 300, 500, 1000, 2000, 10**9)


def scored_objects(folder: Path, calibration: Path = CALIBRATION_PATH) -> list[dict]:
    """Per object: its recorded attributes, what the reader saw, how sure, its visible fraction and pixels."""
    scenes = json.loads((folder / "scenes.json").read_text(encoding="utf-8"))["scenes"]
    readers: dict[int, LegibilityReader] = {}
    rows = []
    for scene in scenes:
        look = int(scene["render"].get("look", 1))
        reader = readers.setdefault(look, LegibilityReader.for_look(look, calibration))
        image, mask = read_frame(folder, scene)
        pixels = [int(obj["visible_pixels"]) for obj in scene["objects"]]
        fractions = visible_fractions(scene, pixels)
        area_scale = image.shape[0] * image.shape[1] / (480 * 320)
        for obj, reading, fraction, count in zip(scene["objects"], reader.read(image, mask, len(pixels)), fractions, pixels, strict=True):
            features = object_features(image, mask, int(obj["mask_id"]))
            cues = {cue: float(features[FEATURE_NAMES.index(cue)]) for cue in CUES} if features is not None else None
            rows.append({"object": obj, "values": reading.values, "confidence": reading.confidence, "fraction": fraction,
                         "pixels_480": count / area_scale, "scene": scene["image_index"], "cues": cues})
    return rows


def correct(row: dict, name: str) -> bool:
    return row["values"] is not None and row["values"][name] == row["object"][name]


def percent(rows: list[dict], name: str) -> str:
    if not rows:
        return "–"
    return f"{100.0 * sum(correct(row, name) for row in rows) / len(rows):.1f}"


def cell_table(rows: list[dict], title: str) -> list[str]:
    by_cell = defaultdict(list)
    for row in rows:
        by_cell[(row["object"]["shape"], row["object"]["size"])].append(row)
    header = "| attribute | " + " | ".join(f"{size} {shape}" for shape, size in CELLS) + " | all |"
    lines = [f"**{title}** ({len(rows)} objects of {len({row['scene'] for row in rows})} scenes; % read right)", "",
             header, "|" + "---|" * (len(CELLS) + 2)]
    lines.append("| objects | " + " | ".join(str(len(by_cell[cell])) for cell in CELLS) + f" | {len(rows)} |")
    for name in READ_ATTRIBUTES:
        lines.append(f"| {name} | " + " | ".join(percent(by_cell[cell], name) for cell in CELLS) + f" | {percent(rows, name)} |")
    unsure = sum(1 for row in rows if row["confidence"] is None or min(row["confidence"].values()) < CONFIDENT)
    lines += ["", f"unsure (some attribute below p={CONFIDENT}) or unreadable: {unsure}", ""]
    return lines


def binned_table(rows: list[dict], key: str, bins: tuple, label: str) -> list[str]:
    lines = [f"| {label} | objects | " + " | ".join(READ_ATTRIBUTES) + " |", "|" + "---|" * (len(READ_ATTRIBUTES) + 2)]
    for low, high in zip(bins, bins[1:], strict=False):
        inside = [row for row in rows if low <= row[key] < high]
        lines.append(f"| [{low}, {high}) | {len(inside)} | " + " | ".join(percent(inside, name) for name in READ_ATTRIBUTES) + " |")
    return [*lines, ""]


def best_threshold_accuracy(metal: np.ndarray, rubber: np.ndarray) -> float:
    """The accuracy of the best single threshold on one cue, metal on either side (0.5 = no better than chance)."""
    values = np.concatenate([metal, rubber])
    is_metal = np.concatenate([np.ones(len(metal), bool), np.zeros(len(rubber), bool)])
    best = 0.5
    for threshold in np.unique(values):
        right = float(np.mean((values >= threshold) == is_metal))
        best = max(best, right, 1.0 - right)
    return best


def cue_table(rows: list[dict]) -> list[str]:
    """Per shape, each cue's median in metal and in rubber objects and how well it alone separates them."""
    lines = ["single cues, metal vs rubber (median metal / median rubber; best one-threshold accuracy)", "",
             "| shape | " + " | ".join(CUES) + " |", "|" + "---|" * (len(CUES) + 1)]
    for shape in ("cube", "cylinder", "sphere"):
        cells = []
        for cue in CUES:
            metal = np.array([r["cues"][cue] for r in rows if r["cues"] and r["object"]["shape"] == shape and r["object"]["material"] == "metal"])
            rubber = np.array([r["cues"][cue] for r in rows if r["cues"] and r["object"]["shape"] == shape and r["object"]["material"] == "rubber"])
            if len(metal) and len(rubber):
                cells.append(f"{np.median(metal):.3f} / {np.median(rubber):.3f}; {100 * best_threshold_accuracy(metal, rubber):.1f} %")
            else:
                cells.append("–")
        lines.append(f"| {shape} | " + " | ".join(cells) + " |")
    return [*lines, ""]


def confusions(rows: list[dict], top: int = 12) -> list[str]:
    pairs: Counter = Counter()
    for row in rows:
        for name in READ_ATTRIBUTES:
            if row["values"] is None:
                pairs[(name, row["object"][name], "unreadable", row["object"]["shape"])] += 1
            elif not correct(row, name):
                pairs[(name, row["object"][name], row["values"][name], row["object"]["shape"])] += 1
    if not pairs:
        return ["confusion pairs: none", ""]
    return ["confusion pairs (attribute: recorded -> read, on shape: count): "
            + "; ".join(f"{name}: {was} -> {seen} on {shape}: {n}" for (name, was, seen, shape), n in pairs.most_common(top)), ""]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--folder", type=Path, action="append", required=True, help="a render folder to score (repeatable)")
    parser.add_argument("--min-visible-fraction", type=float, default=DEFAULT_MIN_VISIBLE_FRACTION,
                        help=f"the visible-fraction floor of the kept table; default {DEFAULT_MIN_VISIBLE_FRACTION}")
    parser.add_argument("--min-pixels", type=float, default=DEFAULT_MIN_PIXELS, help=f"the pixel floor (at 480x320) of the kept table; default {DEFAULT_MIN_PIXELS}")
    parser.add_argument("--calibration", type=Path, default=CALIBRATION_PATH,
                        help="the reader's calibration (benchmarks/legibility_fit.py --out); default the shipped one")
    args = parser.parse_args()
    for folder in args.folder:
        rows = scored_objects(folder, args.calibration)
        looks = sorted({int(json.loads((folder / 'scenes.json').read_text(encoding='utf-8'))['info']['render'].get('look', 1))})
        print(f"### {folder} (look {', '.join(map(str, looks))})", "", sep="\n")
        print("\n".join(cell_table(rows, "every object")))
        print("\n".join(binned_table(rows, "fraction", FRACTION_BINS, "visible fraction")))
        print("\n".join(binned_table(rows, "pixels_480", PIXEL_BINS, "visible pixels (480x320)")))
        print("\n".join(confusions(rows)))
        print("\n".join(cue_table(rows)))
        kept = [row for row in rows if row["fraction"] >= args.min_visible_fraction and row["pixels_480"] >= args.min_pixels]
        print("\n".join(cell_table(kept, f"objects the floors keep (visible fraction >= {args.min_visible_fraction}, "
                                         f">= {args.min_pixels:g} pixels at 480x320)")))
        print("\n".join(confusions(kept)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
