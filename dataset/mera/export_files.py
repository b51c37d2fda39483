"""Export outputs written apart from the items: :class:`SpooledList` holds records on disk (a list too
long for memory that is written out later, in order). The export's outputs are staged and made
visible together by :class:`ruclevr.io.StagedFiles`.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from ruclevr.io import temporary_beside
from ruclevr.jsonstream import LazyList


class SpooledList(LazyList):
    """Records appended to a temporary file beside ``target`` and read back in order (pickled: every
    value comes back exactly as it went in); removed when the ``with`` block ends."""

    def __init__(self, target: Path) -> None:
        fd, self._name = temporary_beside(target, "spool")
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
