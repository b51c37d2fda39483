"""The Hugging Face copy: one parquet file per split with declared features, and a README card.

Output folder::

    HF/README.md                          the card (YAML dataset_info + configs, then prose)
    HF/data/shots-00000-of-00001.parquet
    HF/data/test-00000-of-00003.parquet ... test-00002-of-00003.parquet   (files of at most ~500 MB)

``datasets`` loads a split's files as one split (the card's ``configs`` name ``data/SPLIT-*``);
the card's ``dataset_info`` sums them.

``inputs.image`` is an ``Image(decode=False)`` feature holding the PNG itself:
``{"bytes": <PNG bytes>, "path": "samples/<image>.png"}``. The bytes make the copy
self-contained (``datasets.load_dataset(HF)`` works offline with no other folder); the path is
the same relative path as in the MERA items, so the two copies name images alike.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import islice
from pathlib import Path
from typing import Any

from tqdm import tqdm

from dataset.evaluation import AnswerCounts
from dataset.mera import (
    SPLITS,
    Document,
    RecentlySeen,
    StatisticsTally,
    check_image_file,
    mera_rules,
    smallest_image_sides,
)
from dataset.publish.card import CardFacts, card_context, missing_card_fields, render_card
from dataset.publish.features import parquet_schema
from dataset.publish.plots import PlotTally, item_row
from ruclevr.cli import UsageError, progress_disabled
from ruclevr.io import TMP_SUFFIX, atomic_write_text, remove_stale_temporaries, rename_in_order

CARD_NAME = "README.md"
DATA_DIR = "data"
# Small row groups keep the Hub viewer and streaming light (datasets 2.x wrote image data 100 rows a group).
ROWS_PER_GROUP = 100
#: A split's parquet file is closed at this size and the next one begun (the Hub's own files are at most ~500 MB).
MAX_FILE_BYTES = 500 * 1000 * 1000
#: ... or once it holds this many row groups: the writer keeps every group's record (about 22 KB in
#: memory with its column statistics) until the file is closed, which bounds them at ~225 MB when
#: images are tiny (real renders reach 500 MB first).
MAX_FILE_GROUPS = 10_000
_LICENSE_ID = re.compile(r"^[a-z0-9][a-z0-9.\-]*$")


def parquet_name(split: str, index: int = 0, count: int = 1) -> str:
    return f"{DATA_DIR}/{split}-{index:05d}-of-{count:05d}.parquet"


def check_license(license_id: str) -> str:
    if not _LICENSE_ID.match(license_id):
        raise UsageError(f"--license {license_id!r} is not a Hugging Face licence id such as cc-by-4.0 or apache-2.0")
    return license_id


MAX_CONTACT_CHARS = 200


def check_contact(contact: str | None) -> str | None:
    """A card's contact (who maintains this copy): one non-empty line of at most :data:`MAX_CONTACT_CHARS`."""
    if contact is None:
        return None
    contact = contact.strip()
    if not contact or not contact.isprintable() or len(contact) > MAX_CONTACT_CHARS:
        raise UsageError(f"--contact must be one non-empty line of printable characters, at most {MAX_CONTACT_CHARS} "
                         "(e.g. a name and an e-mail address or an issue tracker's address)")
    return contact


def hf_rows(document: Document, items: Sequence[Mapping[str, Any]], images: dict[str, bytes],
            transform: Callable[[bytes], bytes] | None = None) -> list[dict[str, Any]]:
    """MERA items with the image file's bytes beside its relative path (``images`` caches the bytes);
    ``transform`` changes each image's bytes (the public copy's watermark)."""
    rows = []
    for item in items:
        relative = item["inputs"]["image"]
        if relative not in images:
            data = document.image_path(item).read_bytes()
            images[relative] = transform(data) if transform is not None else data
        rows.append({**item, "inputs": {**item["inputs"], "image": {"bytes": images[relative], "path": relative}}})
    return rows


class ExportSurvey:
    """Everything the copy's card says of an export, gathered in one pass over its items (see
    :func:`check_hf_inputs`): statistics, the plots' counts, the answers the blind baselines are
    fitted on, the card's facts. Counters bounded by the vocabulary, families and settings, and
    one entry per distinct image (its object count); nothing is kept per item."""

    def __init__(self, info: Mapping[str, Any]) -> None:
        self.statistics = StatisticsTally()
        self.plots = PlotTally()
        self.test_answers = AnswerCounts()
        self.card = CardFacts(info)

    def add(self, split: str, item: Mapping[str, Any], record: Mapping[str, Any]) -> None:
        self.statistics.add(split, item, record)
        self.plots.add(item_row(item, record))
        if split == "test":
            self.test_answers.add(item, record)
        self.card.add(split, item, record)

    def items(self, split: str) -> int:
        return self.statistics.splits[split].items


def _groups(items: Iterable[dict[str, Any]], size: int) -> Iterator[list[dict[str, Any]]]:
    """``items`` in lists of ``size`` (the last one shorter), read as they are needed."""
    iterator = iter(items)
    while group := list(islice(iterator, size)):
        yield group


def write_split(
    document: Document, split: str, out_dir: Path, show_progress: bool = False, max_file_bytes: int = MAX_FILE_BYTES,
    total: int | None = None, transform: Callable[[bytes], bytes] | None = None,
) -> tuple[dict[str, Any], list[Path]]:
    """Write one split's parquet files, a row group at a time as its items are read; return its
    SplitInfo fields and the files. ``total``: the item count for the progress bar, when known.

    A file is closed once it holds ``max_file_bytes`` or more (or ``MAX_FILE_GROUPS`` row groups),
    and the next row group starts the next one, so files stay near that size however large the split. Each file is written under a
    temporary name and renamed to ``data/SPLIT-KKKKK-of-NNNNN.parquet`` once the count is known;
    files of an earlier copy of the split with another count are removed then.

    Rows go straight to pyarrow with the features' Arrow schema (which carries the ``huggingface``
    features metadata): ``datasets.Dataset.from_list`` measured 4x slower and held every
    image in memory at once (benchmarks/dataset_export.py).
    """
    import pyarrow as pa

    schema = parquet_schema()
    num_bytes = num_examples = 0
    pieces: list[Path] = []
    writer = None
    progress = tqdm(total=total, desc=f"hf {split}", unit="item", disable=progress_disabled() if show_progress else True,
                    dynamic_ncols=True)
    try:
        with progress:
            for group in _groups(document.items(split), ROWS_PER_GROUP):
                if writer is None:
                    writer = _PieceWriter(out_dir / DATA_DIR / f".{split}-{len(pieces):05d}.parquet{TMP_SUFFIX}", schema)
                    pieces.append(writer.path)
                # Each group reads its own images: a scene's questions sit together, so little is read twice.
                rows = hf_rows(document, group, {}, transform)
                table = pa.Table.from_pylist(rows, schema=schema)
                writer.write(table)
                num_bytes += table.nbytes
                num_examples += len(rows)
                progress.update(len(rows))
                if writer.size() >= max_file_bytes or writer.groups >= MAX_FILE_GROUPS:
                    writer.close()
                    writer = None
        if writer is not None:
            writer.close()
            writer = None
    except BaseException:
        if writer is not None:
            writer.close()
        for piece in pieces:
            piece.unlink(missing_ok=True)
        raise
    files = [out_dir / parquet_name(split, index, len(pieces)) for index in range(len(pieces))]
    for old in (out_dir / DATA_DIR).glob(f"{split}-*.parquet"):
        if old not in files:
            old.unlink()
    rename_in_order(zip(pieces, files, strict=True))
    return {"name": split, "num_bytes": num_bytes, "num_examples": num_examples}, files


class _PieceWriter:
    """One parquet file being written (fsynced on close)."""

    def __init__(self, path: Path, schema: Any) -> None:
        import pyarrow.parquet as pq

        self.path = path
        self.groups = 0
        self._handle = open(path, "wb")
        self._writer = pq.ParquetWriter(self._handle, schema)

    def write(self, table: Any) -> None:
        self._writer.write_table(table)
        self.groups += 1

    def size(self) -> int:
        return self._handle.tell()

    def close(self) -> None:
        self._writer.close()
        self._handle.flush()
        os.fsync(self._handle.fileno())
        self._handle.close()


def check_hf_inputs(document: Document, license_id: str) -> ExportSurvey:
    """Refuse, before anything is written, what would make a copy that cannot be loaded (an empty
    split, a missing image); going through the items for that, gather what the card says of them."""
    check_license(license_id)
    for split in SPLITS:
        if next(iter(document.items(split)), None) is None:
            raise UsageError(f"split {split} of {document.path} is empty, and datasets cannot load an empty split")
    survey = ExportSurvey(document.info)
    present = RecentlySeen()  # images found on disk lately: each image is asked about by several items
    for split in SPLITS:
        for item, record in document.records(split):
            if present.first_time(item["inputs"]["image"]):
                check_image_file(document.image_path(item), f"item {item['meta']['id']}")
            survey.add(split, item, record)
    missing = missing_card_fields(document.info)
    if missing:
        raise UsageError(
            f"{document.path} has no export record with {', '.join(missing)} (provenance.json's info, written by "
            "python -m dataset export): the card could not say how the data was made"
        )
    return survey


def survey_statistics(survey: ExportSurvey, document: Document) -> dict[str, Any]:
    """The survey's statistics with MERA's rules checked (image sides from the images' headers)."""
    statistics = survey.statistics.as_dict()
    statistics["mera_rules"] = mera_rules(statistics, smallest_image_sides(document))
    return statistics


def write_hf_copy(
    document: Document, out_dir: Path, license_id: str = "cc-by-4.0", show_progress: bool = False,
    plots: Sequence[tuple[str, str]] = (), max_file_bytes: int = MAX_FILE_BYTES, survey: ExportSurvey | None = None,
    transform: Callable[[bytes], bytes] | None = None,
    statistics: Mapping[str, Any] | None = None,
    contact: str | None = None,
) -> dict[str, Any]:
    """Write the parquet files, then the card last (an existing card means a complete copy).

    ``show_progress`` draws a bar per split; the build leaves it off and shows its own.
    ``plots``: (path relative to ``out_dir``, title) of plot images already written there, shown in the card.
    ``survey``: what :func:`check_hf_inputs` returned for this document and licence (else it is run here);
    ``statistics``: :func:`survey_statistics` of it, where already made.
    ``transform``: what is done to each image's bytes (a public copy's watermark, :mod:`dataset.publish.watermark`).
    ``contact``: who maintains the copy, named in the card (else it says where to report problems).
    The items are read twice, once for the survey and once for the parquet files, never held whole.
    """
    if survey is None:
        survey = check_hf_inputs(document, license_id)
    (out_dir / DATA_DIR).mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(out_dir)
    remove_stale_temporaries(out_dir / DATA_DIR)  # the parquet pieces of a killed run too
    written = [write_split(document, split, out_dir, show_progress, max_file_bytes, survey.items(split), transform)
               for split in SPLITS]
    splits = [split for split, _ in written]
    download_size = sum(path.stat().st_size for _, files in written for path in files)
    dataset_info = {
        "splits": splits,
        "download_size": download_size,
        "dataset_size": sum(split["num_bytes"] for split in splits),
    }
    if statistics is None:
        statistics = survey_statistics(survey, document)
    card = render_card(card_context(survey.card, dataset_info, statistics, survey.test_answers.baselines(), license_id,
                                    plots, contact))
    atomic_write_text(out_dir / CARD_NAME, card)
    return {"dataset_info": dataset_info, "card": str(out_dir / CARD_NAME)}
