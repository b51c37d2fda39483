"""English realisation of family text templates."""

from __future__ import annotations

import itertools

from assets.placeholders import placeholders
from assets.vocabulary import load_vocabulary
from questions.random_stream import RandomStream
from questions.text import english_template_problems, normalise_text, realise_english, tidy_english

TYPES = {"<Z>": "size", "<C>": "color", "<M>": "material", "<S>": "shape", "<R>": "relation", "<S2>": "shape"}


def realisations(template, values, draws=200):
    vocabulary = load_vocabulary()
    return {
        realise_english(template, values, TYPES, vocabulary, RandomStream.for_unit("questions.search", seed, 0))
        for seed in range(draws)
    }


def test_synonyms_plurals_and_empty_parameters():
    texts = realisations("How many <Z> <C> <M> <S>s are there?", {"<Z>": "", "<C>": "red", "<M>": "", "<S>": "cube"})
    # the vocabulary's synonyms of cube: cube, block
    assert texts == {"How many red cubes are there?", "How many red blocks are there?"}


def test_empty_shape_reads_as_the_object_noun():
    texts = realisations("What color is the <Z> <C> <M> <S>?", {"<Z>": "large", "<C>": "", "<M>": "metal", "<S>": ""})
    sizes, materials, nouns = ("large", "big"), ("metal", "metallic", "shiny"), ("thing", "object")
    expected = {f"What color is the {z} {m} {n}?" for z, m, n in itertools.product(sizes, materials, nouns)}
    assert texts == expected


def test_relation_words_optional_parts_and_articles():
    texts = realisations(
        "There is a <Z> <S>; is there a <S2> [that is] <R> it?", {"<Z>": "", "<S>": "", "<S2>": "sphere", "<R>": "front"}
    )
    expected = {
        f"There is {article} {noun}; is there a {ball} {optional}in front of it?"
        for (article, noun), ball, optional in itertools.product(
            [("a", "thing"), ("an", "object")], ["sphere", "ball"], ["", "that is "]
        )
    }
    assert texts == expected


def test_same_stream_same_text():
    vocabulary = load_vocabulary()
    values = {"<Z>": "small", "<C>": "cyan", "<M>": "rubber", "<S>": "cylinder"}
    first = realise_english("What is the <Z> <C> <M> <S> [made] of?", values, TYPES, vocabulary, RandomStream.for_unit("questions.search", 7, 3))
    again = realise_english("What is the <Z> <C> <M> <S> [made] of?", values, TYPES, vocabulary, RandomStream.for_unit("questions.search", 7, 3))
    assert first == again


def test_tidy_and_normalise():
    assert tidy_english("  is there a  object ?") == "Is there an object?"
    assert tidy_english("a big cube , a apple") == "A big cube, an apple"
    assert normalise_text("Is there a Big, red  cube?") == "is there a big red cube"


def test_template_problems():
    assert english_template_problems("How many <C> <S>s?", {"<C>": "color", "<S>": "shape"}) == []
    assert english_template_problems("How many <C> <S>s? [a [b]]", {"<C>": "color", "<S>": "shape"}) == [
        "nested [ ]: optional parts cannot contain optional parts"
    ]
    assert english_template_problems("How many <c> <S>s?", {"<S>": "shape"}) == [
        "malformed placeholder '<c>'; write <NAME> with capitals and digits"
    ]
    assert english_template_problems("Is it <R>", {"<R>": "relation", "<S>": "shape"}) == ["parameter <S> is never said in this text"]
    assert placeholders("Сколько [<Z>|gent] <C2> предметов?") == ["<Z>", "<C2>"]
