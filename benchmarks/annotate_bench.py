"""Speed and size of ``dataset annotate``, each step next to a bare baseline measured in the same run.

    python benchmarks/annotate_bench.py --scenes 300 --annotators 5

An export of render-sized PNGs (as benchmarks/dataset_export.py makes them; 7 questions per
image) is annotated by simulated annotators (gold answers, one in ten wrong):

- export (controls, seeded order and assignments, images linked, Label Studio files, crowd TSV,
  the self-contained page with each image embedded once) vs the irreducible work of such a page:
  linking the images and base64-encoding each of them once into one file; and the page's size
  next to the images' size;
- import (reading the crowd TSV, normalising, majorities, baseline, Krippendorff's alpha,
  controls, disputed items and their page, human.json) vs reading the same TSV with csv and
  taking a Counter majority per item; peak Python memory (tracemalloc) of both.
"""

from __future__ import annotations

import argparse
import base64
import csv
import os
import sys
import tempfile
import time
import tracemalloc
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from dataset_export import render_sized_png  # noqa: E402
from sample_outputs import write_sample_stage_outputs  # noqa: E402

from dataset.annotate.answers import read_answers  # noqa: E402
from dataset.annotate.report import ImportSettings, import_answers  # noqa: E402
from dataset.annotate.tasks import ExportSettings as TaskSettings  # noqa: E402
from dataset.annotate.tasks import export_tasks  # noqa: E402
from dataset.mera.document import load_document  # noqa: E402
from dataset.mera.export import ExportSettings, export_dataset  # noqa: E402


def measured(function, *args, **kwargs) -> tuple[float, float, object]:
    """Seconds and peak traced MB of one call."""
    tracemalloc.start()
    start = time.perf_counter()
    result = function(*args, **kwargs)
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    return seconds, peak, result


def baseline_page(document, out: Path) -> None:
    """Link every image and write each one base64-encoded once into a single file."""
    (out / "images").mkdir(parents=True)
    names = dict.fromkeys(item["inputs"]["image"] for split in ("shots", "test") for item in document.items(split))
    with open(out / "page.html", "w", encoding="ascii") as page:
        for name in names:
            source = document.folder / name
            os.link(source, out / "images" / Path(name).name)
            page.write(base64.b64encode(source.read_bytes()).decode("ascii"))


def write_crowd(document, path: Path, annotators: int) -> int:
    rows = 0
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(["task_id", "annotator", "answer"])
        for annotator in range(annotators):
            rng = np.random.default_rng([0, annotator])
            for split in ("shots", "test"):
                for item in document.items(split):
                    answer = item["outputs"] if rng.random() >= 0.1 else "999"
                    writer.writerow([item["meta"]["id"], f"w{annotator}", answer])
                    rows += 1
    return rows


def baseline_majority(path: Path) -> dict[int, str]:
    answers: dict[int, Counter[str]] = {}
    with open(path, encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            answers.setdefault(int(row["task_id"]), Counter())[row["answer"].strip().lower()] += 1
    return {item_id: counts.most_common(1)[0][0] for item_id, counts in answers.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenes", type=int, default=300, help="images (7 questions each); default 300")
    parser.add_argument("--annotators", type=int, default=5, help="simulated annotators answering everything; default 5")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        paths = write_sample_stage_outputs(root / "in", n_scenes=args.scenes)
        for image in paths["images"].iterdir():
            image.write_bytes(render_sized_png(int(image.stem.split("_")[1]), 480, 320))
        export_dataset(paths["questions"], paths["scenes"], root / "mera", ExportSettings(shots=10))
        document = load_document(root / "mera")
        n_test = len(document.items("test"))

        t_base, m_base, _ = measured(baseline_page, document, root / "baseline")
        settings = TaskSettings(overlap=args.annotators, controls=10)
        t_export, m_export, _ = measured(export_tasks, document, root / "tasks", settings)
        page_mb = (root / "tasks" / "annotate.html").stat().st_size / 1e6
        images_mb = sum(p.stat().st_size for p in (root / "tasks" / "images").iterdir()) / 1e6

        rows = write_crowd(document, root / "crowd.tsv", args.annotators)
        t_count, m_count, _ = measured(baseline_majority, root / "crowd.tsv")

        def full_import():
            return import_answers(document, read_answers([root / "crowd.tsv"]), root / "report", ImportSettings())

        t_import, m_import, report = measured(full_import)

    print(f"{args.scenes} images, {n_test} test items, {args.annotators} annotators, {rows} answers")
    print(f"export: {t_export:.2f} s (peak {m_export:.1f} MB) vs link + base64 once: {t_base:.2f} s "
          f"(peak {m_base:.1f} MB) -> {t_export / t_base:.2f}x")
    print(f"page: {page_mb:.1f} MB for {images_mb:.1f} MB of images ({page_mb / images_mb:.3f}x)")
    print(f"import: {t_import:.2f} s (peak {m_import:.1f} MB) vs csv + Counter majority: {t_count:.2f} s "
          f"(peak {m_count:.1f} MB) -> {t_import / t_count:.2f}x; "
          f"plurality exact match {report['aggregated_baseline']['overall']['exact_match']:.4f}, "
          f"alpha {report['agreement']['krippendorff_alpha']['overall']:.4f}")


if __name__ == "__main__":
    main()
