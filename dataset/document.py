"""The exported dataset as the other dataset commands read it: one place for both layouts.

MERA's layout (written by :mod:`dataset.export`)::

    EXPORT/shots.json        {"data": [MERA item, ...]}   as MERA's repository stores a task's files
    EXPORT/test.json         {"data": [MERA item, ...]}
    EXPORT/provenance.json   {"info": {...how it was made...}, "provenance": [{"id": 1, "split": ..., "family": ...}, ...]}
    EXPORT/samples/*.png

``shots.json`` and ``test.json`` hold MERA items exactly as MERA defines them; everything MERA has
no field for (family, English source, translator, acceptability score, objects in the scene) is
kept beside them in ``provenance.json``, keyed by ``meta.id``. ``provenance.json`` is written
last, so its presence means a complete export. The earlier single file, ``ruclevr.json``
(``{"info", "data": {"shots", "test"}, "provenance"}``), is still read, and so is a folder of
MERA's own ``shots.json``/``test.json`` without provenance.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruclevr.cli import UsageError
from ruclevr.io import read_json_input
from ruclevr.paths import confined_path

SPLITS = ("shots", "test")
SPLIT_FILES = {"shots": "shots.json", "test": "test.json"}
PROVENANCE_NAME = "provenance.json"
LEGACY_DOCUMENT_NAME = "ruclevr.json"
UNKNOWN_FAMILY = "unknown"


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
        """The item's question family (``unknown`` for MERA's own files, which record none)."""
        return str(self.provenance.get(item["meta"]["id"], {}).get("family", UNKNOWN_FAMILY))

    def as_legacy_dict(self) -> dict[str, Any]:
        """The export as one object, ``{"info", "data": {"shots", "test"}, "provenance"}``."""
        return {"info": dict(self.info), "data": {split: self.items(split) for split in SPLITS},
                "provenance": list(self.provenance.values())}


def split_path(folder: Path, split: str) -> Path:
    return folder / SPLIT_FILES[split]


def locate_document(path: str | Path) -> Path:
    """The export's folder (MERA's layout) or its single legacy file.

    Accepts a folder (an export or a build folder holding ``mera/``), any of the export's files,
    or a legacy ``ruclevr.json``.
    """
    given = Path(path)
    if given.is_file():
        if given.name in (*SPLIT_FILES.values(), PROVENANCE_NAME):
            return given.parent
        return given
    folders = [given, given / "mera"]
    for folder in folders:
        if split_path(folder, "test").is_file():
            return folder
        if (folder / LEGACY_DOCUMENT_NAME).is_file():
            return folder / LEGACY_DOCUMENT_NAME
    looked = [str(split_path(folder, "test")) for folder in folders] + [str(f / LEGACY_DOCUMENT_NAME) for f in folders]
    raise UsageError(f"no exported dataset at {given} (looked for {', '.join(looked)})")


def load_document(path: str | Path) -> MeraDocument:
    located = locate_document(path)
    document = _load_mera_layout(located) if located.is_dir() else _load_legacy_file(located)
    return _check_image_paths(document)


def read_export(path: str | Path) -> dict[str, Any]:
    """The export at ``path`` as one object, whichever layout it was written in."""
    return load_document(path).as_legacy_dict()


def _load_mera_layout(folder: Path) -> MeraDocument:
    splits = {}
    for split in SPLITS:
        file = split_path(folder, split)
        raw = read_json_input(file, str(file)) if file.is_file() else None
        if raw is None and split == "shots":
            raw = {"data": []}
        if not isinstance(raw, dict) or not isinstance(raw.get("data"), list):
            raise UsageError(f"{file} is not a MERA split file: expected an object with a 'data' list of items")
        splits[split] = raw["data"]
    provenance_file = folder / PROVENANCE_NAME
    if not provenance_file.is_file():
        return MeraDocument(split_path(folder, "test"), {}, splits, {})
    raw = read_json_input(provenance_file, str(provenance_file))
    if not isinstance(raw, dict):
        raise UsageError(f"{provenance_file} is not an export's provenance: expected an object")
    return MeraDocument(provenance_file, raw.get("info", {}), splits, _index_provenance(raw, provenance_file))


def _load_legacy_file(document_path: Path) -> MeraDocument:
    raw = read_json_input(document_path, str(document_path))
    if not isinstance(raw, dict) or not isinstance(raw.get("data"), dict):
        raise UsageError(f"{document_path} is not an exported dataset: expected an object with 'data'")
    splits = {}
    for split in SPLITS:
        items = raw["data"].get(split)
        if not isinstance(items, list):
            raise UsageError(f"{document_path}: data.{split} must be a list of MERA items")
        splits[split] = items
    return MeraDocument(document_path, raw.get("info", {}), splits, _index_provenance(raw, document_path))


def _index_provenance(raw: Mapping[str, Any], path: Path) -> dict[int, Mapping[str, Any]]:
    records = raw.get("provenance", [])
    if not isinstance(records, list) or not all(isinstance(r, dict) and isinstance(r.get("id"), int) for r in records):
        raise UsageError(f"{path}: 'provenance' must be a list of records with an integer 'id'")
    return {int(record["id"]): record for record in records}


def _check_image_paths(document: MeraDocument) -> MeraDocument:
    """Every image path is checked before any command reads or copies a file."""
    for split in SPLITS:
        for item in document.items(split):
            document.image_path(item)
    return document
