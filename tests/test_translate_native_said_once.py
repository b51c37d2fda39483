"""A word the template says already is not said again by the realiser («этот этот металлический
предмет»), and the filter rejects what a template could still double: a word twice in a row, or
two punctuation marks («… того же цвета.?»). Real realiser on real questions, real pymorphy3."""

from __future__ import annotations

import pytest

from dataset.families.cli import realise_scenes
from dataset.families.realise_check import asked_questions
from filter import MorphChecker
from questions.families import load_families
from translate import apply_yo_policy
from translate.native import NativeRealiser

# The object right of X with X's colour, said twice: the realiser says the second one with «этот»
# where its words are the first one's; the template already says «этот» there.
FAMILY = """\
families:
  - id: mine/relate_same_color/shape
    group: mine
    params: {<Z>: size, <C>: color, <M>: material, <S>: shape, <R>: relation, <Z2>: size, <C2>: color, <M2>: material, <S2>: shape}
    program:
      - {function: scene}
      - {function: filter, inputs: [0], value_inputs: [<Z>, <C>, <M>, <S>]}
      - {function: unique, inputs: [1]}
      - {function: relate, inputs: [2], value_inputs: [<R>]}
      - {function: same_color, inputs: [2]}
      - {function: intersect, inputs: [3, 4]}
      - {function: filter, inputs: [5], value_inputs: [<Z2>, <C2>, <M2>, <S2>]}
      - {function: unique, inputs: [6]}
      - {function: query_shape, inputs: [7]}
    constraints:
      empty: [<C>, <C2>, <S2>]
    text:
      en:
        - "There is a <Z2> <C2> <M2> <S2> <R> the <Z> <C> <M> <S> that has its color; what shape is it?"
      ru:
        - "[<R> <Z> <C> <M> <S>] стоит [<Z2> <C2> <M2> <S2>] того же цвета, что и [он|<S>]. Какой формы [этот <Z2> <C2> <M2> <S2>]?"
"""


def test_the_realiser_does_not_say_a_demonstrative_the_template_says(tmp_path):
    (tmp_path / "mine.yaml").write_text(FAMILY, encoding="utf-8")
    families = load_families(tmp_path)
    family = families["mine/relate_same_color/shape"]
    realiser = NativeRealiser(families=families.values(), seed=0)
    _, questions, _ = asked_questions(family, realise_scenes(None, 0, 300), 30, 0)
    texts = [realiser.realise_with_template(question, 0) for question in questions]
    said = [text for text in texts if text is not None]
    assert len(said) >= 20
    assert any("Какой формы этот " in text for text in said)
    checker = MorphChecker()
    assert {text: checker.problems(apply_yo_policy(text, "e")) for text in said if "этот этот" in text
            or checker.problems(apply_yo_policy(text, "e"))} == {}


@pytest.mark.parametrize("text, problem", [
    ("Каких предметов больше? Ответь, верно ли, что того же цвета.?", "form: doubled punctuation «.?»"),
    ("Есть ли кубы,, и шары?", "form: doubled punctuation «,,»"),
    ("Какой формы этот этот металлический предмет?", "form: a word said twice in a row «этот этот»"),
    ("Сколько кубов слева от от шара?", "form: a word said twice in a row «от от»"),
])
def test_the_filter_rejects_doubled_punctuation_and_a_doubled_word(text, problem):
    assert problem in MorphChecker().problems(text)


@pytest.mark.parametrize("text", [
    "Правда ли, что что-то стоит за кубом?",  # «что что-то»: another word
    "Верно ли, что что бы ни стояло за кубом, оно красное?",  # «что что бы ни»: a conjunction, then a pronoun
    "Есть ли куб... или шар?",
    "Сколько кубов левее 2 шаров?",
])
def test_the_filter_accepts_what_only_looks_doubled(text):
    assert MorphChecker().problems(text) == []


@pytest.mark.parametrize("text, problem", [
    ("Между кубом и шаром стоит предмет. Какой этот предмет величины?",
     "word_order: «Какой этот предмет величины» splits «Какой величины» around a noun phrase: «Какой величины этот предмет»"),
    ("Какого этот большой синий куб цвета?",
     "word_order: «Какого этот большой синий куб цвета» splits «Какого цвета» around a noun phrase: «Какого цвета этот большой синий куб»"),
])
def test_the_filter_rejects_a_phrase_said_inside_kakoy_velichiny(text, problem):
    """«Какой [он|<S3>] величины?» is natural while the pronoun stands; said as its phrase it is not."""
    assert problem in MorphChecker().problems(text)


@pytest.mark.parametrize("text", ["Какой он величины?", "Какой величины этот предмет?", "Какого цвета этот куб?",
                                  "Какой формы этот маленький куб?"])
def test_the_filter_accepts_kakoy_velichiny_said_together_or_around_a_pronoun(text):
    assert MorphChecker().problems(text) == []
