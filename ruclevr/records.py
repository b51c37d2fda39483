"""Run records: what a run wrote, and what it was made with, compared when a later run resumes.

Every stage that resumes keeps a record beside its output (``render_run.json``, a checkpoint
folder's ``run.json``, ``info`` inside a list file, ``build.json``, ``augment_run.json``). A
rerun with the same record continues the work; one with another record is refused before it
mixes two runs' outputs. The record is compared as it reads back from JSON
(:func:`as_recorded`), so tuples and lists, or int and float keys, never count as a change.

Output claims (:func:`describe_outputs`) say which files a stage wrote, by size and, for the
small text files, by SHA-256; :func:`changed_outputs` names the ones that are gone or differ.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ruclevr.cli import UsageError
from ruclevr.io import TMP_SUFFIX, atomic_write_json, file_sha256, read_json

HASHED_SUFFIXES = (".json", ".jsonl", ".md")  # small text files: recorded by hash, the rest by size


def as_recorded(record: Any) -> Any:
    """``record`` as it reads back from its JSON file (tuples become lists, keys strings)."""
    return json.loads(json.dumps(record))


def same_record(previous: Any, record: Any) -> bool:
    """Whether a record read back from a file is the record of this run."""
    return bool(previous == as_recorded(record))


def record_differences(old: Any, new: Any, path: str = "") -> list[str]:
    """``"key.sub: old -> new"`` for every leaf where two records differ, in key order."""
    if isinstance(old, dict) and isinstance(new, dict):
        found = []
        for key in sorted(set(old) | set(new)):
            found += record_differences(old.get(key), new.get(key), f"{path}.{key}" if path else key)
        return found
    return [] if old == new else [f"{path}: {old!r} -> {new!r}"]


def read_record(path: str | os.PathLike[str]) -> Any:
    """The record saved at ``path``, or None when there is none (or only an unreadable one, which
    an atomic writer leaves only when something else damaged it: the run then claims afresh)."""
    try:
        return read_json(path)
    except (OSError, ValueError):
        return None


def claim_run(
    path: str | os.PathLike[str],
    record: Mapping[str, Any],
    *,
    has_work: Callable[[], object],
    refusal: Callable[[list[str]], str],
    compared: Callable[[Any], Any] = lambda record: record,
) -> None:
    """Write this run's ``record`` at ``path``, unless the folder holds work (``has_work()`` is
    true) of a run whose record differs in its ``compared`` part: then a UsageError with
    ``refusal(differences)``, and nothing is written."""
    previous = read_record(path)
    if previous is not None and has_work():
        differences = record_differences(compared(previous), compared(as_recorded(record)))
        if differences:
            raise UsageError(refusal(differences))
    atomic_write_json(path, dict(record))


def fingerprint(decisive: Mapping[str, Any]) -> str:
    """The SHA-256 of what decides a run's output, for records that keep only a hash of it."""
    return hashlib.sha256(json.dumps(decisive, sort_keys=True).encode()).hexdigest()


def describe_outputs(root: Path, files: Sequence[Path], hash_all: bool = False) -> dict[str, dict[str, Any]]:
    """``{path relative to root: {"size": bytes[, "sha256": hex]}}`` of the files that exist (the hash
    for the small text files, or for all with ``hash_all``)."""
    described = {}
    for path in sorted(files):
        if not path.is_file() or path.name.endswith(TMP_SUFFIX):
            continue
        entry: dict[str, Any] = {"size": path.stat().st_size}
        if hash_all or path.suffix in HASHED_SUFFIXES:
            entry["sha256"] = file_sha256(path)
        described[path.relative_to(root).as_posix()] = entry
    return described


def changed_outputs(root: Path, recorded: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The recorded outputs that are gone or differ from their record (relative names)."""
    changed = []
    for name, entry in recorded.items():
        path = root / name
        if not path.is_file() or path.stat().st_size != entry.get("size") or (
                "sha256" in entry and file_sha256(path) != entry["sha256"]):
            changed.append(name)
    return changed


def files_under(folder: Path) -> list[Path]:
    """Every file below ``folder`` (none when it does not exist)."""
    return [path for path in folder.rglob("*") if path.is_file()] if folder.is_dir() else []
