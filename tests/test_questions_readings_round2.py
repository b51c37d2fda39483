"""The second readings of the second blind reading (issue 26, round 1 of the rewritten templates),
each planted on a hand-made scene and seen rewritten: a same-attribute phrase whose anchor only the
scene keeps out («шар такого же размера, как зелёный предмет»), a phrase naming all its anchor's
attributes («других цилиндров … что и у цилиндра»), a chain's middle object that an earlier one
also fits («Перед коричневым металлическим объектом находится коричневый объект»), and a pronoun
said again as its bare phrase.

Scenes, questions and realisers are the real ones (see tests/test_questions_readings.py).
"""

from __future__ import annotations

import re
from collections import Counter

import pytest
from test_questions_readings import english, question_on, russian_texts, scene_of

from assets.vocabulary import load_vocabulary
from filter.morph import MorphChecker
from questions.families import load_families
from questions.random_stream import RandomStream
from questions.readings import NO_TEMPLATE, UNSAFE_FIELD, loops_back, names_its_anchor, said_apart, structure_of
from questions.scene_questions import readable_english
from translate.native import NativeRealiser


@pytest.fixture(scope="module")
def families():
    return load_families()


@pytest.fixture(scope="module")
def realiser():
    return NativeRealiser()


def test_other_is_said_where_only_the_scene_keeps_the_anchor_out(families, realiser):
    family = families["query/same_size/material"]
    # The green thing is a cube, so it is not «шар такого же размера» on this scene; a reader who
    # does not see the scene cannot know that: «другой шар» / "the other sphere".
    scene = scene_of(("large", "green", "rubber", "cube", 0, 0), ("large", "red", "metal", "sphere", 1, 0),
                     ("small", "blue", "rubber", "sphere", 2, 0))
    question = question_on(family, scene, {"<C>": "green", "<S2>": "sphere"})
    assert question["answer"] == "metal" and "self:<S2>" not in question[UNSAFE_FIELD]
    assert not said_apart(family, structure_of(family), question["params"])
    for text in russian_texts(realiser, question):
        assert re.search(r"\bдруг\w+ (шар|сфер)", text), text
    for seed in range(6):
        assert re.search(r"\bother\b", english(family, question, seed, Counter())[1])


def test_other_and_except_are_left_out_where_the_words_keep_the_anchor_out(families, realiser):
    family = families["exist/same_size"]
    # «Есть ли, кроме синего кубика, зелёные объекты …»: the blue cube cannot be green anyway.
    scene = scene_of(("small", "blue", "rubber", "cube", 0, 0), ("small", "green", "metal", "sphere", 1, 0),
                     ("large", "red", "rubber", "cylinder", 2, 0))
    question = question_on(family, scene, {"<C>": "blue", "<S>": "cube", "<C2>": "green"})
    assert said_apart(family, structure_of(family), question["params"])
    texts = russian_texts(realiser, question)
    assert any(text.startswith("Посмотри на синий") for text in texts)
    for text in texts:
        assert not re.search(r"\b(друг|ещё|еще|кроме)", text.lower()), text
    for seed in range(6):
        assert not re.search(r"\b(an)?other\b", english(family, question, seed, Counter())[1])


def test_a_phrase_naming_all_its_anchors_attributes_is_never_asked(families):
    family = families["count/same_color"]
    structure = structure_of(family)
    params = {name: "" for name in family.params} | {"<S>": "cylinder", "<S2>": "cylinder"}
    # «У скольких других цилиндров тот же цвет, что и у цилиндра?»: 0 whatever the scene.
    assert names_its_anchor(family, structure, params)
    assert not names_its_anchor(family, structure, params | {"<C2>": "red"} | {"<S>": "", "<M>": "metal"})
    refusals: Counter[str] = Counter()
    chosen = readable_english(family, params, [], load_vocabulary(), RandomStream.for_unit("questions.search", 0, 0), 0, refusals)
    assert chosen is None and refusals[f"{family.id} en {NO_TEMPLATE}"] == 1


def test_a_middle_object_that_fits_its_anchor_is_another_one(families, realiser):
    family = families["count/two_hop"]
    scene = scene_of(("large", "brown", "metal", "cube", 0, 0), ("small", "brown", "rubber", "sphere", 0.5, 2),
                     ("small", "gray", "rubber", "cylinder", -1, 3))
    question = question_on(family, scene, {"<C>": "brown", "<M>": "metal", "<R>": "front", "<C2>": "brown",
                                           "<R2>": "left", "<Z3>": "small", "<S3>": "cylinder"})
    assert question["answer"] == "1"
    for text in russian_texts(realiser, question):
        # «Перед коричневым металлическим объектом находится другой коричневый объект. Сколько … этого другого …» (the metal one fits too)
        assert re.search(r"\bдруг\w+ коричнев", text) and re.search(r"\bэт\w+ друг\w+ коричнев", text), text


def test_a_chain_object_the_recorded_readings_set_apart_from_an_earlier_one_is_another_one(families, realiser):
    family = families["count/three_hop"]
    # A red cube; behind it a sphere; right of the sphere a red cylinder (the only red thing there);
    # cubes in front of the cylinder: one, in front of the red cube: two.
    scene = scene_of(("large", "red", "metal", "cube", 0, 0), ("small", "gray", "rubber", "sphere", 0, -2),
                     ("small", "red", "rubber", "cylinder", 1, 1), ("small", "blue", "rubber", "cube", 2, 3),
                     ("small", "green", "rubber", "cube", 3, 0.5))
    question = question_on(family, scene, {"<C>": "red", "<S>": "cube", "<R>": "behind", "<R2>": "right", "<C3>": "red",
                                           "<R3>": "front", "<S4>": "cube"})
    assert question["answer"] == "1" and "anchor:<R3>:<S>" in question[UNSAFE_FIELD]
    for text in russian_texts(realiser, question):
        assert re.search(r"\bдруг\w+ красн", text), text
    # Where no such reading is recorded the red thing may be the first one: «другой» would be false.
    assert "same:<S3>:<S>" in question[UNSAFE_FIELD]  # two objects: the red cylinder is not the red cube
    maybe_same = {**question, UNSAFE_FIELD: [r for r in question[UNSAFE_FIELD] if r != "same:<S3>:<S>"]}
    for text in russian_texts(realiser, maybe_same):
        assert not re.search(r"\bдруг\w+ красн", text), text


def test_a_pronoun_said_again_as_its_phrase_says_this(realiser):
    params = {"<Z>": "", "<C>": "yellow", "<M>": "", "<S>": "cube", "<R>": "left", "<Z2>": "", "<C2>": "", "<M2>": "metal",
              "<S2>": "", "<Z3>": "large", "<C3>": "", "<M3>": "", "<S3>": "cylinder"}
    text = realiser.render("compare/one_hop/color", params, 2)
    # «он» would have two masculine antecedents (предмет, куб): the phrase is said again, with «этот».
    assert re.search(r"\. Этот металлический (предмет|объект) такого же цвета, как и большой цилиндр\?$", text), text


def test_the_asked_object_of_a_chain_is_another_one_only_where_it_differs_from_every_earlier_it_fits(families, realiser):
    family = families["query/two_hop/shape"]
    # In front of the large metal cube a sphere; left of the sphere: the large metal cube (it is
    # the asked object: same object, no «другой») or, on the second scene, a large metal cylinder.
    values = {"<Z>": "large", "<M>": "metal", "<S>": "cube", "<R>": "front", "<R2>": "left", "<Z3>": "large", "<M3>": "metal"}
    same = question_on(family, scene_of(("large", "red", "metal", "cube", 0, 0), ("small", "red", "rubber", "sphere", 1, 2)), values)
    assert same["answer"] == "cube" and "same:<S3>:<S>" not in same[UNSAFE_FIELD]
    other = question_on(family, scene_of(("large", "red", "metal", "cube", 0, 0), ("small", "red", "rubber", "sphere", -0.5, 2),
                                         ("large", "blue", "metal", "cylinder", -1, -1)), values)
    assert other["answer"] == "cylinder" and "same:<S3>:<S>" in other[UNSAFE_FIELD]
    for text in russian_texts(realiser, same):
        assert not re.search(r"\bдруг\w+ (больш|крупн)", text), text
    for text in russian_texts(realiser, other):
        assert re.search(r"\bдруг\w+ (больш|крупн)\w+ (металлическ|блестящ)", text), text


def test_a_chain_object_described_as_an_earlier_one_is_never_asked(families):
    family = families["query/three_hop/color"]
    structure = structure_of(family)
    params = {name: "" for name in family.params} | {"<S>": "cylinder", "<R>": "front", "<Z2>": "small", "<R2>": "behind",
                                                      "<S3>": "cylinder", "<R3>": "left"}
    # «Впереди цилиндра расположен маленький предмет. За ним расположен цилиндр»: the one cylinder again.
    assert names_its_anchor(family, structure, params)
    assert not names_its_anchor(family, structure, params | {"<S3>": "", "<C3>": "red"})
    refusals: Counter[str] = Counter()
    assert readable_english(family, params, [], load_vocabulary(), RandomStream.for_unit("questions.search", 0, 0), 0, refusals) is None


def test_a_subject_said_again_after_what_located_it_says_this(realiser):
    params = {
        "<Z>": "", "<C>": "", "<M>": "metal", "<S>": "", "<R>": "left", "<Z2>": "", "<C2>": "", "<M2>": "", "<S2>": "",
        "<Z3>": "small", "<C3>": "", "<M3>": "", "<S3>": ""}
    text = realiser.render("compare/one_hop/shape", params, 2)
    # «Посмотри на предмет слева от металлического предмета. Этот предмет такой же формы, …»
    assert re.search(r"^Посмотри на (предмет|объект) (слева от|левее) металлического \w+\. Этот (предмет|объект) такой же формы, ", text), text


def test_a_set_found_by_a_relation_that_fits_its_anchor_is_of_other_objects(realiser):
    params = {"<Z>": "large", "<C>": "", "<M>": "", "<S>": "", "<R>": "left", "<Z2>": "large", "<C2>": "", "<M2>": "", "<S2>": ""}
    # «Есть ли слева от большого предмета какой-нибудь большой предмет?»: the anchor is never among them.
    assert realiser.render("exist/one_hop", params, 1) == "Есть ли слева от большого предмета какой-нибудь другой большой предмет?"
    # Said before its anchor, the set needs nothing: «Есть ли большие предметы слева от большого предмета?»
    assert "друг" not in realiser.render("exist/one_hop", params, 0)
    # The anchor said after the object it locates is not «другой» (it is found by no relation).
    metal = {"<Z>": "", "<C>": "", "<M>": "metal", "<S>": "sphere", "<R>": "front", "<Z2>": "", "<C2>": "", "<M2>": "metal", "<S2>": ""}
    assert "друг" not in realiser.render("query/one_hop/shape", metal, 1)


def test_a_chain_coming_back_to_an_earlier_object_is_never_asked(families):
    family = families["query/two_hop/size"]
    structure = structure_of(family)
    values = {"<C>": "gray", "<S>": "cube", "<R>": "right", "<S2>": "sphere", "<C3>": "gray"}
    # «Правее серого куба находится сфера. Какого размера серый предмет левее этой сферы?»: the cube itself.
    back = question_on(family, scene_of(("large", "gray", "metal", "cube", 0, 0), ("small", "red", "rubber", "sphere", 1, 0)),
                       values | {"<R2>": "left"})
    assert back["answer"] == "large" and "same:<S3>:<S>" not in back[UNSAFE_FIELD]
    assert loops_back(family, structure, back["params"], back[UNSAFE_FIELD])
    refusals: Counter[str] = Counter()
    vocabulary = load_vocabulary()
    assert readable_english(family, back["params"], back[UNSAFE_FIELD], vocabulary, RandomStream.for_unit("questions.search", 0, 0), 0, refusals) is None
    # In front of the sphere: another gray thing, a question with one reading.
    ahead = question_on(family, scene_of(("large", "gray", "metal", "cube", 0, 0), ("small", "red", "rubber", "sphere", 1, 0),
                                         ("small", "gray", "rubber", "cylinder", 2, 3)), values | {"<R2>": "front"})
    assert ahead["answer"] == "small" and "same:<S3>:<S>" in ahead[UNSAFE_FIELD]
    assert not loops_back(family, structure, ahead["params"], ahead[UNSAFE_FIELD])


def test_a_pronoun_right_after_the_phrase_its_relation_describes_stands_for_the_other_one(realiser):
    params = {"<Z>": "", "<C>": "purple", "<M>": "rubber", "<S>": "", "<R>": "left", "<Z2>": "", "<C2>": "purple", "<M2>": "",
              "<S2>": ""}
    # «… другой фиолетовый предмет слева от него»: «него» cannot be the phrase «слева от него» describes.
    text = realiser.render("query/one_hop/material", params, 2)
    assert re.search(r"другой фиолетовый (предмет|объект) слева от него\?$", text), text
    checker = MorphChecker()
    assert checker.problems(text) == []
    # Two nouns before it that it could stand for: still refused by the filter.
    assert checker.problems("Посмотри на куб за цилиндром. Что слева от него?")
    assert checker.problems("Посмотри на куб за цилиндром. Что за ним?")


def test_a_scene_wide_phrase_said_again_word_for_word_is_this_one(realiser):
    params = {"<Z>": "", "<C>": "brown", "<M>": "", "<S>": "", "<Z2>": "", "<C2>": "brown", "<M2>": "", "<S2>": "", "<R>": "left",
              "<Z3>": "", "<C3>": "", "<M3>": "", "<S3>": ""}
    # Both «коричневый предмет» are the only brown thing: the second is «этот», not a new one.
    text = realiser.render("compare/zero_one_hop/size", params, 1)
    assert text == "Совпадает ли размер коричневого предмета с размером предмета слева от этого коричневого предмета?", text
    assert "этого" not in realiser.render("compare/zero_one_hop/size", params | {"<C2>": "red"}, 1)
