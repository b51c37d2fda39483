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
from dataclasses import dataclass
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


def _nothing() -> None:
    return None


def _whole(record: Any) -> Any:
    return record


@dataclass(frozen=True)
class RunUnit:
    """The unit of work a resumable run claims: the folder's run ``record`` file, whether the folder holds
    finished work (``has_work``), the part of a record two runs must share to write into it
    (``compared``), the one-line ``refusal`` naming the differences, and how the folder's outputs are
    removed (``start_over``, for ``--overwrite``) and made ready (``prepare``: its subfolders made, a
    killed run's temporaries dropped)."""

    record: Path
    has_work: Callable[[], object]
    refusal: Callable[[list[str]], str]
    compared: Callable[[Any], Any] = _whole
    start_over: Callable[[], object] = _nothing
    prepare: Callable[[], object] = _nothing


def claim_run(unit: RunUnit | str | os.PathLike[str], record: Mapping[str, Any], *, overwrite: bool = False,
              **parts: Any) -> None:
    """Claim ``unit``'s folder for the run of ``record``: with ``overwrite``, remove its earlier outputs
    first; else, when it holds work (``has_work()`` is true) of a run whose record differs in its
    ``compared`` part, raise a UsageError with ``refusal(differences)`` and write nothing. Then prepare
    the folder and write the record: a rerun with the same record resumes the work.

    ``unit`` may also be the record's path, with the other :class:`RunUnit` fields as keywords."""
    unit = unit if isinstance(unit, RunUnit) else RunUnit(Path(unit), **parts)
    if overwrite:
        unit.start_over()
    else:
        refuse_other_run(unit, record)
    unit.prepare()
    atomic_write_json(unit.record, dict(record))


def refuse_other_run(unit: RunUnit, record: Mapping[str, Any]) -> None:
    """UsageError when ``unit``'s folder holds work of a run whose compared record differs from ``record``'s."""
    previous = read_record(unit.record)
    if previous is not None and unit.has_work():
        differences = record_differences(unit.compared(previous), unit.compared(as_recorded(record)))
        if differences:
            raise UsageError(unit.refusal(differences))


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
