"""The question families shipped with ruclevr (the YAML files beside this module) and their loader.

Adding a family is adding (or extending) a file here; see "Adding a question family" in docs/questions.md.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from questions.family import Family
from questions.validator import FAMILY_SUFFIXES, FamilyError, Problem, validate_files

FAMILIES_DIR = Path(__file__).resolve().parent


def family_files(directory: str | Path | None = None) -> list[Path]:
    """The family files of a folder, by file name (the order families are listed in)."""
    folder = Path(directory) if directory is not None else FAMILIES_DIR
    if not folder.is_dir():
        raise FamilyError([Problem(str(folder), None, "", "no such folder of family files")])
    return sorted(path for path in folder.iterdir() if path.suffix in FAMILY_SUFFIXES and path.is_file())


def load_families(directory: str | Path | None = None) -> dict[str, Family]:
    """Every family of ``directory`` (default: the shipped ones), validated, by id in file order.

    Raises :class:`questions.validator.FamilyError` listing every problem if any file is malformed.
    """
    files = family_files(directory)
    if not files:
        raise FamilyError([Problem(str(directory or FAMILIES_DIR), None, "", "no family files (*.yaml, *.yml, *.json)")])
    families, problems = validate_files(files)
    if problems:
        raise FamilyError(problems)
    return {family.id: family for family in families}


def families_digest(directory: str | Path | None = None) -> str:
    """SHA-256 over the family files' names and bytes: recorded in outputs to tell which families made them."""
    digest = hashlib.sha256()
    for path in family_files(directory):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()
