"""Export outputs that are written apart and made visible together.

:class:`StagedFiles` gives each output a temporary name in its folder; :meth:`StagedFiles.commit`
renames them all, in the order given, once every one is complete (the last, the one whose presence
means a complete export, removed first), and leaving without a commit removes them, so a failed
or killed export never changes the previous one before everything is written. :class:`SpooledList`
holds records on disk (a list too long for memory that is written out later, in order).
"""

from __future__ import annotations

import os
import pickle
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from ruclevr.io import TMP_SUFFIX, remove_temporaries_of
from ruclevr.jsonstream import LazyList


class StagedFiles:
    """Temporary names for ``targets`` (``.NAME.staged.tmp`` beside each: a killed run's are removed like
    every temporary of :mod:`ruclevr.io`), renamed over the targets by :meth:`commit`."""

    def __init__(self, targets: Sequence[Path]) -> None:
        self.paths = {target: target.with_name(f".{target.name}.staged{TMP_SUFFIX}") for target in targets}

    def __enter__(self) -> StagedFiles:
        for target, staged in self.paths.items():
            remove_temporaries_of(target)
            remove_temporaries_of(staged)
        return self

    def __getitem__(self, target: Path) -> Path:
        return self.paths[target]

    def commit(self) -> None:
        """Rename the staged files over the targets, the last target last; it is removed first, so that
        while it exists every target comes from the same run (a run killed here leaves it missing)."""
        *others, (last_target, last_staged) = self.paths.items()
        last_target.unlink(missing_ok=True)
        for target, staged in others:
            os.replace(staged, target)
        os.replace(last_staged, last_target)

    def __exit__(self, *exc_info: object) -> None:
        for staged in self.paths.values():
            staged.unlink(missing_ok=True)


class SpooledList(LazyList):
    """Records appended to a temporary file beside ``target`` and read back in order (pickled: every
    value comes back exactly as it went in); removed when the ``with`` block ends."""

    def __init__(self, target: Path) -> None:
        fd, self._name = tempfile.mkstemp(prefix=f".{target.name}.spool.", suffix=TMP_SUFFIX, dir=target.parent)
        self._file: IO[bytes] = os.fdopen(fd, "w+b")
        self.count = 0

    def __enter__(self) -> SpooledList:
        return self

    def append(self, record: Any) -> None:
        pickle.dump(record, self._file, protocol=pickle.HIGHEST_PROTOCOL)
        self.count += 1

    def __iter__(self) -> Iterator[Any]:
        self._file.flush()
        with open(self._name, "rb") as reader:
            for _ in range(self.count):
                yield pickle.load(reader)

    def __exit__(self, *exc_info: object) -> None:
        self._file.close()
        os.unlink(self._name)
