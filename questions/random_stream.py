"""Cheap draws from a seeded NumPy generator.

The search makes thousands of tiny random choices per scene; calling NumPy for each costs more
than the choice itself, so floats are drawn from the generator in blocks and handed out one by
one. Every draw still comes from ``numpy.random.default_rng`` seeded with (seed, index, stage).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import numpy as np

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
    def for_unit(cls, seed: int, index: int, stage: int) -> RandomStream:
        """The stream of one unit of work (a scene) in one stage, independent of every other unit."""
        return cls(np.random.default_rng([seed, index, stage]))

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

    def order(self, n: int) -> list[int]:
        """A random permutation of range(n) (Fisher-Yates)."""
        indices = list(range(n))
        for i in range(n - 1, 0, -1):
            j = self.below(i + 1)
            indices[i], indices[j] = indices[j], indices[i]
        return indices
