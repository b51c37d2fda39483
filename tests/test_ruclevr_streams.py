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
    ("dataset.prompt", 5, {"type_number": 2}, [5, zlib.crc32(b"dataset.prompt"), 2]),
    ("annotate.control", 5, {}, [5, zlib.crc32(b"annotate.control")]),
    ("annotate.task_order", 5, {}, [5, zlib.crc32(b"annotate.task_order")]),
    ("annotate.annotator_order", 5, {"annotator": 3}, [5, zlib.crc32(b"annotate.annotator_order"), 3]),
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
    text = "\n".join(path.read_text(encoding="utf-8") for path in product_files() if path.name != "streams.py")
    used = set(re.findall(r"""["']((?:render|questions|augment|translate|dataset|annotate)\.[a-z_]+)["']""", text))
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
