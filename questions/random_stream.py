"""Cheap draws from a seeded NumPy generator.

The search makes thousands of tiny random choices per scene; calling NumPy for each costs more
than the choice itself, so floats are drawn from the generator in blocks and handed out one by
one. Every draw still comes from a stream of :mod:`ruclevr.streams` seeded with (seed, image index).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar

import numpy as np

from ruclevr import streams

T = TypeVar("T")

_BLOCK = 256  # a scene draws a few hundred numbers


class RandomStream:
    """Uniform floats in [0, 1) from one generator, with the few helpers the engine needs."""

    __slots__ = ("_generator", "_floats", "_next")

    def __init__(self, generator: np.random.Generator) -> None:
        self._generator = generator
        self._floats: list[float] = []
        self._next = 0

    @classmethod
    def for_unit(cls, name: str, seed: int, image_index: int) -> RandomStream:
        """Stream ``name`` (:mod:`ruclevr.streams`) of one scene, independent of every other scene."""
        return cls(streams.generator(name, seed, image_index=image_index))

    def random(self) -> float:
        if self._next == len(self._floats):
            self._floats = self._generator.random(_BLOCK).tolist()
            self._next = 0
        value = self._floats[self._next]
        self._next += 1
        return value

    def below(self, n: int) -> int:
        """An integer in [0, n)."""
        return min(int(self.random() * n), n - 1)

    def choice(self, items: Sequence[T]) -> T:
        return items[self.below(len(items))]

    def lazy_order(self, n: int) -> Iterator[int]:
        """range(n) in random order, drawn one at a time (a search usually stops after the first few):
        each index takes one draw, ``below(remaining)``."""
        indices = list(range(n))
        for remaining in range(n, 0, -1):
            if self._next == len(self._floats):
                self._floats = self._generator.random(_BLOCK).tolist()
                self._next = 0
            j = min(int(self._floats[self._next] * remaining), remaining - 1)
            self._next += 1
            yield indices[j]
            indices[j] = indices[remaining - 1]

    def order(self, n: int) -> list[int]:
        """A random permutation of range(n) (Fisher-Yates)."""
        indices = list(range(n))
        for i in range(n - 1, 0, -1):
            j = self.below(i + 1)
            indices[i], indices[j] = indices[j], indices[i]
        return indices
