"""Exhaustive checks of the native realiser's Russian, by analysing the output with pymorphy3.

Every fixture family is realised with every Russian template for every combination of the
attribute values of each object it mentions (size × colour × material × shape, empty
included), the other objects, relations, numbers and synonyms rotating through their values.
Objects are realised independently of each other (a noun phrase reads only its own values,
and an agreeing word only its noun's gender and number), so this covers every phrase the
family can produce without the full cross product of all objects. Each text must pass
``translate.morphology.check_text`` (agreement, numerals, prepositions, form) and must name
every value it was given.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from functools import lru_cache
from pathlib import Path

import pytest

from assets.vocabulary import ATTRIBUTES, load_vocabulary
from translate.morphology import (
    CASES,
    NUMBERS,
    adjective_form,
    analyzer,
    check_agreement,
    check_text,
    default_lexicon,
    noun_phrase,
)
from translate.native import NativeRealiser

FAMILIES = Path(__file__).parent / "data" / "families_ru"


@pytest.fixture(scope="module")
def realiser() -> NativeRealiser:
    return NativeRealiser(FAMILIES, seed=0)


def values_of(kind: str) -> list[object]:
    vocabulary = load_vocabulary()
    if kind == "relation":
        return list(vocabulary.relations)
    if kind == "integer":
        return [str(n) for n in range(0, 131)]
    return ["", *vocabulary.names(kind)]


def objects_of(kinds: dict[str, str]) -> dict[str, list[str]]:
    """Attribute placeholders grouped by the object they describe: <Z2> <C2> <M2> <S2> -> "2"."""
    objects: dict[str, list[str]] = defaultdict(list)
    for slot, kind in kinds.items():
        if kind in ATTRIBUTES:
            objects[slot[2:-1]].append(slot)
    return dict(objects)


@lru_cache(maxsize=None)
def dictionary_forms(token: str) -> frozenset[str]:
    """What ``token`` may be a form of: nouns' lemmas, adjectives' masculine nominative singular."""
    forms = set()
    for parse in analyzer().parse(token):
        if parse.tag.POS in ("ADJF", "PRTF"):
            masculine = parse.inflect({"masc", "sing", "nomn"})
            forms.add(masculine.word if masculine else parse.normal_form)
        forms.add(parse.normal_form)
    return frozenset(forms)


@lru_cache(maxsize=None)
def adjective_lemmas(token: str) -> frozenset[str]:
    """Masculine nominative singular of ``token`` read as a full adjective or participle."""
    forms = (p.inflect({"masc", "sing", "nomn"}) for p in analyzer().parse(token) if p.tag.POS in ("ADJF", "PRTF"))
    return frozenset(form.word for form in forms if form)


def missing_words(text: str, words: dict[str, str]) -> list[str]:
    tokens = text.lower().replace("?", " ").replace(",", " ").replace(".", " ").replace(";", " ").split()
    lemmas = set().union(*(dictionary_forms(token) for token in tokens))
    missing = []
    for slot, word in words.items():
        if not word:
            continue
        found = (" " + word + " ") in (" " + " ".join(tokens) + " ") or word in lemmas
        if not found:
            missing.append(f"{slot}={word!r} is not in the text")
    return missing


def realisations(realiser: NativeRealiser):
    """(family, template, params, words, text) for every family × template × object × value combination."""
    for family_id, family in realiser.families.items():
        objects = objects_of(dict(family.kinds))
        others = {slot: values_of(kind) for slot, kind in family.kinds.items() if kind not in ATTRIBUTES}
        for template in range(len(family.templates)):
            for name, slots in objects.items():
                combos = list(itertools.product(*(values_of(family.kinds[s]) for s in slots)))
                for i, combo in enumerate(combos):
                    params = dict(zip(slots, combo))
                    for k, (other, other_slots) in enumerate((o, s) for o, s in objects.items() if o != name):
                        other_combos = list(itertools.product(*(values_of(family.kinds[s]) for s in other_slots)))
                        params |= dict(zip(other_slots, other_combos[(i * (7 + 6 * k) + 11) % len(other_combos)]))
                    for k, (slot, values) in enumerate(others.items()):
                        params[slot] = values[(i + 3 * k) % len(values)]
                    options = realiser.word_options(family_id, params)
                    words = {slot: choices[(i // 2 + k) % len(choices)] for k, (slot, choices) in enumerate(options.items())}
                    yield family_id, template, params, words, realiser.render(family_id, params, template, words)


@pytest.fixture(scope="module")
def realised(realiser) -> list[tuple]:
    return list(realisations(realiser))


def test_every_family_template_and_value_combination_is_grammatical(realiser, realised):
    failures = []
    seen_families = set()
    count = 0
    for family, template, params, words, text in realised:
        count += 1
        seen_families.add(family)
        problems = check_text(text) + missing_words(text, words)
        if problems:
            failures.append(f"{family} ru[{template}] {params}: {text!r}: {'; '.join(problems)}")
    assert failures == [], f"{len(failures)} of {count} texts have problems, first ones:\n" + "\n".join(failures[:20])
    with_russian = {name for name, family in realiser.families.items() if family.templates}
    assert seen_families == with_russian and len(with_russian) >= 30
    expected = sum(
        len(family.templates) * math.prod(len(values_of(family.kinds[slot])) for slot in slots)
        for family in realiser.families.values()
        for slots in objects_of(dict(family.kinds)).values()
    )
    assert count == expected > 30_000


def test_every_noun_phrase_in_every_case_and_number_agrees():
    """The phrase level: each noun × each adjective combination × 6 cases × 2 numbers."""
    vocabulary = load_vocabulary()
    lexicon = default_lexicon()
    adjective_words = [["", *(w for v in vocabulary.values[a] for w in v.ru["synonyms"])] for a in ("size", "color", "material")]
    failures = []
    checked = 0
    for noun_word in lexicon.nouns:
        noun = lexicon.noun(noun_word)
        for adjectives in itertools.product(*adjective_words):
            modifiers = tuple(("adjective", a) for a in adjectives if a)
            for case, number in itertools.product(CASES, NUMBERS):
                phrase = noun_phrase(modifiers, noun, case, number)
                head = phrase.split()[-1]
                in_case = any(p.tag.POS == "NOUN" and case in p.tag and number in p.tag for p in analyzer().parse(head))
                problems = check_agreement(phrase) + ([] if in_case else [f"{head!r} is not {case} {number}"])
                checked += 1
                if problems:
                    failures.append(f"{phrase!r}: {problems}")
    assert failures == [], "\n".join(failures[:20])
    assert checked == len(lexicon.nouns) * 5 * 9 * 5 * 12


def test_relation_phrases_govern_their_case_for_every_noun(realiser):
    lexicon = default_lexicon()
    failures = []
    for preposition, case in lexicon.relation_cases.items():
        for noun_word in lexicon.nouns:
            for adjective in ("", "большой", "зелёный", "блестящий"):
                modifiers = (("adjective", adjective),) if adjective else ()
                text = f"Что {preposition} {noun_phrase(modifiers, lexicon.noun(noun_word), case, 'sing')}?"
                failures += [f"{text}: {p}" for p in check_text(text)]
    assert failures == []


def test_numerals_from_0_to_130_govern_every_noun():
    lexicon = default_lexicon()
    failures = []
    for count in range(131):
        for noun_word in lexicon.nouns:
            for case in ("nomn", "accs"):
                modifiers = (("count", str(count)), ("adjective", "маленький"), ("adjective", "жёлтый"))
                text = f"Есть ли {noun_phrase(modifiers, lexicon.noun(noun_word), case, 'sing')}?"
                failures += [f"{text}: {p}" for p in check_text(text)]
    assert failures == []


def test_the_check_catches_a_broken_adjective_in_realised_texts(realised):
    """The check the exhaustive test relies on fails when one adjective of a real output is put in
    the neuter, which agrees with none of the vocabulary's nouns (all masculine or feminine)."""
    vocabulary = load_vocabulary()
    adjectives = {w for a in ("size", "color", "material") for v in vocabulary.values[a] for w in v.ru["synonyms"]}
    mutated = 0
    for *_, text in realised[::97]:
        tokens = text.rstrip("?").split(" ")
        for position, token in enumerate(tokens):
            lemma = next(iter(adjective_lemmas(token.lower()) & adjectives), None)
            if lemma is not None:
                neuter = adjective_form(lemma, "nomn", "sing", "neut")
                broken = " ".join(tokens[:position] + [neuter] + tokens[position + 1:]) + "?"
                assert check_agreement(broken), broken
                mutated += 1
                break
    assert mutated > 200
