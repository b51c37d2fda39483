"""The question families shipped with ruclevr (the YAML files beside this module) and their loader.

Adding a family is adding (or extending) a file here, or in a folder of one's own passed with
``--families DIR``; see "Adding a question family" in docs/questions.md.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

from questions.family import Family
from questions.family_sources import SHIPPED_DIR, FamilySources
from questions.validator import FAMILY_SUFFIXES, FamilyError, Problem, TemplateCheck, validate_files

FAMILIES_DIR = SHIPPED_DIR

#: What the loaders accept: the sources, one folder (its families alone), or None (the shipped ones).
Sources = FamilySources | str | Path | None


def as_sources(sources: Sources) -> FamilySources:
    if isinstance(sources, FamilySources):
        return sources
    return FamilySources() if sources is None else FamilySources.only(sources)


def folder_files(folder: Path) -> list[Path]:
    """The family files of one folder (``*.yaml``, ``*.yml``), by file name."""
    if not folder.is_dir():
        raise FamilyError([Problem(str(folder), None, "", "no such folder of family files")])
    return sorted(path for path in folder.iterdir() if path.suffix in FAMILY_SUFFIXES and path.is_file())


def family_files(sources: Sources = None) -> list[Path]:
    """The family files of the sources, folder after folder (the shipped one first), each by file
    name: the order families are listed in."""
    return [path for folder in as_sources(sources).all_folders() for path in folder_files(folder)]


def load_families(sources: Sources = None, checkers: Mapping[str, TemplateCheck] = MappingProxyType({})) -> dict[str, Family]:
    """Every family of ``sources`` (default: the shipped ones; a folder: that folder's alone),
    validated, by id in file order; ids are unique across all of them. ``checkers``: the template
    checker of each language beyond English that the caller realises (``translate`` gives Russian's).

    Raises :class:`questions.validator.FamilyError` listing every problem if any file is malformed.
    """
    chosen = as_sources(sources)
    for folder in chosen.all_folders():
        if not folder_files(folder):
            raise FamilyError([Problem(str(folder), None, "", "no family files (*.yaml, *.yml)")])
    families, problems = validate_files(family_files(chosen), checkers)
    if problems:
        raise FamilyError(problems)
    return {family.id: family for family in families}


def families_digest(sources: Sources = None) -> str:
    """SHA-256 over the family files' names and bytes: recorded in outputs to tell which families made them."""
    digest = hashlib.sha256()
    for path in family_files(sources):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()
