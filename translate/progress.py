"""A translate run's saved progress: finished chunks appended to ``OUT.parts/``, read back in index order."""

from __future__ import annotations

import heapq
import json
import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson

from ruclevr.cli import UsageError
from ruclevr.names import beside


class Progress:
    """Finished chunks of a run, appended to ``OUT.parts/pass_NNNNNN.jsonl``: one line per chunk.

    Each run that has work appends to a new pass file, whose first line records the run's
    fingerprint: a pass of another run is refused, not mixed in. Within a pass the indices only
    grow and passes never share one, so the saved texts are read back in index order by merging
    the passes. A killed run may leave half a line at the end of its pass: that chunk is simply
    done again. Saving a chunk costs the same however many were saved before it.
    """

    def __init__(self, out: Path, fingerprint: str) -> None:
        self.folder = beside(out, ".parts")
        self.fingerprint = fingerprint
        self._handle: Any = None

    def load(self) -> bytearray:
        """Which questions have a saved text (1 at their index) and which not (0, or beyond the end)."""
        done = bytearray()
        for path in self._passes():
            for index, _ in self._entries(path):
                if index >= len(done):
                    done.extend(bytes(index + 1 - len(done)))
                done[index] = 1
        return done

    def saved_texts(self) -> Iterator[tuple[int, str]]:
        """(index, text) of every saved question, in index order."""
        return heapq.merge(*(self._entries(path) for path in self._passes()), key=lambda entry: entry[0])

    def save(self, finished: Mapping[int, str]) -> None:
        if self._handle is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            number = len(self._passes())
            self._handle = open(self.folder / f"pass_{number:06d}.jsonl", "ab")
            self._handle.write(orjson.dumps({"fingerprint": self.fingerprint}) + b"\n")
        try:
            line = orjson.dumps(finished, option=orjson.OPT_NON_STR_KEYS)
        except TypeError:  # a text orjson refuses (a lone surrogate from a translation service)
            line = json.dumps({str(index): text for index, text in finished.items()}).encode()
        self._handle.write(line + b"\n")
        self._handle.flush()

    def remove(self) -> None:
        self.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def _entries(self, path: Path) -> Iterator[tuple[int, str]]:
        with open(path, encoding="utf-8") as handle:
            header = handle.readline()
            try:
                fingerprint = json.loads(header).get("fingerprint")
            except ValueError:
                return  # a pass killed while writing its first line
            if fingerprint != self.fingerprint:
                raise UsageError(
                    f"{self.folder} holds progress of a run with other input or settings; pass --overwrite to start afresh"
                )
            for line in handle:
                if not line.endswith("\n"):
                    return  # the chunk a killed run was writing: done again
                for index, text in json.loads(line).items():
                    yield int(index), text

    def _passes(self) -> list[Path]:
        return sorted(self.folder.glob("pass_[0-9][0-9][0-9][0-9][0-9][0-9].jsonl")) if self.folder.is_dir() else []


def next_saved(saved: Iterator[tuple[int, str]], index: int) -> str:
    """The saved text of ``index`` from the index-ordered stream of saved texts."""
    for saved_index, text in saved:
        if saved_index == index:
            return text
    raise RuntimeError(f"the saved progress lost question {index}")
