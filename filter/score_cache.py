"""Scores saved as they are computed, keyed by (scorer, question text), in one SQLite file.

A rerun of the filter — after a kill, with another threshold, or on a grown input — scores only
texts it has not seen. Each batch is committed in one transaction, so a killed run keeps every
batch it finished and never a half-written one. The scorer key (model and revision, or rule
version) is part of the primary key: another model never reuses these scores.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path

from filter.base import Verdict

_SCHEMA = """
CREATE TABLE IF NOT EXISTS scores (
    scorer TEXT NOT NULL,
    text TEXT NOT NULL,
    score REAL NOT NULL,
    reasons TEXT NOT NULL,
    PRIMARY KEY (scorer, text)
)
"""
# SQLite caps the number of bound parameters per statement; look texts up in slices below it.
_LOOKUP_SLICE = 500


class ScoreCache:
    """Saved verdicts in one SQLite file."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._connection = sqlite3.connect(self.path, timeout=60)
            # Write-ahead log, synced at checkpoints: a commit survives a killed process (what a
            # rerun must resume from) without an fsync per batch, which cost ~30 ms each and
            # dominated the morph filter at scale (benchmarks/scale_bench.py).
            self._connection.execute("PRAGMA journal_mode=WAL")
            self._connection.execute("PRAGMA synchronous=NORMAL")
            self._connection.execute(_SCHEMA)
            self._connection.commit()
        except sqlite3.DatabaseError as error:
            raise ValueError(f"cannot use {self.path} as a score file: {error}") from None

    def lookup(self, scorer: str, texts: Iterable[str]) -> dict[str, Verdict]:
        """The saved verdict of every text in ``texts`` that has one."""
        wanted = list(dict.fromkeys(texts))
        found: dict[str, Verdict] = {}
        for start in range(0, len(wanted), _LOOKUP_SLICE):
            piece = wanted[start : start + _LOOKUP_SLICE]
            rows = self._connection.execute(
                f"SELECT text, score, reasons FROM scores WHERE scorer = ? AND text IN ({','.join('?' * len(piece))})",
                (scorer, *piece),
            )
            found.update((text, Verdict(score, tuple(json.loads(reasons)))) for text, score, reasons in rows)
        return found

    def store(self, scorer: str, verdicts: Mapping[str, Verdict]) -> None:
        """Save a batch of verdicts in one transaction."""
        with self._connection:
            self._connection.executemany(
                "INSERT OR REPLACE INTO scores VALUES (?, ?, ?, ?)",
                [(scorer, text, v.score, json.dumps(list(v.reasons), ensure_ascii=False)) for text, v in verdicts.items()],
            )

    def forget(self, scorer: str) -> int:
        """Drop every saved verdict of one scorer (for ``--overwrite``); return how many."""
        with self._connection:
            return self._connection.execute("DELETE FROM scores WHERE scorer = ?", (scorer,)).rowcount

    def close(self) -> None:
        self._connection.close()

    def __enter__(self) -> ScoreCache:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
