"""Values saved under a key in one SQLite file: the home of every keyed cache (the filter's saved
scores, the translator's remembered translations).

A row's key is its *scope* (who made the value: a scorer, a backend and languages) and a text;
a value is one or more columns. The file is a write-ahead log synced at checkpoints: a commit
survives a killed process (what a rerun resumes from) without an fsync per write, which cost
more than the work under load. Two runs may share one file (a generous busy timeout).
"""

from __future__ import annotations

import errno
import os
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

MEMORY = ":memory:"
TEXT_KEY = "text"
# SQLite caps the number of bound parameters per statement; texts are looked up in slices below it.
LOOKUP_SLICE = 500

Store = TypeVar("Store", bound="KeyedStore")


@dataclass(frozen=True)
class Column:
    name: str
    type: str = "TEXT"


def table_schema(table: str, scope: Sequence[Column], values: Sequence[Column]) -> str:
    """``CREATE TABLE`` for a keyed table: scope columns, the text, the values; key = scope + text."""
    columns = [*scope, Column(TEXT_KEY), *values]
    key = ", ".join(column.name for column in (*scope, Column(TEXT_KEY)))
    lines = "".join(f"    {column.name} {column.type} NOT NULL,\n" for column in columns)
    return f"\nCREATE TABLE IF NOT EXISTS {table} (\n{lines}    PRIMARY KEY ({key})\n)\n"


def store_os_error(error: sqlite3.OperationalError, path: str) -> OSError:
    """SQLite's refusal to write (``database or disk is full``, ``disk I/O error``) as the OSError
    it is: every command's ``run_cli`` answers it in one line naming the file."""
    return OSError(errno.ENOSPC if "full" in str(error) else errno.EIO, f"{error} (is the disk full?)", path)


class KeyedStore:
    """Rows ``(scope..., text, value...)`` in one table of one SQLite file (or in memory).

    A cache subclasses it and adds its own typed methods on top of :meth:`find`, :meth:`put` and :meth:`drop`."""

    def __init__(self, path: str | os.PathLike[str], table: str, scope: Sequence[Column], values: Sequence[Column],
                 what: str) -> None:
        """``what`` names the file in the error a file that is not SQLite gives (a ValueError)."""
        self.path = str(path)
        self.table = table
        self._scope = tuple(column.name for column in scope)
        self._values = tuple(column.name for column in values)
        if self.path != MEMORY:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        try:
            self._connection = sqlite3.connect(self.path, timeout=60)
            self._connection.execute("PRAGMA journal_mode=WAL")
            self._connection.execute("PRAGMA synchronous=NORMAL")
            self._connection.execute(table_schema(table, scope, values))
            self._connection.commit()
        except sqlite3.OperationalError as error:  # a full disk, an I/O error, no permission: not the file's fault
            raise store_os_error(error, self.path) from None
        except sqlite3.DatabaseError as error:
            raise ValueError(f"cannot use {self.path} as {what}: {error}") from None

    def find(self, scope: Sequence[Any], texts: Iterable[str]) -> dict[str, tuple[Any, ...]]:
        """The saved values of every text in ``texts`` that has some under ``scope``."""
        wanted = list(dict.fromkeys(texts))
        where = " AND ".join(f"{name} = ?" for name in self._scope)
        found: dict[str, tuple[Any, ...]] = {}
        for start in range(0, len(wanted), LOOKUP_SLICE):
            piece = wanted[start : start + LOOKUP_SLICE]
            rows = self._connection.execute(
                f"SELECT {TEXT_KEY}, {', '.join(self._values)} FROM {self.table}"
                f" WHERE {where} AND {TEXT_KEY} IN ({','.join('?' * len(piece))})",
                (*scope, *piece),
            )
            found.update((text, tuple(values)) for text, *values in rows)
        return found

    def put(self, scope: Sequence[Any], rows: Iterable[tuple[str, Sequence[Any]]]) -> None:
        """Save ``(text, values)`` rows under ``scope`` in one transaction (replacing older ones)."""
        marks = ", ".join("?" * (len(self._scope) + 1 + len(self._values)))
        try:
            with self._connection:
                self._connection.executemany(f"INSERT OR REPLACE INTO {self.table} VALUES ({marks})",
                                             [(*scope, text, *values) for text, values in rows])
        except sqlite3.OperationalError as error:
            raise store_os_error(error, self.path) from None

    def drop(self, scope: Sequence[Any]) -> int:
        """Drop every row saved under ``scope``; return how many."""
        where = " AND ".join(f"{name} = ?" for name in self._scope)
        try:
            with self._connection:
                return int(self._connection.execute(f"DELETE FROM {self.table} WHERE {where}", tuple(scope)).rowcount)
        except sqlite3.OperationalError as error:
            raise store_os_error(error, self.path) from None

    def __len__(self) -> int:
        return int(self._connection.execute(f"SELECT COUNT(*) FROM {self.table}").fetchone()[0])

    def close(self) -> None:
        self._connection.close()

    def __enter__(self: Store) -> Store:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
