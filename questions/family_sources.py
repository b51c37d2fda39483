"""Which folders of family files a run uses: the shipped ones, the user's, or both.

``--families DIR`` (repeatable) adds a folder to the shipped families; ``--families-only`` (or
``--no-shipped-families``) leaves the shipped ones out. The questions stage records the choice in
its output's ``info.families`` (:meth:`FamilySources.record`), and every later stage that reads
families (translate, dataset augment) takes it from there unless it is given ``--families``
itself, so a user's families need naming once.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruclevr.cli import UsageError

#: The folder of the shipped families (``questions/families/``).
SHIPPED_DIR = Path(__file__).resolve().parent / "families"
#: What ``info.families`` holds for the shipped families alone (as every earlier output does).
SHIPPED_RECORD = "builtin"


@dataclass(frozen=True)
class FamilySources:
    """The shipped families (unless ``shipped`` is false) and the families of ``folders``, in that order."""

    shipped: bool = True
    folders: tuple[Path, ...] = ()

    @classmethod
    def only(cls, folder: str | Path) -> FamilySources:
        return cls(shipped=False, folders=(Path(folder),))

    @property
    def is_shipped_only(self) -> bool:
        return self.shipped and not self.folders

    def all_folders(self) -> tuple[Path, ...]:
        """Every folder to read, the shipped one first; a folder named twice is read once."""
        folders: list[Path] = [SHIPPED_DIR] if self.shipped else []
        for folder in self.folders:
            if not any(_same_folder(folder, seen) for seen in folders):
                folders.append(folder)
        return tuple(folders)

    def record(self) -> str | list[str]:
        """What outputs record in ``info.families``: ``"builtin"`` for the shipped families alone, else
        the list of sources (``"builtin"`` and absolute folder paths), read back by :meth:`from_record`."""
        if self.is_shipped_only:
            return SHIPPED_RECORD
        return ([SHIPPED_RECORD] if self.shipped else []) + [str(folder.resolve()) for folder in self.folders]

    @classmethod
    def from_record(cls, value: Any) -> FamilySources | None:
        """The sources an output's ``info.families`` names; None when it names none readable.

        A single folder path (written before ``--families`` added to the shipped ones) meant that
        folder alone, and still does."""
        if value == SHIPPED_RECORD:
            return cls()
        if isinstance(value, str) and value:
            return cls.only(value)
        if isinstance(value, list) and value and all(isinstance(item, str) and item for item in value):
            folders = tuple(Path(item) for item in value if item != SHIPPED_RECORD)
            return cls(shipped=SHIPPED_RECORD in value, folders=folders)
        return None

    def describe(self) -> str:
        """For messages: "the shipped families and /x/mine"."""
        parts = (["the shipped families"] if self.shipped else []) + [str(folder) for folder in self.folders]
        return " and ".join(parts)

    def missing_folder(self) -> Path | None:
        return next((folder for folder in self.folders if not folder.is_dir()), None)


def _same_folder(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def add_family_arguments(parser: argparse.ArgumentParser, *, recorded: bool = False) -> None:
    """``--families DIR`` (repeatable) and ``--families-only``/``--no-shipped-families``.

    ``recorded``: the stage reads a questions file whose ``info.families`` is the default."""
    default = ("default: the families the input's info.families records (the questions stage's choice)"
               if recorded else "default: the shipped questions/families alone")
    parser.add_argument(
        "--families", type=Path, action="append", default=None, metavar="DIR",
        help="a folder of family files (*.yaml, *.yml) to use beside the shipped ones; may be repeated; family ids must "
        f"be unique across all ({default})",
    )
    parser.add_argument(
        "--families-only", "--no-shipped-families", dest="families_only", action="store_true",
        help="use only the --families folders, not the shipped families",
    )


def sources_from_arguments(args: argparse.Namespace) -> FamilySources | None:
    """The sources ``--families``/``--families-only`` name; None when neither is given.
    UsageError for a folder that does not exist, or ``--families-only`` without ``--families``."""
    folders: Sequence[Path] = args.families or ()
    if args.families_only and not folders:
        raise UsageError("--families-only needs at least one --families DIR")
    for folder in folders:
        if not folder.is_dir():
            raise UsageError(f"--families {folder}: no such folder")
    if not folders:
        return None
    return FamilySources(shipped=not args.families_only, folders=tuple(folders))


def recorded_sources(info: Any, label: str) -> FamilySources:
    """The sources ``info.families`` of an input names (the shipped ones when it names none);
    UsageError naming ``--families`` when a recorded folder is gone."""
    recorded = info.get("families") if isinstance(info, dict) else None
    sources = FamilySources.from_record(recorded) or FamilySources()
    missing = sources.missing_folder()
    if missing is not None:
        raise UsageError(f"{label}: its info.families names {missing}, which is not a folder; pass --families DIR "
                         "(and --families-only if the shipped families were not used) with the folder of its family files")
    return sources
