"""Scores saved as they are computed, keyed by (scorer, question text), in one SQLite file
(a :class:`ruclevr.store.KeyedStore`).

A rerun of the filter — after a kill, with another threshold, or on a grown input — scores only
texts it has not seen. Each batch is committed in one transaction, so a killed run keeps every
batch it finished and never a half-written one. The scorer key (model and revision, or rule
version) is part of the primary key: another model never reuses these scores.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping

from filter.base import Verdict
from ruclevr.store import Column, KeyedStore

SCOPE = (Column("scorer"),)
VALUES = (Column("score", "REAL"), Column("reasons"))


class ScoreCache(KeyedStore):
    """Saved verdicts in one SQLite file."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(path, "scores", SCOPE, VALUES, "a score file")

    def lookup(self, scorer: str, texts: Iterable[str]) -> dict[str, Verdict]:
        """The saved verdict of every text in ``texts`` that has one."""
        found = self.find((scorer,), texts)
        return {text: Verdict(score, tuple(json.loads(reasons))) for text, (score, reasons) in found.items()}

    def store(self, scorer: str, verdicts: Mapping[str, Verdict]) -> None:
        """Save a batch of verdicts in one transaction."""
        self.put((scorer,), [(text, (v.score, json.dumps(list(v.reasons), ensure_ascii=False)))
                             for text, v in verdicts.items()])

    def forget(self, scorer: str) -> int:
        """Drop every saved verdict of one scorer (for ``--overwrite``); return how many."""
        return self.drop((scorer,))
