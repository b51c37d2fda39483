"""Every seeded random stream of the project, in one registry.

A random choice comes from a NumPy generator seeded by the run's ``--seed`` and the identity of
the unit of work it is made for (a scene, a question, a question type), so a unit's draws do not
depend on which other units run with it, in what order, or on how many workers. The registry says,
for each stream, who draws from it and how its entropy is laid out: ``seed``, then the identity
numbers and the stream's tag in a fixed order. The layouts are the ones the datasets already
published were made with; they are kept as they are, so the same command gives the same numbers.

Streams whose entropy is the same list draw the same numbers. Two such pairs exist and are kept
for the published datasets: ``augment.recolour`` and ``augment.search`` (one scene's recolouring
and its question search), and the ``annotate.*`` draws with ``render.scene`` of scenes 0-2
(different stages' choices, which nothing compares).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

SEED = "seed"


@dataclass(frozen=True)
class Stream:
    """One stream: ``layout`` lists ``"seed"``, identity names (keyword arguments of the draw) and
    constant tags, in the order they make the entropy list."""

    name: str
    layout: tuple[str | int, ...]
    drawn_by: str

    @property
    def identity(self) -> tuple[str, ...]:
        return tuple(part for part in self.layout if isinstance(part, str) and part != SEED)


STREAMS: dict[str, Stream] = {stream.name: stream for stream in (
    Stream("render.scene", (SEED, "index"), "render.sampler: every candidate of scene ``index``"),
    Stream("questions.search", (SEED, "image_index", 3), "questions.generate: the question search of one scene"),
    Stream("augment.recolour", (SEED, "image_index", 7), "dataset.augment: the colour map of one scene"),
    Stream("augment.search", (SEED, "image_index", 7), "dataset.augment: the question search on a recoloured scene"),
    Stream("augment.question", (SEED, "image_index", "question_index", 7),
           "dataset.augment: the carried-over question's new colour words"),
    Stream("translate.native", (SEED, 0x72755F6E6174), "translate.native: the key of the realiser's word choices"),
    Stream("dataset.shots", (SEED, zlib.crc32(b"dataset.shots")), "dataset.splits: which questions become shots"),
    Stream("dataset.prompt", (SEED, 7, "type_number"), "dataset.prompt: one question type's template rotation"),
    Stream("annotate.control", (SEED, 0), "dataset.annotate: the control items"),
    Stream("annotate.task_order", (SEED, 1), "dataset.annotate: the order of the tasks"),
    Stream("annotate.annotator_order", (SEED, 2, "annotator"), "dataset.annotate: one annotator's order"),
)}


def entropy(name: str, seed: int, **identity: int) -> list[int]:
    """The entropy list of stream ``name`` for ``seed`` and the unit ``identity`` (all its names, no other)."""
    stream = STREAMS[name]
    if set(identity) != set(stream.identity):
        raise TypeError(f"stream {name} is identified by {stream.identity}, got {tuple(sorted(identity))}")
    return [seed if part == SEED else identity[part] if isinstance(part, str) else part for part in stream.layout]


def generator(name: str, seed: int, **identity: int) -> np.random.Generator:
    """``numpy.random.default_rng`` of the stream's entropy."""
    return np.random.default_rng(entropy(name, seed, **identity))


def seed_sequence(name: str, seed: int, **identity: int) -> np.random.SeedSequence:
    """The stream's ``SeedSequence``, for a stream that derives keys rather than drawing numbers."""
    return np.random.SeedSequence(entropy(name, seed, **identity))
