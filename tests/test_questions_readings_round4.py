"""Second readings of the fourth blind reading's input (issue 26, round 3 of the rewritten
templates): a chain whose later phrase an earlier object also fits by position («За сферой
расположен синий предмет. Какой материал у большого предмета впереди него?»: the sphere is in
front of the blue thing itself). Where the program's object is another one, «другой» says so;
where it is the earlier object again, the question is not asked.

Scenes, questions and realisers are the real ones (see tests/test_questions_readings.py).
"""

from __future__ import annotations

import re

import pytest
from test_questions_readings import question_on, russian_texts, scene_of

from filter.morph import MorphChecker
from questions.families import load_families
from questions.readings import chain_before, loops_back, structure_of
from translate.native import NativeRealiser

VALUES = {"<S>": "sphere", "<R>": "behind", "<C2>": "blue", "<R2>": "front", "<Z3>": "large"}


@pytest.fixture(scope="module")
def families():
    return load_families()


def test_the_anchor_of_the_anchor_is_before_the_chain_phrase(families):
    structure = structure_of(families["query/two_hop/material"])
    later = structure.relation_target["<R2>"]
    assert chain_before(structure, later) == {structure.relation_anchor["<R>"]}
    assert chain_before(structure, structure.relation_target["<R>"]) == frozenset()


def test_another_large_thing_in_front_of_it_is_said_other(families):
    family = families["query/two_hop/material"]
    # A small sphere; a blue cube behind it; a large metal cylinder in front of the cube.
    scene = scene_of(("small", "gray", "rubber", "sphere", 0, 1), ("small", "blue", "rubber", "cube", 0, 0),
                     ("large", "red", "metal", "cylinder", 1, 2))
    question = question_on(family, scene, VALUES)
    assert question["answer"] == "metal"
    structure = structure_of(family)
    assert not loops_back(family, structure, question["params"], question["unsafe_readings"])
    texts = russian_texts(NativeRealiser(), question)
    asked = [text for text in texts if text and re.search(r"(больш|крупн)\w+ (предмет|объект)", text)]
    assert asked, texts
    for text in asked:
        assert re.search(r"\bдруг\w+ (больш|крупн)", text), text
        assert MorphChecker().problems(text) == [], text


def test_the_large_sphere_again_is_not_asked(families):
    family = families["query/two_hop/material"]
    # A large sphere; a blue cube behind it: the large thing in front of the cube is the sphere.
    scene = scene_of(("large", "gray", "rubber", "sphere", 0, 1), ("small", "blue", "rubber", "cube", 0, 0))
    question = question_on(family, scene, VALUES)
    assert question["answer"] == "rubber"
    assert loops_back(family, structure_of(family), question["params"], question["unsafe_readings"])
