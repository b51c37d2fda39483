"""Russian morphology: the curated lexicon and inflection through pymorphy3. (Finished text is
checked by the one checker, filter.morph, tested in test_filter_morph.py.)"""

from __future__ import annotations

import json

import pytest

from assets.vocabulary import VOCABULARY_PATH, load_vocabulary
from russian.morphology import (
    MorphologyError,
    adjective_form,
    build_lexicon,
    default_lexicon,
    noun_form,
    noun_phrase,
    pronoun_form,
    word_role,
)


def test_lexicon_holds_every_russian_noun_of_the_vocabulary_with_its_gender():
    lexicon = default_lexicon()
    vocabulary = load_vocabulary()
    expected = {word for v in vocabulary.values["shape"] for word in v.ru["synonyms"]}
    expected |= set(vocabulary.object_noun["ru"]["synonyms"])
    assert set(lexicon.nouns) == expected
    assert lexicon.noun("сфера").gender == "femn"
    assert lexicon.noun("цилиндр").gender == "masc"
    assert lexicon.relation_cases["за"] == "ablt" and lexicon.relation_cases["слева от"] == "gent"


@pytest.mark.parametrize(
    "lemma, gender, case, number, form",
    [
        # pymorphy3 parses цилиндр, предмет, объект as accusative first; the lexicon picks the nominative
        ("цилиндр", "masc", "gent", "sing", "цилиндра"),
        ("предмет", "masc", "ablt", "plur", "предметами"),
        ("объект", "masc", "datv", "sing", "объекту"),
        ("сфера", "femn", "accs", "sing", "сферу"),
        ("кубик", "masc", "gent", "plur", "кубиков"),
        ("шар", "masc", "loct", "sing", "шаре"),
    ],
)
def test_noun_forms(lemma, gender, case, number, form):
    assert noun_form(lemma, gender, case, number) == form


@pytest.mark.parametrize(
    "lemma, case, number, gender, form",
    [
        ("зелёный", "gent", "sing", "femn", "зелёной"),
        ("жёлтый", "accs", "sing", "masc", "жёлтый"),  # inanimate accusative = nominative
        ("большой", "accs", "plur", "femn", "большие"),
        ("металлический", "ablt", "plur", "masc", "металлическими"),
        ("блестящий", "loct", "sing", "femn", "блестящей"),  # a participle, not a plain adjective
        ("синий", "datv", "sing", "masc", "синему"),
    ],
)
def test_adjective_forms_keep_yo_and_agree(lemma, case, number, gender, form):
    assert adjective_form(lemma, case, number, gender) == form


def test_short_forms_and_pronouns():
    assert adjective_form("сделанный", "nomn", "sing", "femn", short=True) == "сделана"
    assert adjective_form("сделанный", "nomn", "plur", "masc", short=True) == "сделаны"
    assert pronoun_form("femn", "sing", "gent", after_preposition=True) == "неё"
    assert pronoun_form("masc", "sing", "ablt", after_preposition=True) == "ним"
    assert pronoun_form("masc", "plur", "gent", after_preposition=True) == "них"
    assert pronoun_form("masc", "sing", "gent", after_preposition=False) == "его"


def test_impossible_form_is_an_error_naming_word_and_form():
    with pytest.raises(MorphologyError, match="'красивое' is not an adjective in the masculine nominative singular"):
        adjective_form("красивое", "gent", "sing", "masc")
    with pytest.raises(MorphologyError, match="pymorphy3 does not know 'куб' as a femn noun"):
        noun_form("куб", "femn", "gent", "sing")
    with pytest.raises(MorphologyError, match="not a noun of the vocabulary"):
        default_lexicon().noun("стол")


@pytest.mark.parametrize(
    "count, noun, case, phrase",
    [
        (1, "куб", "nomn", "1 большой куб"),
        (2, "куб", "nomn", "2 больших куба"),
        (4, "сфера", "nomn", "4 большие сферы"),
        (5, "куб", "nomn", "5 больших кубов"),
        (11, "сфера", "nomn", "11 больших сфер"),
        (12, "куб", "nomn", "12 больших кубов"),
        (21, "сфера", "nomn", "21 большая сфера"),
        (22, "цилиндр", "accs", "22 больших цилиндра"),
        (23, "сфера", "accs", "23 большие сферы"),
        (0, "предмет", "nomn", "0 больших предметов"),
        (111, "шар", "nomn", "111 больших шаров"),
        (101, "сфера", "accs", "101 большую сферу"),
        (3, "куб", "ablt", "3 большими кубами"),
        (21, "куб", "gent", "21 большого куба"),
    ],
)
def test_numerals_govern_the_noun_phrase(count, noun, case, phrase):
    modifiers = (("count", str(count)), ("adjective", "большой"))
    assert noun_phrase(modifiers, default_lexicon().noun(noun), case, "sing") == phrase


def test_word_roles_for_template_words():
    assert word_role("другой") == "adjective"
    assert word_role("сделанный") == "adjective"  # a participle: pymorphy3's lemma would be the verb
    assert word_role("ещё") == "invariable"
    assert word_role("он") == "pronoun"
    assert word_role("сфера") == "noun"
    assert word_role("находится") == "unknown"


def test_vocabulary_noun_without_gender_is_reported(tmp_path):
    raw = json.loads(VOCABULARY_PATH.read_text(encoding="utf-8"))
    del raw["shapes"]["sphere"]["ru"]["genders"]["сфера"]
    path = tmp_path / "vocabulary.json"
    path.write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(MorphologyError, match="shape sphere: Russian noun 'сфера' needs its gender in ru.genders"):
        build_lexicon(load_vocabulary(path))


def test_past_tense_verbs_agree_with_their_noun_in_gender_and_number():
    from russian.morphology import agreeing_form, past_verb_form

    assert word_role("был") == "verb" and word_role("стал") == "verb"
    assert word_role("была") == "unknown"  # given as the masculine singular, as adjectives are
    assert [past_verb_form("был", gender, "sing") for gender in ("masc", "femn", "neut")] == ["был", "была", "было"]
    assert past_verb_form("был", "femn", "plur") == "были"
    with pytest.raises(MorphologyError, match="'находится' is not a past-tense verb"):
        past_verb_form("находится", "masc", "sing")
    sphere, ball = default_lexicon().noun("сфера"), default_lexicon().noun("шар")
    said = [(agreeing_form("verb", "был", "nomn", "sing", noun), agreeing_form("adjective", "металлический", "ablt", "sing", noun))
            for noun in (sphere, ball)]
    assert said == [("была", "металлической"), ("был", "металлическим")]
    assert agreeing_form("adjective", "", "ablt", "sing", ball) == ""


@pytest.mark.parametrize(("group", "problem"), [
    ("[был|<S>] [<M2>|твор,<S>]", None),
    ("[был|твор,<S>] [<M2>|твор,<S>]", "a verb agrees alone"),
    ("[был <M2>|твор,<S>]", "a verb agrees alone"),
    ("[был|<S>] [<M2> <S2>|твор,<S>]", "<S2> cannot be in a group that agrees with <S>"),
    ("[находится|<S>] [<M2>|твор,<S>]", "'находится' cannot agree with <S>"),
])
def test_an_agreeing_group_takes_a_past_tense_verb_and_an_attributes_adjective(group, problem):
    from translate.templates import validate_template

    params = {"<Z>": "size", "<C>": "color", "<M>": "material", "<S>": "shape", "<M2>": "material", "<S2>": "shape"}
    problems = validate_template(f"Если бы [<Z> <C> <M> <S>] {group}, был бы он [<S2>|твор]?", params)
    if problem is None:
        assert problems == []
    else:
        assert len(problems) == 1 and problem in problems[0], problems
