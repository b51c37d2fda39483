"""A pronoun placeholder after a preposition written in the template's text takes its н-form
(за ним, между ней, позади него), as after a relation; after the dative prepositions that keep
the plain form (благодаря ему, включая его) it does not. Real realiser, real pymorphy3; the filter reads the
texts back and catches the plain form a template could not avoid before («позади его»)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from filter import MorphChecker
from questions.families import load_families
from russian.morphology import takes_n_form
from translate.native import NativeRealiser

# A shipped family with two objects (<S> a sphere: feminine; <S2> a cube: masculine), its
# Russian text replaced by the template under test.
FAMILY = "compare/zero_hop/color"
VALUES = ["large", "red", "rubber", "sphere", "small", "", "", "cube"]
START = "Одинакового ли цвета [<Z> <C> <M> <S>] и [<Z2> <C2> <M2> <S2>]"
SAID = "Одинакового ли цвета большая красная резиновая сфера и маленький куб"


def realised(ending: str) -> str:
    family = load_families()[FAMILY]
    realiser = NativeRealiser(families=[replace(family, text={"en": family.text["en"], "ru": (START + ending,)})])
    return realiser.render(FAMILY, dict(zip(family.params, VALUES, strict=True)))


@pytest.mark.parametrize("ending, text", [
    (", что стоит за [он|<S>,твор]?", ", что стоит за ней?"),  # u1, u3: «чем за ей»
    (" перед [он|<S>,твор]?", " перед ней?"),
    (" позади [он|<S>,род]?", " позади неё?"),  # a derived preposition (u1: «позади его»)
    (" впереди [он|<S2>,род]?", " впереди него?"),
    (" около [он|<S>,род]?", " около неё?"),
    (" левее [он|<S>,род]?", " левее неё?"),  # a comparative of place governs like one
    (" из-за [он|<S>,род]?", " из-за неё?"),
    (" [за он|<S>,твор]?", " за ней?"),  # the preposition typed inside the group (u3)
    (", и есть ли что-то между [он|<S>,твор] и [он|<S2>,твор]?", ", и есть ли что-то между ней и ним?"),  # u2; «и ним» too
    (", видный благодаря [он|<S>,дат]?", ", видный благодаря ей?"),  # a dative derived preposition keeps the plain form
    (", включая [он|<S>,вин]?", ", включая её?"),  # a gerund pymorphy3 reads as a preposition keeps it too
    (", и знаешь ли ты [он|<S>,вин] и [он|<S2>,вин]?", ", и знаешь ли ты её и его?"),  # no preposition: no н
])
def test_a_pronoun_after_a_preposition_of_the_text_takes_its_n_form(ending, text):
    said = realised(ending)
    assert said == SAID + text
    assert MorphChecker().problems(said.replace("ё", "е")) == []


@pytest.mark.parametrize("word, n_form", [
    ("за", True), ("перед", True), ("между", True), ("у", True), ("с", True), ("к", True), ("о", True),
    ("позади", True), ("впереди", True), ("возле", True), ("вокруг", True), ("напротив", True), ("среди", True),
    ("левее", True), ("Правее", True),
    ("благодаря", False), ("согласно", False), ("вопреки", False), ("навстречу", False),
    ("включая", False), ("Исключая", False), ("спустя", False),
    ("чем", False), ("и", False), ("ли", False), ("слева", False),
])
def test_which_words_give_the_n_form(word, n_form):
    assert takes_n_form(word) is n_form


@pytest.mark.parametrize("text, wrong", [
    ("Больше ли кубов перед шаром, чем позади его?", "«его» after «позади» should be «него»"),
    ("Больше ли кубов перед шаром, чем за ей?", "«ей» after «за» should be «ней»"),
    ("Есть ли предметы между ей и кубом?", "«ей» after «между» should be «ней»"),
    ("Сколько предметов возле их?", "«их» after «возле» should be «них»"),
    ("Сколько предметов впереди её?", "«её» after «впереди» should be «неё»"),
    ("Сколько предметов, включая него?", "«него» after «включая» should be «его»"),
    ("Сколько предметов, исключая неё?", "«неё» after «исключая» should be «её»"),
    ("Виден ли куб благодаря нему?", "«нему» after «благодаря» should be «ему»"),
])
def test_the_filter_catches_a_plain_pronoun_after_a_preposition(text, wrong):
    assert f"preposition: {wrong}" in MorphChecker().problems(text)


@pytest.mark.parametrize("text", [
    "Больше ли кубов перед шаром, чем позади него?",
    "Что стоит позади его куба?",  # the possessive before a noun keeps its plain form
    "Виден ли куб благодаря ему?",
    "Сколько предметов, включая его?",
    "Сколько предметов, исключая её?",
])
def test_the_filter_accepts_the_n_form_the_possessive_and_blagodarya(text):
    assert MorphChecker().problems(text) == []
