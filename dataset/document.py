"""The exported dataset file, ``ruclevr.json``, as the other dataset commands read it.

Layout (written by :mod:`dataset.export`)::

    {"info": {...how it was made...},
     "data": {"shots": [MERA item, ...], "test": [MERA item, ...]},
     "provenance": [{"id": 1, "split": "shots", "family": ..., "image_filename": ..., ...}, ...]}

``data`` holds MERA items exactly as MERA defines them; everything MERA has no field for
(family, English source, translator, acceptability score, objects in the scene) is kept beside
them in ``provenance``, keyed by ``meta.id``, so the items stay clean and nothing is lost.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from ruclevr.cli import UsageError
from ruclevr.io import read_json_input
from ruclevr.paths import confined_path

DOCUMENT_NAME = "ruclevr.json"
SPLITS = ("shots", "test")


@dataclass(frozen=True)
class MeraDocument:
    path: Path
    info: Mapping[str, Any]
    splits: Mapping[str, list[dict[str, Any]]]
    provenance: Mapping[int, Mapping[str, Any]]

    @property
    def folder(self) -> Path:
        """The folder ``inputs.image`` paths are relative to."""
        return self.path.parent

    def image_path(self, item: Mapping[str, Any]) -> Path:
        """Where an item's image lies: ``inputs.image`` inside this document's folder, never outside."""
        inputs = item.get("inputs") if isinstance(item, Mapping) else None
        relative = inputs.get("image") if isinstance(inputs, Mapping) else None
        meta = item.get("meta") if isinstance(item, Mapping) else None
        label = meta.get("id") if isinstance(meta, Mapping) else "?"
        return confined_path(self.folder, relative, f"{self.path.name} item {label}: inputs.image")

    def items(self, split: str) -> list[dict[str, Any]]:
        return self.splits[split]

    def family_of(self, item: Mapping[str, Any]) -> str:
        return str(self.provenance[item["meta"]["id"]]["family"])


def locate_document(path: str | Path) -> Path:
    """Accept the file itself, the export folder, or a build folder (``DATA/mera/ruclevr.json``)."""
    given = Path(path)
    candidates = [given] if given.suffix == ".json" else [given / DOCUMENT_NAME, given / "mera" / DOCUMENT_NAME]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise UsageError(f"no exported dataset at {given} (looked for {', '.join(str(c) for c in candidates)})")


def load_document(path: str | Path) -> MeraDocument:
    document_path = locate_document(path)
    raw = read_json_input(document_path, str(document_path))
    if not isinstance(raw, dict) or not isinstance(raw.get("data"), dict):
        raise UsageError(f"{document_path} is not an exported dataset: expected an object with 'data'")
    splits = {}
    for split in SPLITS:
        items = raw["data"].get(split)
        if not isinstance(items, list):
            raise UsageError(f"{document_path}: data.{split} must be a list of MERA items")
        splits[split] = items
    provenance = {int(record["id"]): record for record in raw.get("provenance", [])}
    document = MeraDocument(document_path, raw.get("info", {}), splits, provenance)
    for split in SPLITS:  # every image path is checked before any command reads or copies a file
        for item in splits[split]:
            document.image_path(item)
    return document
