"""Fit the legibility reader on render folders and write render/legibility_calibration.json.

    python benchmarks/legibility_fit.py --fit 2:/tmp/look_2_fit --fit 3:/tmp/look_3_fit [--fit 2:/tmp/look_2_fit_480]

Each ``--fit LOOK:FOLDER`` is a render folder of that look, rendered from seeds the bench does not
score (docs/performance.md, "Legibility", lists them). Colour and material are fitted per look on
that look's folders; shape and size on every folder (the silhouette does not change with the look,
and more examples of it read better). Every frame is used twice, as it is and mirrored left to
right (no attribute changes in a mirror). The file records what each part was fitted on.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from render.legibility import CALIBRATION_PATH, FEATURE_NAMES, READ_ATTRIBUTES, fit_classifier, folder_objects
from ruclevr.io import atomic_write_compact_json

PER_LOOK = ("color", "material")
SHARED = ("shape", "size")


def readable_rows(folder: Path) -> list[tuple[dict, dict, np.ndarray]]:
    """Every readable object of ``folder``, as it is and mirrored: (scene, object, features)."""
    return [(scene, obj, features) for mirrored in (False, True)
            for scene, obj, features in folder_objects(folder, mirrored) if features is not None]  # type: ignore[misc]


def fitted(rows: list, names: tuple[str, ...], hidden: int, l2: float) -> tuple[dict, dict]:
    features = np.stack([row[2] for row in rows])
    classifiers, accuracy = {}, {}
    for name in names:
        labels = [str(obj[name]) for _, obj, _ in rows]
        classifier = fit_classifier(features, labels, READ_ATTRIBUTES.index(name), hidden=hidden, l2=l2)
        seen = np.asarray(classifier.classes)[classifier.probabilities(features).argmax(axis=1)]
        accuracy[name] = round(float(np.mean(seen == np.asarray(labels))), 4)
        classifiers[name] = classifier.to_dict()
    return classifiers, {"objects": len(rows) // 2, "training_accuracy": accuracy}


def folder_record(folder: Path) -> dict:
    info = json.loads((folder / "scenes.json").read_text(encoding="utf-8"))["info"]
    return {"folder": folder.name, "seed": info.get("seed"), "size": [info["render"]["width"], info["render"]["height"]],
            "look": info["render"].get("look", 1)}


def parse_fit(value: str) -> tuple[int, Path]:
    look, _, folder = value.partition(":")
    if not look.isdigit() or not folder:
        raise argparse.ArgumentTypeError(f"--fit {value!r} must look like LOOK:FOLDER, e.g. 3:/tmp/look_3_fit")
    return int(look), Path(folder)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fit", type=parse_fit, action="append", required=True, help="LOOK:FOLDER, a render folder of that look (repeatable)")
    parser.add_argument("--hidden", type=int, default=16, help="hidden units of each classifier; default 16")
    parser.add_argument("--l2", type=float, default=1e-3, help="L2 penalty; default 1e-3")
    parser.add_argument("--out", type=Path, default=CALIBRATION_PATH, help="the calibration file to write")
    args = parser.parse_args()
    rows_by_look: dict[int, list] = {}
    for look, folder in args.fit:
        recorded = folder_record(folder)["look"]
        if recorded != look:
            parser.error(f"{folder} is rendered with look {recorded}, not {look}")
        rows_by_look.setdefault(look, []).extend(readable_rows(folder))
    shared, shared_source = fitted([row for rows in rows_by_look.values() for row in rows], SHARED, args.hidden, args.l2)
    calibration: dict = {"features": list(FEATURE_NAMES), "shared": shared, "looks": {}, "fitted_on": {"folders": [folder_record(f) for _, f in args.fit],
                                                                      "hidden": args.hidden, "l2": args.l2, "shared": shared_source}}
    for look, rows in sorted(rows_by_look.items()):
        calibration["looks"][str(look)], calibration["fitted_on"][f"look {look}"] = fitted(rows, PER_LOOK, args.hidden, args.l2)
    atomic_write_compact_json(args.out, calibration)
    print(json.dumps(calibration["fitted_on"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
