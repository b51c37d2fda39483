"""The vocabulary file is complete and consistent: every stage relies on it."""

import pytest

from assets.vocabulary import ATTRIBUTES, load_vocabulary, srgb_to_linear


def test_has_clevr_values():
    vocabulary = load_vocabulary()
    assert len(vocabulary.names("shape")) == 3
    assert len(vocabulary.names("size")) == 2
    assert len(vocabulary.names("material")) == 2
    assert len(vocabulary.names("color")) == 8


@pytest.mark.parametrize("attribute", list(ATTRIBUTES))
def test_every_value_has_words_in_both_languages(attribute):
    vocabulary = load_vocabulary()
    for value in vocabulary.values[attribute]:
        assert value.en_synonyms, value.name
        assert value.ru_answer and value.ru_answer == value.ru_answer.lower(), value.name
        assert value.ru["synonyms"], value.name


def test_colour_rgb_in_range_and_distinct():
    vocabulary = load_vocabulary()
    colours = [vocabulary.srgb(name) for name in vocabulary.names("color")]
    assert len(set(colours)) == len(colours)
    assert all(len(rgb) == 3 and all(0 <= c <= 255 for c in rgb) for rgb in colours)


def test_value_names_are_unique_across_attributes():
    vocabulary = load_vocabulary()
    names = [name for attribute in ATTRIBUTES for name in vocabulary.names(attribute)]
    assert len(names) == len(set(names))
    assert vocabulary.attribute_of("metal") == "material"


def test_unknown_value_names_the_allowed_ones():
    with pytest.raises(KeyError, match="allowed: gray, red"):
        load_vocabulary().value("color", "magenta")


def test_srgb_to_linear_matches_the_standard_curve():
    assert srgb_to_linear(0) == 0.0
    assert srgb_to_linear(255) == pytest.approx(1.0)
    assert srgb_to_linear(10) == pytest.approx(10 / 255 / 12.92)
    assert srgb_to_linear(128) == pytest.approx(0.2158605, abs=1e-6)
