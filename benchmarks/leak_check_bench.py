"""leak-check's speed on a corpus of images, measured on a smaller corpus and extrapolated to 100,000.

A corpus of ``--images`` JPEG files (quality 75, 224 px wide, watermarked: the build's samples
degraded as ``tests/leak_corpus.py`` does, cycled) is written under ``--out``; then
``dataset.releases.leak_check`` indexes the build and scans the corpus folder, as the command does, and
the wall time per corpus image is reported. Matching a hash against the index grows with the
build's image count, so that part is timed apart against an index of ``--index-images`` random
hashes (100,000 by default: a CLEVR-sized build), in batches as the command matches them, and added
for the extrapolation:

    time(100,000 images) = 100,000 x (scan time per image + match time per image at that index size)

Peak resident memory is that of this process (the corpus is read one file at a time).

    python benchmarks/leak_check_bench.py --data DATA --images 2000 --out /tmp/leakbench
"""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

import numpy as np

from dataset.mera.document import SPLITS, stream_document
from dataset.releases.leak_check import BATCH, HASH_SIZE, BuildIndex, scan_images
from ruclevr.io import atomic_write_bytes
from tests.leak_corpus import degraded_jpeg


def write_corpus(data: Path, out: Path, count: int) -> list[Path]:
    document = stream_document(data)
    sources = sorted({document.image_path(item) for split in SPLITS for item in document.items(split)})
    degraded = [degraded_jpeg(path) for path in sources]
    files = []
    for number in range(count):
        target = out / f"{number // 1000:03d}" / f"corpus_{number:06d}.jpg"
        if not target.exists():
            atomic_write_bytes(target, degraded[number % len(degraded)])
        files.append(target)
    return files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="a build (its samples make the corpus)")
    parser.add_argument("--images", type=int, default=2000, help="corpus images measured (default 2000)")
    parser.add_argument("--index-images", type=int, default=100_000, help="index size for the match timing")
    parser.add_argument("--out", type=Path, required=True, help="folder for the corpus")
    args = parser.parse_args()

    files = write_corpus(args.data, args.out, args.images)
    started = time.perf_counter()
    index = BuildIndex.of(args.data)
    index_seconds = time.perf_counter() - started
    started = time.perf_counter()
    summary = scan_images(index, files)
    scan_seconds = time.perf_counter() - started
    per_image = scan_seconds / len(files)

    rng = np.random.default_rng(0)
    big = BuildIndex(image_names=[""] * args.index_images, image_items=[[]] * args.index_images,
                     hashes=rng.integers(0, 256, size=(args.index_images, HASH_SIZE * HASH_SIZE // 8), dtype=np.uint8))
    queries = rng.integers(0, 256, size=(4 * BATCH, HASH_SIZE * HASH_SIZE // 8), dtype=np.uint8)
    big.signs()  # built once per run, like the index
    started = time.perf_counter()
    for first in range(0, len(queries), BATCH):
        big.nearest_images(queries[first:first + BATCH])
    match_seconds = (time.perf_counter() - started) / len(queries)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10

    print(f"index of {len(index.image_names)} build images: {index_seconds:.2f} s")
    print(f"scan of {len(files)} corpus images: {scan_seconds:.2f} s, {1000 * per_image:.2f} ms an image; "
          f"{summary.image_hits} matched ({len(summary.images_found)} of {len(index.image_names)} build images)")
    print(f"match against {args.index_images} build images: {1000 * match_seconds:.2f} ms an image")
    print(f"extrapolated, 100,000 corpus images: {100_000 * per_image / 60:.1f} min against this build, "
          f"{100_000 * (per_image + match_seconds) / 60:.1f} min against a {args.index_images}-image build; "
          f"peak memory {peak:.0f} MB")


if __name__ == "__main__":
    main()
