"""What the public copy's watermark does to the objects of rendered scenes.

For every scene of a render folder (``images/``, ``masks/``, ``scenes.json``), the watermark is
applied as ``dataset hf --public-out`` applies it, and per object the mean absolute RGB
difference between the marked and the clean image inside the object's mask is measured (0-255):
how many objects it touches at all, their mean, 95th percentile and largest difference. A
legibility reader (``--reader module:function``, called as ``reader(clean, marked, mask, scene)``
and returning one result per object; see ``dataset.publish.watermark.Reader``) is run on the same pairs
when given, and its results summarised as the share of truthy results.

    python benchmarks/watermark_effect.py --render /tmp/render480 [--opacity 0.35 --position bottom-right]
"""

from __future__ import annotations

import argparse
import importlib
import json
from pathlib import Path

from dataset.publish.watermark import DEFAULT_OPACITY, DEFAULT_SCALE, POSITIONS, WatermarkSettings, measure_images


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--render", type=Path, required=True, help="a render folder (images/, masks/, scenes.json)")
    parser.add_argument("--position", choices=POSITIONS, default="bottom-right")
    parser.add_argument("--opacity", type=float, nargs="+", default=[DEFAULT_OPACITY])
    parser.add_argument("--scale", type=float, default=DEFAULT_SCALE)
    parser.add_argument("--reader", default="dataset.publish.watermark:reads_as_clean",
                        help="module:function of a legibility reader (default: the legibility reader, render/legibility.py, "
                             "reading the marked image as the clean one); 'none' for none")
    args = parser.parse_args()

    scenes = json.loads((args.render / "scenes.json").read_text())["scenes"]
    reader = None
    if args.reader and args.reader != "none":
        module, name = args.reader.split(":")
        reader = getattr(importlib.import_module(module), name)
    for opacity in args.opacity:
        settings = WatermarkSettings(position=args.position, opacity=opacity, scale=args.scale)
        result = measure_images(scenes, args.render / "images", args.render / "masks", settings, reader)
        read = result.pop("reader")
        line = (f"opacity {opacity} {args.position} scale {args.scale}: {result['objects']} objects in {len(scenes)} scenes, "
                f"{result['touched']} touched; per-object mean difference {result['mean']:.3f}, p95 {result['p95']:.3f}, "
                f"max {result['max']:.3f}, mean over touched {result['mean_of_touched']:.3f} (0-255)")
        if read is not None:
            line += f"; reader: {sum(bool(r) for r in read)} of {len(read)} objects read as in the clean image"
        print(line)


if __name__ == "__main__":
    main()
