"""Every seeded random stream of the project, in one registry.

A random choice comes from a NumPy generator seeded by the run's ``--seed`` and the identity of
the unit of work it is made for (a scene, a question, a question type), so a unit's draws do not
depend on which other units run with it, in what order, or on how many workers. The registry says,
for each stream, who draws from it and how its entropy is laid out: ``seed``, then the identity
numbers and the stream's tag in a fixed order. The layouts are the ones the datasets already
published were made with; they are kept as they are, so the same command gives the same numbers.

Streams whose entropy is the same list draw the same numbers, so no two streams may share one:
a stream added later carries a tag of its own, ``tag(name)`` (the CRC-32 of its name), and
``tests/test_ruclevr_streams.py`` checks that no two streams' lists meet over a range of identities.
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


def tag(name: str) -> int:
    """A stream's own constant: the CRC-32 of its name."""
    return zlib.crc32(name.encode())


STREAMS: dict[str, Stream] = {stream.name: stream for stream in (
    Stream("render.scene", (SEED, "index"), "render.model.sampler: every candidate of scene ``index``"),
    Stream("questions.search", (SEED, "image_index", 3), "questions.generate: the question search of one scene"),
    Stream("questions.relax", (SEED, "image_index", tag("questions.relax")),
           "questions.scene_questions: which families may leave a not_empty set empty on one scene (empty_share)"),
    Stream("augment.recolour", (SEED, "image_index", 7), "dataset.augment: the colour map of one scene"),
    Stream("augment.search", (SEED, "image_index", 7, tag("augment.search")), "dataset.augment: the question search on a recoloured scene"),
    Stream("augment.question", (SEED, "image_index", "question_index", 7),
           "dataset.augment: the carried-over question's new colour words"),
    Stream("translate.native", (SEED, 0x72755F6E6174), "translate.native: the key of the realiser's word choices"),
    Stream("dataset.shots", (SEED, tag("dataset.shots")), "dataset.splits: which questions become shots"),
    Stream("dataset.prompt", (SEED, tag("dataset.prompt"), "type_number"), "dataset.prompt: one question type's template rotation"),
    Stream("annotate.control", (SEED, tag("annotate.control")), "dataset.annotate: the control items"),
    Stream("annotate.task_order", (SEED, tag("annotate.task_order")), "dataset.annotate: the order of the tasks"),
    Stream("annotate.annotator_order", (SEED, tag("annotate.annotator_order"), "annotator"), "dataset.annotate: one annotator's order"),
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
