"""The realiser's precomputed plans give what the plain rules give, on the shipped families and real pymorphy3.

Words are drawn through a per-family plan (values fetched at once, repeats found by position) and
templates are assembled from precomputed pieces with each phrase's cached text; here both are
checked against the rules written out plainly, for every shipped family and template, with
values drawn to repeat often and random numbers both large and small (which draw more bits).
"""

from __future__ import annotations

import random

import pytest

from translate.native import NativeRealiser
from translate.templates import SENTENCE_START, Agreement, CompiledTemplate, NounPhrase, Number

CASES_PER_FAMILY = 40


@pytest.fixture(scope="module")
def realiser() -> NativeRealiser:
    return NativeRealiser(seed=0)


def random_params(realiser: NativeRealiser, family_id: str, rng: random.Random) -> dict[str, object]:
    """Values for each parameter of the family, from two per kind so that values repeat often."""
    family = realiser.families[family_id]
    few: dict[str, list[object]] = {}
    for kind in set(family.kinds.values()):
        known = ["1", "3", "12"] if kind == "integer" else [value for value in realiser._words[kind] if value != "" or kind != "relation"]
        few[kind] = rng.sample(known, 2)
    return {slot: rng.choice(few[kind]) for slot, kind in family.kinds.items()}


def plain_words(realiser: NativeRealiser, family_id: str, params: dict[str, object], choices: int) -> list[str]:
    """The drawing rule written out: per slot its words (the answer's attribute by its lemma only),
    one drawn per slot that has a choice, then each value said again takes the word said first."""
    family = realiser.families[family_id]
    options = realiser.word_options(family_id, params)
    words = []
    for slot, lemma_only in zip(family.kinds, family.lemma_only, strict=True):
        choices_here = options[slot][:1] if lemma_only else options[slot]
        pick = 0
        if len(choices_here) > 1:
            if choices < 1 << 64:
                choices = realiser._extend(choices)
            choices, pick = divmod(choices, len(choices_here))
        words.append(choices_here[pick])
    kinds = list(family.kinds.values())
    for kind in set(kinds) - {"integer"}:
        first_word: dict[object, str] = {}
        for slot, name in enumerate(family.kinds):
            if kinds[slot] == kind:
                words[slot] = first_word.setdefault(params[name], words[slot])
    return words


def plain_text(realiser: NativeRealiser, template, words: list[str]) -> str:
    """A template's text built part by part, nothing cached, as the assembly rule says."""
    pieces = []
    for part in template.parts:
        if isinstance(part, str):
            pieces.append(part)
        elif isinstance(part, NounPhrase):
            pieces.append(realiser._noun_phrase(part, words))
        elif isinstance(part, Agreement):
            pieces.append(realiser._agreement(part, words))
        else:
            pieces.append(words[part.slot])
    text = "".join(pieces)
    text = text[:1].upper() + text[1:]
    if template.several_sentences:
        text = SENTENCE_START.sub(lambda match: match.group().upper(), text)
    return text if text.endswith("?") else text + "?"


def test_drawn_words_follow_the_plain_rule_for_every_family(realiser):
    rng = random.Random(7)
    for family_id, family in realiser.families.items():
        if not family.templates:
            continue
        for case in range(CASES_PER_FAMILY):
            params = random_params(realiser, family_id, rng)
            # small numbers run out of bits and draw more; large ones do not
            choices = rng.getrandbits(70 if case % 2 else 256)
            # the first draw of a new integer value takes the slow path, which fills the table: both are checked
            realiser._drawn_words(family, params, choices)
            assert realiser._drawn_words(family, params, choices) == plain_words(realiser, family_id, params, choices), (family_id, params)


def test_templates_assemble_as_the_plain_rule_says_with_warm_caches(realiser):
    rng = random.Random(11)
    for family_id, family in realiser.families.items():
        for template in family.templates:
            for _ in range(CASES_PER_FAMILY // 4):
                words = realiser._drawn_words(family, random_params(realiser, family_id, rng), rng.getrandbits(256))
                expected = plain_text(realiser, template, words)
                assert realiser._assemble(template, words) == expected  # cold: each phrase built
                assert realiser._assemble(template, words) == expected  # warm: each phrase from its cache


def test_draw_plans_stay_one_per_family(realiser):
    rng = random.Random(3)
    for family_id in realiser.families:
        for _ in range(3):
            realiser._drawn_words(realiser.families[family_id], random_params(realiser, family_id, rng), rng.getrandbits(256))
    assert set(realiser._draws) <= set(realiser.families)
    assert len(realiser._draws) == sum(1 for family in realiser.families.values())


@pytest.mark.parametrize("parts", [
    ("сколько здесь кубов",),  # a lowercase literal: capitalised in the pieces, question mark added
    ("какого цвета шар? ", "а куб?"),  # the question mark already there
    ("", "есть ли", " шар"),  # an empty literal first
])
def test_literal_templates_are_capitalised_and_end_with_one_question_mark(realiser, parts):
    template = CompiledTemplate("".join(parts), parts, several_sentences=False)
    assert realiser._assemble(template, []) == plain_text(realiser, template, [])


def test_a_number_first_is_kept_and_the_mark_added(realiser):
    template = CompiledTemplate("<N> кубов", (Number(0), " кубов"), several_sentences=False)
    assert realiser._assemble(template, ["5"]) == plain_text(realiser, template, ["5"]) == "5 кубов?"
