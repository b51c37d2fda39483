"""Every seeded random stream of the project, in one registry.

A random choice comes from a NumPy generator seeded by the run's ``--seed`` and the identity of
the unit of work it is made for (a scene, a question, a question type), so a unit's draws do not
depend on which other units run with it, in what order, or on how many workers. The registry says,
for each stream, who draws from it and how its entropy is laid out: ``seed``, then the identity
numbers and the stream's tag in a fixed order. The layouts are the ones the datasets already
published were made with; they are kept as they are, so the same command gives the same numbers.

NumPy's ``SeedSequence`` reads each number as 32-bit words, so a seed of 2**32 or more would
spill into the next place (``[2**32 * 5 + 7, 3]`` is ``[7, 5, 3]``, another stream's list): every
identity is one word, below 2**32 (:func:`entropy` refuses others); a seed of one word is that word,
and a wider one (``--seed`` or ``--seed-file``, at most 128 bits) is laid out as four fixed-width words and a
tag of its own (:func:`wide_seed_words`), so it cannot spill into another place either; each place of a layout holds one word (the one wider constant, translate.native's,
stands last of its layout, whose length no other stream shares with those values).

Streams whose entropy is the same list draw the same numbers, so no two streams may share one:
a stream added later carries a tag of its own, ``tag(name)`` (the CRC-32 of its name), and
``tests/test_ruclevr_streams.py`` checks that no two streams' lists meet over a range of identities.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np

SEED = "seed"
#: The largest seed or identity: one 32-bit word.
MAX_WORD = 2**32 - 1
#: The largest seed read from a seed file (``--seed-file``): 128 bits, laid out as fixed-width words.
MAX_WIDE_SEED = 2**128 - 1  # the same bound as ruclevr.cli.seed


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


#: Marks the four words of a wide seed (see :func:`wide_seed_words`).
WIDE_SEED = tag("ruclevr.wide-seed")


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
    Stream("dataset.like", (SEED, tag("dataset.like")), "dataset.like: which test items a fresh set like an earlier one keeps"),
    Stream("dataset.pairs", (SEED, "image_index", tag("dataset.pairs")), "dataset.pairs: the change made to one scene for its minimal pairs"),
    Stream("dataset.prompt", (SEED, tag("dataset.prompt"), "type_number"), "dataset.prompt: one question type's template rotation"),
    Stream("annotate.control", (SEED, tag("annotate.control")), "dataset.annotate: the control items"),
    Stream("annotate.task_order", (SEED, tag("annotate.task_order")), "dataset.annotate: the order of the tasks"),
    Stream("annotate.annotator_order", (SEED, tag("annotate.annotator_order"), "annotator"), "dataset.annotate: one annotator's order"),
    Stream("reading.sample", (SEED, tag("reading.sample")), "benchmarks/reading_sample.py: which questions people read, in what order"),
    Stream("render.legibility_fit", (SEED, tag("render.legibility_fit"), "attribute"), "render.legibility: one classifier's starting weights"),
)}


def entropy(name: str, seed: int, **identity: int) -> list[int]:
    """The entropy list of stream ``name`` for ``seed`` and the unit ``identity`` (all its names, no other)."""
    stream = STREAMS[name]
    if set(identity) != set(stream.identity):
        raise TypeError(f"stream {name} is identified by {stream.identity}, got {tuple(sorted(identity))}")
    for what, value in identity.items():
        if not 0 <= value <= MAX_WORD:
            raise ValueError(f"stream {name}: {what} {value} is not in [0, 2**32 - 1]")
    if not 0 <= seed <= MAX_WIDE_SEED:
        raise ValueError(f"stream {name}: seed {seed} is not in [0, 2**128 - 1]")
    seed_words = [seed] if seed <= MAX_WORD else wide_seed_words(seed)
    return [word for part in stream.layout
            for word in (seed_words if part == SEED else [identity[part] if isinstance(part, str) else part])]


def wide_seed_words(seed: int) -> list[int]:
    """A seed of 2**32 or more (a secret seed's 128 bits): always four words, lowest first, then the
    tag ``WIDE_SEED``, so a wide seed's list is longer than any one-word seed's list of the same stream
    and never ends in a place another stream's identity could fill."""
    return [(seed >> (32 * k)) & MAX_WORD for k in range(4)] + [WIDE_SEED]


def generator(name: str, seed: int, **identity: int) -> np.random.Generator:
    """``numpy.random.default_rng`` of the stream's entropy."""
    return np.random.default_rng(entropy(name, seed, **identity))


def seed_sequence(name: str, seed: int, **identity: int) -> np.random.SeedSequence:
    """The stream's ``SeedSequence``, for a stream that derives keys rather than drawing numbers."""
    return np.random.SeedSequence(entropy(name, seed, **identity))
