"""Speed of the dataset stage's own steps, each next to a bare baseline measured in the same run.

    python benchmarks/dataset_export.py --scenes 200

Inputs are written in the documented formats (tests/sample_outputs.py) with render-sized PNGs
(480x320, gradient plus noise, about the size of a real render). Steps and their baselines:

- export (checks, shot draw, JSON Schema validation, images linked, MERA's shots.json, test.json, provenance.json) vs copying
  the same images and dumping the questions as JSON;
- Hugging Face copy (datasets parquet with embedded images + card + statistics) vs writing the
  same rows with bare pyarrow;
- evaluate (exact match per type + both blind baselines) vs lm-eval's NumPy exact_match alone on
  the same predictions (and the two must agree on the score).

Targets: export within 2x its baseline, the Hugging Face copy within 3x, evaluate within 10x.
"""

from __future__ import annotations

import argparse
import io
import json
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from sample_outputs import write_sample_stage_outputs  # noqa: E402

from dataset.evaluation.evaluate import evaluate  # noqa: E402
from dataset.mera.document import load_document  # noqa: E402
from dataset.mera.export import ExportSettings, export_dataset  # noqa: E402
from dataset.publish.hf import write_hf_copy  # noqa: E402
from ruclevr.io import read_json  # noqa: E402


def render_sized_png(index: int, width: int, height: int) -> bytes:
    rng = np.random.default_rng([0, index])
    gradient = np.linspace(60, 180, width, dtype=np.float32)[None, :, None]
    pixels = np.clip(gradient + rng.normal(0, 6, (height, width, 3)), 0, 255).astype(np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG")
    return buffer.getvalue()


def timed(function, *args, **kwargs) -> tuple[float, object]:
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return time.perf_counter() - start, result


def baseline_copy(paths: dict[str, Path], out: Path) -> None:
    questions = read_json(paths["questions"])["questions"]
    (out / "samples").mkdir(parents=True)
    for name in sorted({q["image_filename"] for q in questions}):
        shutil.copyfile(paths["images"] / name, out / "samples" / name)
    (out / "items.json").write_text(json.dumps(questions, ensure_ascii=False, indent=2), encoding="utf-8")


def baseline_pyarrow(document, out: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    (out / "data").mkdir(parents=True)
    for split in ("shots", "test"):
        items = document.items(split)
        table = pa.table({
            "instruction": [i["instruction"] for i in items],
            "image": [(document.folder / i["inputs"]["image"]).read_bytes() for i in items],
            "question": [i["inputs"]["question"] for i in items],
            "outputs": [i["outputs"] for i in items],
            "id": pa.array([i["meta"]["id"] for i in items], pa.int32()),
        })
        pq.write_table(table, out / "data" / f"{split}.parquet")


def lm_eval_exact_match(items, predictions) -> float:
    """lm-eval's exact_match (ignore_case, ignore_punctuation) as it computes it, on NumPy arrays."""
    import string

    references = np.asarray([i["outputs"] for i in items])
    guesses = np.asarray([predictions[i["meta"]["id"]] for i in items])
    table = string.punctuation.maketrans("", "", string.punctuation)
    references = np.char.translate(np.char.lower(references), table=table)
    guesses = np.char.translate(np.char.lower(guesses), table=table)
    return float(np.mean(guesses == references))


def varied_predictions(items) -> dict[int, str]:
    """Gold answers written as a model might: capitalised, with a full stop, some with a leading space."""
    return {i["meta"]["id"]: (" " if k % 7 == 0 else "") + i["outputs"].capitalize() + "." for k, i in enumerate(items)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenes", type=int, default=200, help="scenes (7 questions each); default 200")
    parser.add_argument("--width", type=int, default=480)
    parser.add_argument("--height", type=int, default=320)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        paths = write_sample_stage_outputs(root / "in", n_scenes=args.scenes)
        for image in paths["images"].iterdir():
            image.write_bytes(render_sized_png(int(image.stem.split("_")[1]), args.width, args.height))
        image_mb = sum(p.stat().st_size for p in paths["images"].iterdir()) / 1e6

        t_copy, _ = timed(baseline_copy, paths, root / "copy")
        t_export, _ = timed(export_dataset, paths["questions"], paths["scenes"], root / "mera", ExportSettings(shots=10))
        document = load_document(root / "mera")
        n_items = sum(len(document.items(s)) for s in ("shots", "test"))
        t_arrow, _ = timed(baseline_pyarrow, document, root / "arrow")
        t_hf, _ = timed(write_hf_copy, document, root / "hf")
        test = document.items("test")
        predictions = varied_predictions(test)
        t_compare, reference_score = timed(lm_eval_exact_match, test, predictions)
        t_eval, result = timed(evaluate, document, "test", predictions)
        # The same figure as lm-eval's own computation, or the comparison would be meaningless.
        assert result["predictions"]["overall"]["exact_match"] == reference_score, (result, reference_score)
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    print(f"{args.scenes} scenes, {n_items} items, {image_mb:.1f} MB of PNG ({args.width}x{args.height})")
    print(f"{'step':<22}{'seconds':>9}{'baseline s':>12}{'ratio':>8}")
    for name, ours, base in (("export", t_export, t_copy), ("hf copy", t_hf, t_arrow), ("evaluate", t_eval, t_compare)):
        print(f"{name:<22}{ours:>9.3f}{base:>12.3f}{ours / base:>8.2f}")
    print(f"peak RSS {peak_mb:.0f} MB")


if __name__ == "__main__":
    main()
