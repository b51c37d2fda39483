"""The exported dataset as the other dataset commands read it: one place for both layouts.

MERA's layout (written by :mod:`dataset.mera.export`)::

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

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from ruclevr.cli import UsageError
from ruclevr.io import read_json_input
from ruclevr.jsonstream import checked_info, checked_items, input_document
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
        return image_path(self.folder, self.path.name, item)

    def items(self, split: str) -> list[dict[str, Any]]:
        return self.splits[split]

    def family_of(self, item: Mapping[str, Any]) -> str:
        """The item's question family (``unknown`` for MERA's own files, which record none)."""
        return family_in(self.provenance.get(item["meta"]["id"], {}))

    def records(self, split: str) -> Iterator[tuple[dict[str, Any], Mapping[str, Any]]]:
        """Each item of ``split`` with its provenance record (``{}`` where there is none)."""
        for item in self.items(split):
            yield item, self.provenance.get(item["meta"]["id"], {})

    def as_legacy_dict(self) -> dict[str, Any]:
        """The export as one object, ``{"info", "data": {"shots", "test"}, "provenance"}``."""
        return {"info": dict(self.info), "data": {split: self.items(split) for split in SPLITS},
                "provenance": list(self.provenance.values())}


def image_path(folder: Path, file_name: str, item: Mapping[str, Any]) -> Path:
    """Where an item's image lies: its ``inputs.image`` inside ``folder``, never outside."""
    inputs = item.get("inputs") if isinstance(item, Mapping) else None
    relative = inputs.get("image") if isinstance(inputs, Mapping) else None
    meta = item.get("meta") if isinstance(item, Mapping) else None
    label = meta.get("id") if isinstance(meta, Mapping) else "?"
    return confined_path(folder, relative, f"{file_name} item {label}: inputs.image")


#: The largest ``meta.id``: the Hugging Face copy stores ids as 64-bit integers.
MAX_ITEM_ID = 2**63 - 1


def check_item_id(item: Any, file_name: str, position: int) -> None:
    """Refuse an item whose ``meta.id`` is not an integer in [0, MAX_ITEM_ID] (a float, a string,
    a 25-digit number: each once failed deep inside hf or annotate export)."""
    meta = item.get("meta") if isinstance(item, Mapping) else None
    item_id = meta.get("id") if isinstance(meta, Mapping) else None
    if isinstance(item_id, bool) or not isinstance(item_id, int) or not 0 <= item_id <= MAX_ITEM_ID:
        raise UsageError(f"{file_name} item {position}: meta.id must be an integer from 0 to 2**63 - 1, got {item_id!r}")


def family_in(record: Mapping[str, Any]) -> str:
    """The question family a provenance record names (``unknown`` for none)."""
    return str(record.get("family", UNKNOWN_FAMILY))


@dataclass(frozen=True)
class StreamedDocument:
    """An export in MERA's layout read one item at a time, for commands that only go through it
    (stats, evaluate): memory stays flat however many items the files hold.

    ``path`` is what :class:`MeraDocument` records: ``provenance.json``, or ``test.json`` without it.
    Each item's image path is checked as the item is read.
    """

    folder: Path
    path: Path

    @cached_property
    def info(self) -> Mapping[str, Any]:
        """``provenance.json``'s ``info`` (``{}`` without it), read without going through its records."""
        provenance_file = self.folder / PROVENANCE_NAME
        if not provenance_file.is_file():
            return {}
        return checked_info(input_document(provenance_file, "provenance", str(provenance_file)), str(provenance_file))

    def image_path(self, item: Mapping[str, Any]) -> Path:
        """Where an item's image lies: ``inputs.image`` inside the export's folder, never outside."""
        return image_path(self.folder, self.path.name, item)

    def records(self, split: str) -> Iterator[tuple[dict[str, Any], Mapping[str, Any]]]:
        """Each item of ``split`` with its provenance record (``{}`` where there is none)."""
        items = self.items(split)
        provenance_file = self.folder / PROVENANCE_NAME
        if not provenance_file.is_file():
            return ((item, {}) for item in items)
        return _joined(items, lambda: _provenance_records(provenance_file))

    def items(self, split: str) -> Iterator[dict[str, Any]]:
        """The items of ``split`` in order, read one at a time."""
        file = split_path(self.folder, split)
        if not file.is_file() and split == "shots":
            return
        checked = RecentlySeen()  # images whose path was checked: most are asked about several times
        for position, item in enumerate(checked_items(input_document(file, "data", str(file)), str(file))):
            check_item_id(item, file.name, position)
            inputs = item.get("inputs") if isinstance(item, dict) else None
            image = inputs.get("image") if isinstance(inputs, dict) else None
            if not isinstance(image, str) or checked.first_time(image):
                image_path(self.folder, self.path.name, item)  # a UsageError unless image is a path inside the folder
            yield item


def check_image_file(path: Path, what: str) -> None:
    """Refuse, as a UsageError naming ``what``, an image to publish that is missing or cannot be
    read as an image (its header and chunks are checked, as the gallery checks what it shows)."""
    from PIL import Image

    if not path.is_file():
        raise UsageError(f"{what}: image {path} does not exist")
    try:
        with Image.open(path) as opened:
            opened.verify()
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError) as error:
        raise UsageError(f"{what}: image {path} cannot be read as an image: {error}") from None


class RecentlySeen:
    """Keys seen lately, for skipping work already done for them (most images are asked about by
    several items in a row); at most ``limit`` remembered at once, so memory stays bounded."""

    def __init__(self, limit: int = 10_000) -> None:
        self.limit = limit
        self._seen: set[str] = set()

    def first_time(self, key: str) -> bool:
        """Whether ``key`` is not among those remembered; it is remembered from now on."""
        if key in self._seen:
            return False
        if len(self._seen) == self.limit:
            self._seen.clear()
        self._seen.add(key)
        return True


Document = MeraDocument | StreamedDocument


def stream_document(path: str | Path) -> MeraDocument | StreamedDocument:
    """The export at ``path`` to go through item by item: streamed in MERA's layout; an earlier
    single-file export (``ruclevr.json``) is read whole, as :func:`load_document` reads it."""
    located = locate_document(path)
    if not located.is_dir():
        return load_document(located)
    provenance_file = located / PROVENANCE_NAME
    return StreamedDocument(located, provenance_file if provenance_file.is_file() else split_path(located, "test"))


def _provenance_records(path: Path) -> Iterator[Mapping[str, Any]]:
    for record in checked_items(input_document(path, "provenance", str(path)), str(path)):
        if not isinstance(record, dict) or not isinstance(record.get("id"), int):
            raise UsageError(f"{path}: 'provenance' must be a list of records with an integer 'id'")
        yield record


def _joined(items: Iterable[dict[str, Any]], records: Any) -> Iterator[tuple[dict[str, Any], Mapping[str, Any]]]:
    """Items with their provenance records, read side by side.

    The export writes both in id order (shots, then test), so an item's record lies at or after
    the cursor; an item whose record is not there (files put together by hand) is looked up in an
    index of the whole provenance, made the first time it is needed.
    """
    cursor = iter(records())
    pending = next(cursor, None)
    index: dict[int, Mapping[str, Any]] | None = None
    for item in items:
        item_id = item["meta"]["id"]
        while pending is not None and pending["id"] < item_id:
            pending = next(cursor, None)
        if pending is not None and pending["id"] == item_id:
            yield item, pending
            continue
        if index is None:
            index = {record["id"]: record for record in records()}
        yield item, index.get(item_id, {})


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
        for position, item in enumerate(document.items(split)):
            check_item_id(item, f"{split_path(document.folder, split).name}", position)
            document.image_path(item)
    return document
