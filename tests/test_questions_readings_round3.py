"""Second readings of the third blind reading's input (issue 26, round 2 of the rewritten
templates), planted on hand-made scenes: a chain object said again where an earlier object fits
its words too («этого цилиндра» after «резиновый цилиндр … другой цилиндр»), and «другой» before a
bare noun whose relation follows it («Какой величины другой предмет справа от этого жёлтого
предмета?»: other than what?).

Scenes, questions and realisers are the real ones (see tests/test_questions_readings.py).
"""

from __future__ import annotations

import re

import pytest
from test_questions_readings import question_on, russian_texts, scene_of

from filter.morph import MorphChecker
from questions.families import load_families
from translate.native import NativeRealiser

# A small rubber ball, a yellow cube right of it, a large red cylinder right of the cube.
ROW = scene_of(("small", "cyan", "rubber", "sphere", 0, 0), ("small", "yellow", "metal", "cube", 1, 0),
               ("large", "red", "metal", "cylinder", 2, 0))


@pytest.fixture(scope="module")
def families():
    return load_families()


def test_a_bare_noun_before_the_relation_that_finds_it_takes_no_other(families):
    family = families["query/two_hop/size"]
    question = question_on(family, ROW, {"<Z>": "small", "<M>": "rubber", "<S>": "sphere", "<C2>": "yellow",
                                         "<R>": "right", "<R2>": "right"})
    assert question["answer"] == "large"
    texts = russian_texts(NativeRealiser(), question)
    searched = [text for text in texts if re.search(r"(предмет|объект)\w* (справа от|правее) это", text)]
    assert searched, texts
    for text in searched:
        assert not re.search(r"\bдруг\w+ (предмет|объект)\w* (справа от|правее) это", text), text
        assert MorphChecker().problems(text) == [], text


def test_a_chain_object_said_again_where_an_earlier_one_fits_it_is_this_other_one(families):
    family = families["query/three_hop/material"]
    # A blue cube; a rubber cylinder in front of it; another cylinder left of that; a large blue
    # thing behind the second cylinder (and none behind the rubber one).
    scene = scene_of(("small", "blue", "metal", "cube", 0, 0), ("small", "gray", "rubber", "cylinder", 0, 1),
                     ("small", "green", "metal", "cylinder", -1, 1), ("large", "blue", "rubber", "sphere", -1.5, 0.5))
    question = question_on(family, scene, {"<C>": "blue", "<S>": "cube", "<R>": "front", "<M2>": "rubber", "<S2>": "cylinder",
                                           "<R2>": "left", "<S3>": "cylinder", "<R3>": "behind", "<Z4>": "large", "<C4>": "blue"})
    assert question["answer"] == "rubber"
    texts = [text for text in russian_texts(NativeRealiser(), question) if "цилиндр" in text]
    assert texts
    for text in texts:
        # «позади этого цилиндра» fits the rubber one too: «этого другого цилиндра», or the pronoun
        assert not re.search(r"\bэт\w+ (цилиндр|цилиндра|цилиндром)\b", text.split(".")[-1]), text
