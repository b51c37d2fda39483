"""Answers map through the vocabulary to MERA's convention; the ё policy applies to them too."""

import pytest

from assets.vocabulary import ATTRIBUTES, load_vocabulary
from translate.answers import answer_to_russian
from translate.spelling import apply_yo_policy


@pytest.mark.parametrize(
    ("english", "russian"),
    [("yes", "да"), ("no", "нет"), ("0", "0"), ("10", "10"), ("red", "красный"), ("green", "зеленый"),
     ("yellow", "желтый"), ("metal", "металл"), ("rubber", "резина"), ("cube", "куб"), ("small", "маленький")],
)
def test_mera_convention_with_default_e_spelling(english, russian):
    assert answer_to_russian(english) == russian


def test_yo_policy_keeps_yo_when_asked():
    assert answer_to_russian("green", yo_policy="yo") == "зелёный"
    assert apply_yo_policy("Ещё жёлтый", "e") == "Еще желтый"
    assert apply_yo_policy("Ёлка", "e") == "Елка"


def test_every_vocabulary_value_has_a_distinct_russian_answer():
    vocabulary = load_vocabulary()
    answers = [answer_to_russian(name) for attribute in ATTRIBUTES for name in vocabulary.names(attribute)]
    assert len(answers) == len(set(answers))
    assert all(a == a.lower() and " " not in a for a in answers)


@pytest.mark.parametrize("bad", ["magenta", "", "-1", "Yes"])
def test_unknown_answers_are_refused(bad):
    with pytest.raises(ValueError, match="not yes/no"):
        answer_to_russian(bad)


def test_unknown_yo_policy_is_refused():
    with pytest.raises(ValueError, match="allowed: e, yo"):
        apply_yo_policy("ещё", "ye")
