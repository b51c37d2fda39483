"""``python -m dataset leak-check --data DATA --corpus PATH...``: find a build's items in other data.

The build's items are indexed first (question texts exactly and normalised, and a perceptual hash
of every image); then the corpus is read one file at a time, one record at a time, so memory is
the index's whatever the corpus's size:

- image files (``.png .jpg .jpeg .webp .bmp``) anywhere under a corpus folder;
- ``.jsonl``, ``.json`` and ``.parquet`` files: every record (object) with a question text
  (key ``question``, ``question_ru`` or ``text``, found up to three levels down, e.g. MERA's
  ``inputs.question``) and/or an image (key ``image``, ``image_path`` or ``file_name``: a path
  relative to the file's folder, never outside it, or ``{"bytes": ...}`` as in a Hugging Face
  parquet file); a ``.json`` larger than 16 MB is streamed item by item (``[...]`` or ``{"data": [...]}``, nested
  at most 64 deep, strings and ``.jsonl`` lines at most 64 MiB);
- ``.txt`` files: each line a question text.

Matches:

- **item**: a record whose question matches an item's (exactly, or after normalising: case, ё/е,
  punctuation and spacing) and whose image is that item's image;
- **image**: an image (a file, or a record's image) whose perceptual hash is within
  ``--max-distance`` bits of a build image's (DCT pHash of 256 bits, the algorithm of
  ``imagehash.phash(hash_size=16)`` in NumPy: survives resizing, JPEG re-encoding and the public
  copy's watermark);
- **text only** (weak, counted, shown with ``--show-text-only``): a question text of the build with
  no image or another image. Generated questions repeat across sets (another seed asks many of
  the same questions about other scenes), so a text alone is no evidence of a leak.

One line per item and image match, then a summary; exit status 1 when anything matched, else 0.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import time
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from ruclevr.cli import UsageError, add_common_options, non_negative_int, stage_logger
from ruclevr.jsonlimits import MAX_ITEM_BYTES, JsonLimitError

log = stage_logger("dataset")
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp", ".bmp")
TEXT_SUFFIXES = (".jsonl", ".json", ".parquet", ".txt")
QUESTION_KEYS = ("question", "question_ru", "text")
IMAGE_KEYS = ("image", "image_path", "file_name")
HASH_SIZE = 16  # 16 x 16 DCT coefficients: 256 bits
DEFAULT_MAX_DISTANCE = 40  # bits of 256; measured: planted copies <= 24, other scenes >= 72 (docs/releases.md)
STREAM_JSON_BYTES = 16 * 2**20  # a larger .json is read item by item (a parsed file takes many times its size)
BATCH = 128  # corpus images matched together (one matrix product against the index)
_PUNCTUATION = re.compile(r"[^\w\s]")


def normalise(text: str) -> str:
    """Case, ё/е, punctuation and spacing made alike: what re-typing or re-formatting a question changes."""
    text = unicodedata.normalize("NFKC", text).casefold().replace("ё", "е")
    return " ".join(_PUNCTUATION.sub(" ", text).split())


@lru_cache(maxsize=1)
def dct_matrix(size: int = 4 * HASH_SIZE) -> np.ndarray:
    """DCT-II (unnormalised, as ``scipy.fftpack.dct``): ``y[k] = 2 sum_n x[n] cos(pi k (2n + 1) / 2N)``."""
    k, n = np.meshgrid(np.arange(size), np.arange(size), indexing="ij")
    return 2 * np.cos(np.pi * k * (2 * n + 1) / (2 * size))


def image_hash(image: Image.Image) -> np.ndarray:
    """The image's 256-bit DCT perceptual hash, as 32 bytes: ``imagehash.phash(image, hash_size=16)``'s
    algorithm (grey, 64 x 64 Lanczos, 2-D DCT, the 16 x 16 lowest frequencies against their median)."""
    side = 4 * HASH_SIZE
    if image.format == "JPEG":
        image.draft("L", (2 * side, 2 * side))  # decode JPEGs at a reduced size: much faster
    pixels = np.asarray(image.convert("L").resize((side, side), Image.Resampling.LANCZOS), dtype=np.float64)
    transform = dct_matrix(side)
    low = (transform @ pixels @ transform.T)[:HASH_SIZE, :HASH_SIZE]
    return np.packbits((low > np.median(low)).ravel())


def hash_image_bytes(data: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(data)) as image:
        return image_hash(image)


def hash_image_file(path: Path) -> np.ndarray:
    with Image.open(path) as image:
        return image_hash(image)


@dataclass
class BuildIndex:
    """A build's items: question texts (exact and normalised) and image hashes, each to item ids."""

    exact: dict[str, set[int]] = field(default_factory=dict)
    normalised: dict[str, set[int]] = field(default_factory=dict)
    image_names: list[str] = field(default_factory=list)
    image_items: list[list[int]] = field(default_factory=list)
    hashes: np.ndarray = field(default_factory=lambda: np.zeros((0, HASH_SIZE * HASH_SIZE // 8), dtype=np.uint8))
    items: int = 0

    @classmethod
    def of(cls, data: Path) -> BuildIndex:
        from dataset.mera import SPLITS, stream_document

        document = stream_document(data)
        index = cls()
        positions: dict[str, int] = {}
        hashes: list[np.ndarray] = []
        for split in SPLITS:
            for item in document.items(split):
                item_id = int(item["meta"]["id"])
                question = str(item["inputs"]["question"])
                index.exact.setdefault(question, set()).add(item_id)
                index.normalised.setdefault(normalise(question), set()).add(item_id)
                relative = item["inputs"]["image"]
                if relative not in positions:
                    positions[relative] = len(index.image_names)
                    index.image_names.append(relative)
                    index.image_items.append([])
                    hashes.append(hash_image_file(document.image_path(item)))
                index.image_items[positions[relative]].append(item_id)
                index.items += 1
        if hashes:
            index.hashes = np.stack(hashes)
        return index

    _signs: np.ndarray | None = field(default=None, repr=False, compare=False)

    def signs(self) -> np.ndarray:
        """The hashes' bits as +-1 (images x 256, float32): Hamming distances become one matrix product."""
        if self._signs is None or len(self._signs) != len(self.hashes):
            self._signs = np.unpackbits(self.hashes, axis=1).astype(np.float32) * 2 - 1
        return self._signs

    def nearest_images(self, hashed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per row of ``hashed`` (queries x 32 bytes), the nearest build image and its Hamming distance
        (-1 and a large distance when the build has no images)."""
        if not len(self.hashes):
            return np.full(len(hashed), -1), np.full(len(hashed), 1 << 30)
        queries = np.unpackbits(hashed, axis=1).astype(np.float32) * 2 - 1
        distances = (queries.shape[1] - queries @ self.signs().T) / 2  # agreeing bits add 1, differing -1
        positions = distances.argmin(axis=1)
        return positions, np.rint(distances[np.arange(len(hashed)), positions]).astype(np.int64)

    def nearest_image(self, hashed: np.ndarray) -> tuple[int, int]:
        positions, distances = self.nearest_images(hashed[None, :])
        return int(positions[0]), int(distances[0])

    def question_items(self, text: str) -> tuple[str, set[int]]:
        if text in self.exact:
            return "exact", self.exact[text]
        return "normalised", self.normalised.get(normalise(text), set())


@dataclass
class Record:
    where: str
    question: str | None
    image: bytes | Path | None


@dataclass
class Summary:
    files: int = 0
    records: int = 0
    images: int = 0
    unreadable: int = 0
    item_hits: int = 0
    image_hits: int = 0
    text_only: int = 0
    items_found: set[int] = field(default_factory=set)
    images_found: set[int] = field(default_factory=set)


def corpus_files(paths: Sequence[Path]) -> Iterator[Path]:
    """Every image and text file under ``paths``, in a fixed order (folders walked, not listed whole)."""
    for path in paths:
        if path.is_file():
            yield path
            continue
        if not path.is_dir():
            raise UsageError(f"--corpus {path} " + ("is not a regular file or a folder" if path.exists() else "does not exist"))
        for folder, dirs, names in os.walk(path):
            dirs.sort()
            for name in sorted(names):  # regular files only: a FIFO would wait for a writer forever
                if name.lower().endswith(IMAGE_SUFFIXES + TEXT_SUFFIXES) and (Path(folder) / name).is_file():
                    yield Path(folder) / name


def find_value(record: Mapping[str, Any], keys: Sequence[str], depth: int = 3) -> Any:
    for key in keys:
        if key in record:
            return record[key]
    if depth > 1:
        for value in record.values():
            if isinstance(value, Mapping):
                found = find_value(value, keys, depth - 1)
                if found is not None:
                    return found
    return None


def record_of(obj: Mapping[str, Any], where: str, folder: Path) -> Record | None:
    question = find_value(obj, QUESTION_KEYS)
    image: Any = find_value(obj, IMAGE_KEYS)
    if isinstance(image, Mapping):
        image = image.get("bytes") or image.get("path")
    if isinstance(image, str) and image:
        resolved = (folder / image).resolve()
        image = resolved if resolved.is_relative_to(folder.resolve()) else None  # never outside the file's folder
    if not isinstance(image, (bytes, Path)):
        image = None
    question = question if isinstance(question, str) and question else None
    return Record(where, question, image) if question or image is not None else None


def json_records(obj: Any, where: str, folder: Path) -> Iterator[Record]:
    """Records in a parsed JSON value: each object with a question or image, else its members."""
    if isinstance(obj, Mapping):
        record = record_of(obj, where, folder)
        if record is not None:
            yield record
            return
        for key, value in obj.items():
            yield from json_records(value, f"{where}.{key}", folder)
    elif isinstance(obj, list):
        for position, value in enumerate(obj):
            yield from json_records(value, f"{where}[{position}]", folder)


def file_records(path: Path) -> Iterator[Record]:
    import orjson

    suffix, folder = path.suffix.lower(), path.parent
    if suffix == ".txt":
        with open(path, encoding="utf-8", errors="replace") as handle:
            for number, line in enumerate(handle, 1):
                if line.strip():
                    yield Record(f"{path}:{number}", line.rstrip("\n"), None)
    elif suffix == ".jsonl":
        with open(path, "rb") as binary:
            number = 0
            while raw := binary.readline(MAX_ITEM_BYTES + 1):
                number += 1
                if len(raw) > MAX_ITEM_BYTES:
                    raise JsonLimitError(f"line {number} is longer than the limit of {MAX_ITEM_BYTES} bytes")
                if raw.strip():
                    yield from json_records(orjson.loads(raw), f"{path}:{number}", folder)
    elif suffix == ".json" and path.stat().st_size <= STREAM_JSON_BYTES:
        yield from json_records(orjson.loads(path.read_bytes()), str(path), folder)
    elif suffix == ".json":
        from ruclevr.jsonincremental import top_list_items

        with open(path, "rb") as handle:  # depth and strings held to the limits as read
            for position, obj in enumerate(top_list_items(handle)):
                yield from json_records(obj, f"{path}[{position}]", folder)
    elif suffix == ".parquet":
        import pyarrow.parquet as pq

        row = 0
        for batch in pq.ParquetFile(path).iter_batches(batch_size=256):
            for obj in batch.to_pylist():
                yield from json_records(obj, f"{path}#{row}", folder)
                row += 1


class LeakCheck:
    """The corpus against one build's index, a line per match written to ``out``. Images are hashed
    as they are read and matched :data:`BATCH` at a time; lines keep the corpus's order."""

    def __init__(self, index: BuildIndex, max_distance: int, show_text_only: bool, out: Any) -> None:
        self.index = index
        self.max_distance = max_distance
        self.show_text_only = show_text_only
        self.out = out
        self.summary = Summary()
        self.pending: list[tuple[str, Record, np.ndarray | None]] = []  # (where, record, its image's hash)
        self.hashed = 0

    def hash_of(self, image: bytes | Path) -> np.ndarray | None:
        try:
            hashed = hash_image_bytes(image) if isinstance(image, bytes) else hash_image_file(image)
        except (OSError, ValueError, SyntaxError, Image.DecompressionBombError, Image.DecompressionBombWarning):
            self.summary.unreadable += 1
            return None
        self.summary.images += 1
        return hashed

    def add(self, record: Record, is_file: bool = False) -> None:
        hashed = self.hash_of(record.image) if record.image is not None else None
        self.pending.append(("file" if is_file else "record", record, hashed))
        self.hashed += hashed is not None
        if self.hashed >= BATCH:
            self.flush()

    def flush(self) -> None:
        hashes = [hashed for _, _, hashed in self.pending if hashed is not None]
        found = iter(zip(*self.index.nearest_images(np.stack(hashes)), strict=True)) if hashes else iter(())
        for kind, record, hashed in self.pending:
            match = None
            if hashed is not None:
                position, distance = next(found)
                match = (int(position), int(distance)) if distance <= self.max_distance else None
            if kind == "file":
                if match is not None:
                    self.report_image(record.where, *match)
            else:
                self.report_record(record, match)
        self.pending, self.hashed = [], 0

    def report_image(self, where: str, position: int, distance: int) -> None:
        items = self.index.image_items[position]
        self.summary.image_hits += 1
        self.summary.images_found.add(position)
        self.summary.items_found.update(items)
        print(f"image {where}: {self.index.image_names[position]} (distance {distance}), items "
              f"{', '.join(map(str, items))}", file=self.out)

    def report_record(self, record: Record, found: tuple[int, int] | None) -> None:
        self.summary.records += 1
        how, ids = self.index.question_items(record.question) if record.question else ("", set())
        if found is not None:
            position, distance = found
            same = sorted(ids.intersection(self.index.image_items[position]))
            if same:
                self.summary.item_hits += 1
                self.summary.images_found.add(position)
                self.summary.items_found.update(same)
                print(f"item {record.where}: question ({how}) and image ({self.index.image_names[position]}, "
                      f"distance {distance}) of item {', '.join(map(str, same))}", file=self.out)
                return
            self.report_image(record.where, position, distance)
            return
        if ids:
            self.summary.text_only += 1
            if self.show_text_only:
                print(f"text only {record.where}: question ({how}) of items {', '.join(map(str, sorted(ids)[:10]))}"
                      f"{' ...' if len(ids) > 10 else ''}", file=self.out)

    def run(self, paths: Sequence[Path]) -> Summary:
        for path in corpus_files(paths):
            self.summary.files += 1
            if path.suffix.lower() in IMAGE_SUFFIXES:
                self.add(Record(str(path), None, path), is_file=True)
                continue
            try:
                for record in file_records(path):
                    self.add(record)
            except (ValueError, OSError) as error:  # one bad corpus file is reported, the rest still read
                self.summary.unreadable += 1
                log.warning(f"leak-check: {path}: not read ({str(error).splitlines()[0][:200]})")
        self.flush()
        return self.summary


def format_summary(index: BuildIndex, summary: Summary, seconds: float) -> str:
    return (f"leak-check: {summary.item_hits} item matches, {summary.image_hits} image matches "
            f"({len(summary.items_found)} of {index.items} items and {len(summary.images_found)} of "
            f"{len(index.image_names)} images found); {summary.text_only} text-only question matches (not "
            f"evidence alone); read {summary.files} files, {summary.records} records, {summary.images} images "
            f"({summary.unreadable} unreadable) in {seconds:.1f} s")


def add_leak_check_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "leak-check", help="look for a build's items (question texts, images) in other data",
        description="Find a build's items in a corpus of JSON/JSONL/parquet/text files and folders of images: question "
                    "texts matched exactly and normalised (case, spacing, punctuation, ё), images by a perceptual hash "
                    "that survives resizing, JPEG and the watermark. One line per match and a summary; exit status 1 "
                    "when anything matched.")
    add_common_options(parser)
    parser.add_argument("--data", type=Path, required=True, help="the build (or its export folder) to look for")
    parser.add_argument("--corpus", type=Path, nargs="+", required=True, metavar="PATH",
                        help="files and folders to search (read one file and one record at a time)")
    parser.add_argument("--max-distance", type=non_negative_int, default=DEFAULT_MAX_DISTANCE,
                        help=f"most differing bits (of 256) for an image to match; default {DEFAULT_MAX_DISTANCE}")
    parser.add_argument("--show-text-only", action="store_true",
                        help="also a line for each question text found without its image (weak: questions repeat)")


def command_leak_check(args: argparse.Namespace, out: Any = None) -> int:
    import sys

    started = time.monotonic()
    index = BuildIndex.of(args.data)
    check = LeakCheck(index, args.max_distance, args.show_text_only, out or sys.stdout)
    summary = check.run(args.corpus)
    print(format_summary(index, summary, time.monotonic() - started), file=out or sys.stdout)
    return 1 if summary.item_hits or summary.image_hits else 0


def scan_images(index: BuildIndex, images: Iterable[Path], max_distance: int = DEFAULT_MAX_DISTANCE) -> Summary:
    """Images alone against the index (the benchmark's entry point)."""
    check = LeakCheck(index, max_distance, False, io.StringIO())
    for path in images:
        check.add(Record(str(path), None, path), is_file=True)
    check.flush()
    return check.summary
