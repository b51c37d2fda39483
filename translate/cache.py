"""A persistent translation cache in SQLite, keyed by (backend, source language, target language, text).

Machine translation is slow, rate-limited (Google blocks after a few hundred requests) and not
free, so a text is requested once and remembered across runs. Only successful translations are
stored: a failure is retried next time. Each insert is committed at once, so a killed run keeps
everything it had fetched.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable
from pathlib import Path

MEMORY = ":memory:"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS translations (
    backend TEXT NOT NULL,
    source_lang TEXT NOT NULL,
    target_lang TEXT NOT NULL,
    text TEXT NOT NULL,
    translation TEXT NOT NULL,
    PRIMARY KEY (backend, source_lang, target_lang, text)
)
"""

# SQLite limits the number of bound parameters per statement; look texts up in slices below it.
_LOOKUP_SLICE = 500


class TranslationCache:
    """Remembered translations in one SQLite file (or in memory with ``":memory:"``)."""

    def __init__(self, path: str | os.PathLike[str] = MEMORY) -> None:
        self.path = str(path)
        if self.path != MEMORY:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        try:
            # A generous busy timeout: two runs may share one cache file.
            self._connection = sqlite3.connect(self.path, timeout=60)
            # WAL with synchronous=NORMAL: a commit is not an fsync (which cost more than a request
            # under load) yet survives a killed process; only a power cut may drop the last few.
            self._connection.execute("PRAGMA journal_mode=WAL")
            self._connection.execute("PRAGMA synchronous=NORMAL")
            self._connection.execute(_SCHEMA)
            self._connection.commit()
        except sqlite3.DatabaseError as error:
            raise ValueError(f"cannot use {self.path} as a translation cache: {error}") from None

    def lookup(self, backend: str, source_lang: str, target_lang: str, texts: Iterable[str]) -> dict[str, str]:
        """Return the cached translation of every text in ``texts`` that has one."""
        wanted = list(dict.fromkeys(texts))
        found: dict[str, str] = {}
        for start in range(0, len(wanted), _LOOKUP_SLICE):
            piece = wanted[start : start + _LOOKUP_SLICE]
            marks = ",".join("?" * len(piece))
            rows = self._connection.execute(
                "SELECT text, translation FROM translations"
                f" WHERE backend = ? AND source_lang = ? AND target_lang = ? AND text IN ({marks})",
                (backend, source_lang, target_lang, *piece),
            )
            found.update(rows)
        return found

    def store(self, backend: str, source_lang: str, target_lang: str, text: str, translation: str) -> None:
        """Remember one translation; committed before returning."""
        with self._connection:
            self._connection.execute(
                "INSERT OR REPLACE INTO translations VALUES (?, ?, ?, ?, ?)",
                (backend, source_lang, target_lang, text, translation),
            )

    def __len__(self) -> int:
        return self._connection.execute("SELECT COUNT(*) FROM translations").fetchone()[0]

    def close(self) -> None:
        self._connection.close()

    def __enter__(self) -> TranslationCache:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
