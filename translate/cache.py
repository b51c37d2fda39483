"""A persistent translation cache, keyed by (backend, source language, target language, text),
in one SQLite file (a :class:`ruclevr.store.KeyedStore`).

Machine translation is slow, rate-limited (Google blocks after a few hundred requests) and not
free, so a text is requested once and remembered across runs. Only successful translations are
stored: a failure is retried next time. Each insert is committed at once, so a killed run keeps
everything it had fetched.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from ruclevr.store import MEMORY, Column, KeyedStore

SCOPE = (Column("backend"), Column("source_lang"), Column("target_lang"))
VALUES = (Column("translation"),)


class TranslationCache(KeyedStore):
    """Remembered translations in one SQLite file (or in memory with ``":memory:"``)."""

    def __init__(self, path: str | os.PathLike[str] = MEMORY) -> None:
        super().__init__(path, "translations", SCOPE, VALUES, "a translation cache")

    def lookup(self, backend: str, source_lang: str, target_lang: str, texts: Iterable[str]) -> dict[str, str]:
        """Return the cached translation of every text in ``texts`` that has one."""
        found = self.find((backend, source_lang, target_lang), texts)
        return {text: translation for text, (translation,) in found.items()}

    def store(self, backend: str, source_lang: str, target_lang: str, text: str, translation: str) -> None:
        """Remember one translation; committed before returning."""
        self.put((backend, source_lang, target_lang), [(text, (translation,))])
