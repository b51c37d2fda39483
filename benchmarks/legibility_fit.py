"""Fit the legibility reader of one look on a render folder and store it in render/legibility_calibration.json.

    python benchmarks/legibility_fit.py --folder /tmp/look_3_fit --look 3

The folder must be rendered from seeds the bench does not score (docs/performance.md, "Legibility"
lists the seeds). The calibration file keeps the other looks' classifiers and records, per look, the
folder's seed, scene count and object count. ``--check`` prints the training accuracy too.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from render.legibility import CALIBRATION_PATH, READ_ATTRIBUTES, fit_classifier, folder_objects
from ruclevr.io import atomic_write_compact_json


def fitted_look(folder: Path, l2: float) -> tuple[dict, dict]:
    rows = [(scene, obj, features) for scene, obj, features in folder_objects(folder) if features is not None]
    features = np.stack([row[2] for row in rows])
    classifiers, accuracy = {}, {}
    for name in READ_ATTRIBUTES:
        labels = [str(obj[name]) for _, obj, _ in rows]
        classifier = fit_classifier(features, labels, l2=l2)
        seen = np.asarray(classifier.classes)[classifier.probabilities(features).argmax(axis=1)]
        accuracy[name] = float(np.mean(seen == np.asarray(labels)))
        classifiers[name] = classifier.to_dict()
    info = json.loads((folder / "scenes.json").read_text(encoding="utf-8"))["info"]
    source = {"seed": info.get("seed"), "scenes": len({row[0]["image_index"] for row in rows}), "objects": len(rows),
              "size": [info["render"]["width"], info["render"]["height"]], "training_accuracy": accuracy}
    return classifiers, source


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--folder", type=Path, required=True, help="a render folder (scenes.json, images/, masks/) of this look")
    parser.add_argument("--look", type=int, required=True, help="the look the folder was rendered with")
    parser.add_argument("--l2", type=float, default=1e-3, help="L2 penalty of the softmax regressions; default 1e-3")
    parser.add_argument("--out", type=Path, default=CALIBRATION_PATH, help="the calibration file to update")
    args = parser.parse_args()
    looks_in = {json.loads((args.folder / "scenes.json").read_text(encoding="utf-8"))["info"]["render"].get("look", 1)}
    if looks_in != {args.look}:
        parser.error(f"{args.folder} is rendered with look {looks_in}, not {args.look}")
    calibration = json.loads(args.out.read_text(encoding="utf-8")) if args.out.exists() else {"looks": {}, "fitted_on": {}}
    classifiers, source = fitted_look(args.folder, args.l2)
    calibration["looks"][str(args.look)] = classifiers
    calibration["fitted_on"][str(args.look)] = source
    atomic_write_compact_json(args.out, calibration)
    print(f"look {args.look}: fitted on {source['objects']} objects of {source['scenes']} scenes (seed {source['seed']}); "
          f"training accuracy {source['training_accuracy']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
