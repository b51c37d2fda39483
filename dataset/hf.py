"""The Hugging Face copy: one parquet file per split with declared features, and a README card.

Output folder::

    HF/README.md                          the card (YAML dataset_info + configs, then prose)
    HF/data/shots-00000-of-00001.parquet
    HF/data/test-00000-of-00001.parquet

``inputs.image`` is an ``Image(decode=False)`` feature holding the PNG itself:
``{"bytes": <PNG bytes>, "path": "samples/<image>.png"}``. The bytes make the copy
self-contained (``datasets.load_dataset(HF)`` works offline with no other folder); the path is
the same relative path as in the MERA items, so the two copies name images alike.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Mapping, Sequence

from tqdm import tqdm

from dataset.card import render_card
from dataset.document import SPLITS, MeraDocument
from dataset.evaluate import blind_baselines
from dataset.stats import compute_statistics
from ruclevr.cli import UsageError
from ruclevr.io import atomic_open, atomic_write_text, remove_stale_temporaries

CARD_NAME = "README.md"
DATA_DIR = "data"
# Small row groups keep the Hub viewer and streaming light (datasets 2.x wrote image data 100 rows a group).
ROWS_PER_GROUP = 100
_LICENSE_ID = re.compile(r"^[a-z0-9][a-z0-9.\-]*$")


def parquet_name(split: str) -> str:
    return f"{DATA_DIR}/{split}-00000-of-00001.parquet"


def mera_features() -> Any:
    """The features MERA declares for ruCLEVR (imported here: ``datasets`` is slow to import)."""
    from datasets import Features, Image, List, Value

    return Features(
        {
            "instruction": Value("string"),
            "inputs": {"image": Image(decode=False), "question": Value("string")},
            "outputs": Value("string"),
            "meta": {
                "id": Value("int32"),
                "question_type": Value("string"),
                "image": {"synt_source": List(Value("string")), "type": List(Value("string"))},
            },
        }
    )


def check_license(license_id: str) -> str:
    if not _LICENSE_ID.match(license_id):
        raise UsageError(f"--license {license_id!r} is not a Hugging Face licence id such as cc-by-4.0 or apache-2.0")
    return license_id


def hf_rows(document: MeraDocument, items: Sequence[Mapping[str, Any]], images: dict[str, bytes]) -> list[dict[str, Any]]:
    """MERA items with the image file's bytes beside its relative path (``images`` caches the bytes)."""
    rows = []
    for item in items:
        relative = item["inputs"]["image"]
        if relative not in images:
            images[relative] = document.image_path(item).read_bytes()
        rows.append({**item, "inputs": {**item["inputs"], "image": {"bytes": images[relative], "path": relative}}})
    return rows


def check_images_present(document: MeraDocument) -> None:
    """Fail before writing anything when an item's image is missing."""
    for split in SPLITS:
        for item in document.items(split):
            if not document.image_path(item).is_file():
                raise UsageError(f"item {item['meta']['id']}: image {document.image_path(item)} does not exist")


def write_split(document: MeraDocument, split: str, out_dir: Path, show_progress: bool = False) -> dict[str, Any]:
    """Write one split's parquet file atomically, a row group at a time; return its SplitInfo fields.

    Rows go straight to pyarrow with the features' Arrow schema (which carries the ``huggingface``
    features metadata): ``datasets.Dataset.from_list`` measured 4x slower and held every
    image in memory at once (benchmarks/dataset_export.py).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = mera_features().arrow_schema
    items = document.items(split)
    num_bytes = 0
    progress = tqdm(total=len(items), desc=f"hf {split}", unit="item", disable=not show_progress, dynamic_ncols=True)
    with progress, atomic_open(out_dir / parquet_name(split), "wb") as handle, pq.ParquetWriter(handle, schema) as writer:
        for start in range(0, len(items), ROWS_PER_GROUP):
            # Each group reads its own images: a scene's questions sit together, so little is read twice.
            rows = hf_rows(document, items[start : start + ROWS_PER_GROUP], {})
            table = pa.Table.from_pylist(rows, schema=schema)
            writer.write_table(table)
            num_bytes += table.nbytes
            progress.update(len(rows))
    return {"name": split, "num_bytes": num_bytes, "num_examples": len(items)}


def check_hf_inputs(document: MeraDocument, license_id: str) -> None:
    """Refuse, before anything is written, what would make a copy that cannot be loaded."""
    check_license(license_id)
    empty = [split for split in SPLITS if not document.items(split)]
    if empty:
        raise UsageError(f"split {empty[0]} of {document.path} is empty, and datasets cannot load an empty split")
    check_images_present(document)


def write_hf_copy(
    document: MeraDocument, out_dir: Path, license_id: str = "cc-by-4.0", show_progress: bool = False,
    plots: Sequence[tuple[str, str]] = (),
) -> dict[str, Any]:
    """Write the parquet files, then the card last (an existing card means a complete copy).

    ``show_progress`` draws a bar per split; the build leaves it off and shows its own.
    ``plots``: (path relative to ``out_dir``, title) of plot images already written there, shown in the card.
    """
    check_hf_inputs(document, license_id)
    (out_dir / DATA_DIR).mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(out_dir)
    remove_stale_temporaries(out_dir / DATA_DIR)
    splits = [write_split(document, split, out_dir, show_progress) for split in SPLITS]
    download_size = sum((out_dir / parquet_name(split)).stat().st_size for split in SPLITS)
    dataset_info = {
        "features": mera_features()._to_yaml_list(),
        "splits": splits,
        "download_size": download_size,
        "dataset_size": sum(split["num_bytes"] for split in splits),
    }
    statistics = compute_statistics(document)
    baselines = blind_baselines(document.items("test"), document.family_of)
    card = render_card(document, dataset_info, statistics, baselines, license_id, plots)
    atomic_write_text(out_dir / CARD_NAME, card)
    return {"dataset_info": dataset_info, "card": str(out_dir / CARD_NAME)}

