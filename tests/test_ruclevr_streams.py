"""``ruclevr.streams``: the one registry of seeded random streams. The layouts are pinned, so the
same command keeps giving the same numbers, and no product module seeds a generator of its own."""

from __future__ import annotations

import ast
import re
import zlib
from pathlib import Path

import numpy as np
import pytest

from ruclevr import streams

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("ruclevr", "assets", "render", "questions", "translate", "filter", "dataset")

#: (stream, seed, identity) -> the entropy list every earlier release used.
PUBLISHED_LAYOUTS = [
    ("render.scene", 5, {"index": 12}, [5, 12]),
    ("questions.search", 5, {"image_index": 12}, [5, 12, 3]),
    ("questions.relax", 5, {"image_index": 12}, [5, 12, zlib.crc32(b"questions.relax")]),
    ("augment.recolour", 5, {"image_index": 12}, [5, 12, 7]),
    ("augment.search", 5, {"image_index": 12}, [5, 12, 7, zlib.crc32(b"augment.search")]),
    ("augment.question", 5, {"image_index": 12, "question_index": 4}, [5, 12, 4, 7]),
    ("translate.native", 5, {}, [5, 0x72755F6E6174]),
    ("dataset.shots", 5, {}, [5, zlib.crc32(b"dataset.shots")]),
    ("dataset.like", 5, {}, [5, zlib.crc32(b"dataset.like")]),
    ("dataset.pairs", 5, {"image_index": 12}, [5, 12, zlib.crc32(b"dataset.pairs")]),
    ("dataset.prompt", 5, {"type_number": 2}, [5, zlib.crc32(b"dataset.prompt"), 2]),
    ("annotate.control", 5, {}, [5, zlib.crc32(b"annotate.control")]),
    ("annotate.task_order", 5, {}, [5, zlib.crc32(b"annotate.task_order")]),
    ("annotate.annotator_order", 5, {"annotator": 3}, [5, zlib.crc32(b"annotate.annotator_order"), 3]),
    ("reading.sample", 5, {}, [5, zlib.crc32(b"reading.sample")]),
    ("render.legibility_fit", 5, {"attribute": 1}, [5, zlib.crc32(b"render.legibility_fit"), 1]),
]


@pytest.mark.parametrize(("name", "seed", "identity", "expected"), PUBLISHED_LAYOUTS, ids=[row[0] for row in PUBLISHED_LAYOUTS])
def test_each_stream_keeps_its_published_layout_and_numbers(name, seed, identity, expected) -> None:
    assert streams.entropy(name, seed, **identity) == expected
    drawn = streams.generator(name, seed, **identity).random(4)
    assert np.array_equal(drawn, np.random.default_rng(expected).random(4))
    key = streams.seed_sequence(name, seed, **identity).generate_state(8, dtype=np.uint32)
    assert np.array_equal(key, np.random.SeedSequence(expected).generate_state(8, dtype=np.uint32))


def test_every_registered_stream_is_pinned() -> None:
    assert {row[0] for row in PUBLISHED_LAYOUTS} == set(streams.STREAMS)


def test_a_draw_must_name_exactly_the_stream_identity() -> None:
    with pytest.raises(TypeError, match=r"questions\.search is identified by \('image_index',\)"):
        streams.entropy("questions.search", 0, index=1)
    with pytest.raises(TypeError):
        streams.entropy("render.scene", 0)
    with pytest.raises(KeyError):
        streams.entropy("no.such.stream", 0)


def test_units_draw_apart_and_seeds_change_the_numbers() -> None:
    first = streams.generator("questions.search", 0, image_index=0).random(3)
    assert not np.array_equal(first, streams.generator("questions.search", 0, image_index=1).random(3))
    assert not np.array_equal(first, streams.generator("questions.search", 1, image_index=0).random(3))
    assert np.array_equal(first, streams.generator("questions.search", 0, image_index=0).random(3))


def product_files() -> list[Path]:
    return [path for package in PACKAGES for path in sorted((ROOT / package).rglob("*.py"))]


def test_no_product_module_seeds_a_generator_outside_the_registry() -> None:
    seeding = {"default_rng", "SeedSequence", "RandomState", "seed"}
    offenders = []
    for path in product_files():
        if path == ROOT / "ruclevr" / "streams.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in seeding:
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not offenders


def test_every_registered_stream_is_drawn_by_the_product() -> None:
    drawing = [*product_files(), *sorted((ROOT / "benchmarks").glob("*.py"))]  # the reading sample is drawn by a benchmark
    text = "\n".join(path.read_text(encoding="utf-8") for path in drawing if path.name != "streams.py")
    used = set(re.findall(r"""["']((?:render|questions|augment|translate|dataset|annotate|reading)\.[a-z_]+)["']""", text))
    assert set(streams.STREAMS) <= used


def test_no_two_streams_draw_the_same_numbers() -> None:
    """Every stream's entropy list differs from every other stream's, over the identities a run
    can give (scene and question indices, type numbers, annotators); the constant tags lie above
    the largest scene index, so no identity can reach them."""
    from itertools import product

    from render import MAX_SCENES

    lists: dict[tuple[int, ...], str] = {}
    for name, stream in streams.STREAMS.items():
        for values in product(range(24), repeat=len(stream.identity)):
            entropy = tuple(streams.entropy(name, 5, **dict(zip(stream.identity, values, strict=True))))
            assert lists.setdefault(entropy, name) == name, f"{name} and {lists[entropy]} share {entropy}"
        tags = [part for part in stream.layout if isinstance(part, int) and part > 7]
        assert all(part > MAX_SCENES for part in tags), name


def _words(entropy: list[int]) -> tuple[int, ...]:
    """What SeedSequence hashes: each number as its 32-bit words, low first; trailing zero words
    change nothing (``[a, b]`` draws what ``[a, b, 0]`` draws)."""
    words: list[int] = []
    for number in entropy:
        words.append(number & 0xFFFFFFFF)
        number >>= 32
        while number:
            words.append(number & 0xFFFFFFFF)
            number >>= 32
    while words and words[-1] == 0:
        words.pop()
    return tuple(words)


def test_seeds_past_32_bits_are_wide_words_so_streams_never_meet() -> None:
    """The seed 2**32 * 5 + 7 once spilled into the next place: render.scene(seed=2**32*5+7,
    index=3) drew the numbers of questions.search(seed=7, image_index=5). Identities are now one word
    each, and a seed past one word (a secret seed's 128 bits) is four fixed-width words and a tag;
    over a sample that crosses 2**32 either a draw is refused or no two streams of different purposes
    hash the same words."""
    from itertools import product

    assert _words([2**32 * 5 + 7, 3]) == _words(streams.entropy("questions.search", 7, image_index=5))
    assert _words(streams.entropy("render.scene", 2**32 * 5 + 7, index=3)) != _words([2**32 * 5 + 7, 3])
    with pytest.raises(ValueError, match=r"index 4294967296 is not in \[0, 2\*\*32 - 1\]"):
        streams.entropy("render.scene", 7, index=2**32)
    with pytest.raises(ValueError, match=r"seed .* is not in \[0, 2\*\*128 - 1\]"):
        streams.entropy("render.scene", 2**128, index=0)
    sample = [0, 1, 3, 5, 7, 2**31, 2**32 - 1, 2**32, 2**32 + 7, 2**32 * 5 + 7, 2**40]
    seeds = [*sample, 2**64 + 3, 2**127 + 5, 2**128 - 1]
    owners: dict[tuple[int, ...], str] = {}
    refused = 0
    for name, stream in streams.STREAMS.items():
        for seed, *values in product(seeds, *[sample] * len(stream.identity)):
            try:
                entropy = streams.entropy(name, seed, **dict(zip(stream.identity, values, strict=True)))
            except ValueError:
                refused += 1
                assert max(values) >= 2**32
                continue
            words = _words(entropy)
            assert owners.setdefault(words, name) == name, f"{name} and {owners[words]} hash the same words {words}"
    assert refused > 0


def test_cli_seeds_past_128_bits_are_refused_in_one_line(capsys) -> None:
    from render.cli import main as render_main
    from ruclevr.cli import exit_status

    assert exit_status(render_main, ["--n", "1", "--seed", str(2**128), "--out", "/nonexistent/never"]) == 2
    assert "--seed: must be at most 2**128 - 1" in capsys.readouterr().err
