"""benchmarks/reading_bench.py's Russian audits read the kinds blind readers took two ways (round 10,
issue 36) and `between`'s adjective reaching its bare end, and pass the wordings that have one reading."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import module_from_file
from test_questions_readings import question_on, russian_texts, scene_of

from questions.families import load_families
from questions.readings import UNSAFE_FIELD
from translate.native import NativeRealiser

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "reading_bench.py"


@pytest.fixture(scope="module")
def bench():
    return module_from_file(BENCH)


@pytest.fixture(scope="module")
def families():
    return load_families()


def audit(bench, families, question: dict, text: str) -> dict[str, int]:
    return bench._russian_audit([(question, text)], families)


def test_other_said_of_two_objects_and_a_set_on_its_own_words_are_counted(bench, families):
    question = {"family": "query/three_hop/material", "params": {}, UNSAFE_FIELD: []}
    k294 = ("Левее желтого объекта расположен другой объект. За этим другим объектом расположен крупный серый объект. "
            "Из чего сделан другой крупный объект правее этого крупного серого объекта?")
    k24 = "За блестящим кубиком стоит другой предмет, справа от которого стоит другой предмет. Из чего сделан шар слева от него?"
    assert audit(bench, families, question, k294)["other_said_of_two_objects"] == 1
    assert audit(bench, families, question, k24)["other_said_of_two_objects"] == 1
    # «другой» once, then the same object again («этого другого объекта»): one referent
    once = "Левее желтого объекта расположен другой объект. Из чего сделан крупный объект правее этого другого объекта?"
    assert audit(bench, families, question, once)["other_said_of_two_objects"] == 0
    exist = {"family": "exist/and_relate", "params": {}, UNSAFE_FIELD: []}
    k120 = "Есть ли сферы, которые находятся позади крупного резинового объекта и при этом справа от сферы?"
    assert audit(bench, families, exist, k120)["set_anchored_on_its_own_words"] == 1
    assert audit(bench, families, exist, "Есть ли шары левее синего шара и правее куба?")["set_anchored_on_its_own_words"] == 0


def test_between_with_the_adjective_before_the_bare_end_is_counted_and_never_realised(bench, families):
    scene = scene_of(("small", "blue", "rubber", "sphere", 0, 0), ("large", "red", "metal", "cube", 1, 0),
                     ("large", "gray", "rubber", "cylinder", 2, 0), ("small", "gray", "rubber", "cube", 3, 3))
    for obj in scene["objects"]:
        obj["3d_coords"] = [obj["x"], obj["y"], 0.5]  # between needs positions
    question = question_on(families["between/exist"], scene, {"<Z>": "small", "<S>": "sphere", "<S2>": "cylinder", "<S3>": "cube"})
    assert "distribute:<S>:<S2>" in question[UNSAFE_FIELD]
    written = "Есть ли кубы между маленькой сферой и цилиндром?"
    assert audit(bench, families, question, written)["adjectives_before_coordinated_nouns"] == 1
    texts = russian_texts(NativeRealiser(), question, 8)
    assert all(audit(bench, families, question, text)["adjectives_before_coordinated_nouns"] == 0 for text in texts), texts
