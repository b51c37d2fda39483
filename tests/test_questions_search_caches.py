"""The search's shortcuts give what the plain path gives, on sampled scenes: filter options found
with early pruning, program keys made without writing the program; checkpoint chunks written by
orjson read back as written."""

from __future__ import annotations

import itertools
import json

import pytest

from questions.families import load_families
from questions.plan import FIXED, Plan, expand_program
from questions.random_stream import RandomStream
from questions.scene_index import SceneIndex
from questions.scene_questions import candidate_key, program_key
from questions.search import SceneSearch
from ruclevr.io import atomic_write_compact_json, read_json

SCENES = 40


@pytest.fixture(scope="module")
def plans() -> list[Plan]:
    return [Plan.of(family) for family in load_families().values()]


def stream(index: int) -> RandomStream:
    return RandomStream.for_unit("questions.search", 0, index)


def plain_filter_options(search: SceneSearch, base: int, node) -> list[tuple[tuple[str, ...], int]]:
    """Every assignment of the node's slots, in slot order, kept when each chosen filter narrows
    the set and dropping any one of them would give another set (and, for a unique, one object)."""
    per_slot = []
    for slot in node.slots:
        values = [slot.literal] if slot.mode == FIXED else list(search.value_options(slot.attribute))
        per_slot.append(([""] if slot.mode in ("free", "empty") else []) + ([] if slot.mode == "empty" else values))
    options = []
    for chosen in itertools.product(*per_slot):
        masks = [search.scene.mask(slot.attribute, value) for slot, value in zip(node.slots, chosen, strict=True) if value]
        result = base
        for mask in masks:
            result &= mask
        if node.need_single and result.bit_count() != 1:
            continue
        if node.need_some and not any(chosen):
            continue
        needed = all(
            _and_all(base, masks[:skip] + masks[skip + 1:]) != result for skip in range(len(masks))
        )
        if needed:
            options.append((tuple(chosen), result))
    return options


def _and_all(base: int, masks: list[int]) -> int:
    for mask in masks:
        base &= mask
    return base


def test_filter_options_are_the_plain_enumeration(thousand_scenes, plans):
    # one filter node of each kind: the options depend on nothing else
    filters = list({node.option_id: node for plan in plans for node in plan.nodes if node.kind == "filter"}.values())
    compared = 0
    for index, scene in enumerate(thousand_scenes[:SCENES]):
        search = SceneSearch(SceneIndex.from_scene(scene), stream(index))
        bases = {search.scene.all, search.scene.mask("shape", "cube"), search.scene.mask("size", "large")}
        for node in filters:
            for base in sorted(bases):
                expected = plain_filter_options(search, base, node)
                found = search.filter_options(base, node)
                # the single-object options come object by object; the others in slot order
                assert sorted(found) == sorted(expected) if node.need_single else found == expected
                compared += len(found)
    assert compared > 10_000


def test_candidate_key_is_the_key_of_the_written_program(thousand_scenes, plans):
    keys = 0
    for index, scene in enumerate(thousand_scenes[:SCENES]):
        search = SceneSearch(SceneIndex.from_scene(scene), stream(index))
        for plan in plans:
            candidate = search.find(plan, search.steps + 300)
            if candidate is not None:
                assert candidate_key(plan, candidate.choices) == program_key(expand_program(plan, candidate.choices))
                keys += 1
    assert keys > 20 * SCENES


def test_compact_checkpoints_read_back_as_written(tmp_path):
    chunk = {"start": 0, "questions": [{"question": "Есть ли «куб»?", "answer": "yes", "x": 1e-9, "big": 2**70}]}
    atomic_write_compact_json(tmp_path / "chunk.json", chunk)
    assert read_json(tmp_path / "chunk.json") == chunk
    small = {"question": "What color is the ball?", "values": [1, 2.5, None, True]}
    atomic_write_compact_json(tmp_path / "small.json", small)
    assert read_json(tmp_path / "small.json") == json.loads(json.dumps(small))
