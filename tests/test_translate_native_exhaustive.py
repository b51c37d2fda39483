"""Exhaustive checks of the native realiser's Russian, by analysing the output with pymorphy3.

Every shipped family (questions/families/), and the numeral fixtures (integer parameters,
which the shipped families do not have), is realised with every Russian template for every
combination of the attribute values of each object it mentions (size × colour × material ×
shape, empty included), the other objects, relations, numbers and synonyms rotating through
their values. Objects are realised independently of each other (a noun phrase reads only its
own values, and an agreeing word only its noun's gender and number), so this covers every
phrase the family can produce without the full cross product of all objects. Each text must
pass the project's one checker, ``filter.morph.MorphChecker`` (the ``morph`` filter: form,
agreement, short forms, «который», numerals, prepositions) and must name every value it was
given.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from functools import cache

import pytest
from native_fixtures import fixture_realiser

from assets.vocabulary import ATTRIBUTES, load_vocabulary
from filter.morph import MorphChecker
from filter.report import reason_category
from questions.families import load_families
from questions.hypothetical import edit_value_params
from russian.morphology import CASES, NUMBERS, adjective_form, analyzer, default_lexicon, noun_phrase
from translate.native import NativeRealiser, RealisationError


@pytest.fixture(scope="module")
def realisers() -> list[NativeRealiser]:
    """The shipped families, and the fixtures with what they cannot show (numerals)."""
    return [NativeRealiser(seed=0), fixture_realiser(seed=0)]


@pytest.fixture(scope="module")
def checker() -> MorphChecker:
    return MorphChecker()


def grammar_problems(checker: MorphChecker, phrase: str) -> list[str]:
    """The checker's problems of a bare phrase, which has no capital letter or question mark."""
    return [reason for reason in checker.problems(phrase) if reason_category(reason) != "form"]


def values_of(kind: str) -> list[object]:
    """The values a relation or integer placeholder takes here."""
    if kind == "relation":
        return list(load_vocabulary().relations)
    return [str(n) for n in range(0, 131)]


@cache
def attribute_words(kind: str) -> tuple[tuple[str, str], ...]:
    """Every (value, Russian word) an attribute placeholder can take: each synonym of each value,
    and the empty value (no word; for a shape, the generic nouns предмет and объект)."""
    vocabulary = load_vocabulary()
    empty = [("", word) for word in vocabulary.object_noun["ru"]["synonyms"]] if kind == "shape" else [("", "")]
    synonyms = [(name, word) for name in vocabulary.names(kind) for word in vocabulary.value(kind, name).ru["synonyms"]]
    return tuple(empty + synonyms)


def object_rows(slots: list[str], kinds: dict[str, str], required: frozenset[str] = frozenset()) -> list[dict[str, tuple[str, str]]]:
    """(value, word) choices for one object's placeholders: every shape word with every colour
    word, the size and material words rotating so that each of them meets every shape word too,
    and every shape word with no adjective at all. An adjective's form depends only on its own
    word and on the noun's gender, case and number, so this reaches every adjective word × noun
    word pair in every place of every template, with 70 rows instead of 3 × 9 × 3 × 4 values.
    A ``required`` size or material (an edit's value: :func:`edit_values`) is never empty."""
    axes = [slot for slot in slots if kinds[slot] in ("shape", "color")]
    rotating = [slot for slot in slots if slot not in axes]
    rows = []
    for i, combo in enumerate(itertools.product(*(attribute_words(kinds[slot]) for slot in axes))):
        row = dict(zip(axes, combo, strict=True))
        for k, slot in enumerate(rotating):
            words = [pair for pair in attribute_words(kinds[slot]) if pair[0] or slot not in required]
            row[slot] = words[(i + 2 * k) % len(words)]
        rows.append(row)
    shapes = [slot for slot in slots if kinds[slot] == "shape"]
    for choice in (attribute_words("shape") if shapes else ()):
        rows.append({slot: choice if slot in shapes else attribute_words(kinds[slot])[1] if slot in required else ("", "")
                     for slot in slots})
    return rows


@cache
def edit_values() -> dict[str, frozenset[str]]:
    """Per shipped family, the parameters its what-if edit node takes as its value (set_material's
    <M2>) and those a lone ``filter_<attribute>`` node reads («Все ли кубы [<M2>|мн]?»): the engine
    never leaves them empty (questions/hypothetical.py refuses the edit; questions/plan.py's SET)."""
    return {family_id: edit_value_params(family.program) | {value for node in family.program if node.function.startswith("filter_")
                                                            for value in node.value_inputs}
            for family_id, family in load_families().items()}


def objects_of(kinds: dict[str, str]) -> dict[str, list[str]]:
    """Attribute placeholders grouped by the object they describe: <Z2> <C2> <M2> <S2> -> "2"."""
    objects: dict[str, list[str]] = defaultdict(list)
    for slot, kind in kinds.items():
        if kind in ATTRIBUTES:
            objects[slot[2:-1]].append(slot)
    return dict(objects)


@cache
def dictionary_forms(token: str) -> frozenset[str]:
    """What ``token`` may be a form of: nouns' lemmas, adjectives' masculine nominative singular."""
    forms = set()
    for parse in analyzer().parse(token):
        if parse.tag.POS in ("ADJF", "PRTF"):
            masculine = parse.inflect({"masc", "sing", "nomn"})
            forms.add(masculine.word if masculine else parse.normal_form)
        forms.add(parse.normal_form)
    return frozenset(forms)


@cache
def adjective_lemmas(token: str) -> frozenset[str]:
    """Masculine nominative singular of ``token`` read as a full adjective or participle."""
    forms = (p.inflect({"masc", "sing", "nomn"}) for p in analyzer().parse(token) if p.tag.POS in ("ADJF", "PRTF"))
    return frozenset(form.word for form in forms if form)


def missing_words(text: str, words: dict[str, str]) -> list[str]:
    tokens = text.lower().replace("?", " ").replace(",", " ").replace(".", " ").replace(";", " ").replace(":", " ").replace("—", " ").split()
    lemmas = set().union(*(dictionary_forms(token) for token in tokens))
    missing = []
    for slot, word in words.items():
        if not word:
            continue
        found = (" " + word + " ") in (" " + " ".join(tokens) + " ") or word in lemmas
        if not found:
            missing.append(f"{slot}={word!r} is not in the text")
    return missing


def realisations(realisers: list[NativeRealiser]):
    """(family, template, params, words, text) for every family × template × object × row of
    :func:`object_rows`; the other objects, relations, numbers and their words rotate."""
    for realiser, family_id, family in ((r, i, f) for r in realisers for i, f in r.families.items()):
        kinds = dict(family.kinds)
        required = edit_values().get(family_id, frozenset())
        objects = {name: object_rows(slots, kinds, required) for name, slots in objects_of(kinds).items()}
        others = {slot: values_of(kind) for slot, kind in kinds.items() if kind not in ATTRIBUTES}
        for template in range(len(family.templates)):
            for name, rows in objects.items():
                for i, row in enumerate(rows):
                    chosen = dict(row)
                    for k, other_rows in enumerate(r for o, r in objects.items() if o != name):
                        chosen |= other_rows[(i * (7 + 6 * k) + 11) % len(other_rows)]
                    params = {slot: value for slot, (value, _) in chosen.items()}
                    for k, (slot, values) in enumerate(others.items()):
                        params[slot] = values[(i + 3 * k) % len(values)]
                    options = realiser.word_options(family_id, params)
                    # a row's word the slot never takes («большой» after «ещё») gives way to the slot's first word
                    words = {slot: (chosen[slot][1] if chosen[slot][1] in choices else choices[0]) if slot in chosen
                             else choices[(i // 2 + k) % len(choices)] for k, (slot, choices) in enumerate(options.items())}
                    try:
                        text = realiser.render(family_id, params, template, words)
                    except RealisationError:
                        text = None  # refused: a pronoun's phrase, repeated, would read like another phrase
                    yield family_id, template, params, words, text


@pytest.fixture(scope="module")
def realised(realisers) -> list[tuple]:
    return list(realisations(realisers))


def test_every_family_template_and_value_combination_is_grammatical(realisers, realised, checker):
    failures = []
    seen = set()
    refused = 0
    for family, template, params, words, text in realised:
        seen.add((family, template))
        if text is None:
            refused += 1
            continue
        problems = checker.problems(text) + missing_words(text, words)
        if problems:
            failures.append(f"{family} ru[{template}] {params}: {text!r}: {'; '.join(problems)}")
    count = len(realised)
    assert failures == [], f"{len(failures)} of {count} texts have problems, first ones:\n" + "\n".join(failures[:20])
    shipped, fixtures = realisers
    assert all(family.templates for family in shipped.families.values()) and len(shipped.families) >= 54
    every_template = {(name, t) for r in realisers for name, family in r.families.items() for t in range(len(family.templates))}
    assert seen == every_template
    expected = sum(
        len(family.templates) * len(object_rows(slots, dict(family.kinds)))
        for r in realisers
        for family in r.families.values()
        for slots in objects_of(dict(family.kinds)).values()
    )
    assert count == expected > 25_000
    assert refused < count / 1000  # a pronoun whose repeated phrase would read like another phrase: rare


def test_every_noun_phrase_in_every_case_and_number_agrees(checker):
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
                problems = grammar_problems(checker, phrase) + ([] if in_case else [f"{head!r} is not {case} {number}"])
                checked += 1
                if problems:
                    failures.append(f"{phrase!r}: {problems}")
    assert failures == [], "\n".join(failures[:20])
    assert checked == len(lexicon.nouns) * 5 * 9 * 5 * 12


def test_relation_phrases_govern_their_case_for_every_noun(checker):
    lexicon = default_lexicon()
    failures = []
    for preposition, case in lexicon.relation_cases.items():
        for noun_word in lexicon.nouns:
            for adjective in ("", "большой", "зелёный", "блестящий"):
                modifiers = (("adjective", adjective),) if adjective else ()
                text = f"Что {preposition} {noun_phrase(modifiers, lexicon.noun(noun_word), case, 'sing')}?"
                failures += [f"{text}: {p}" for p in checker.problems(text)]
    assert failures == []


def test_numerals_from_0_to_130_govern_every_noun(checker):
    lexicon = default_lexicon()
    failures = []
    for count in range(131):
        for noun_word in lexicon.nouns:
            for case in ("nomn", "accs"):
                modifiers = (("count", str(count)), ("adjective", "маленький"), ("adjective", "жёлтый"))
                text = f"Есть ли {noun_phrase(modifiers, lexicon.noun(noun_word), case, 'sing')}?"
                failures += [f"{text}: {p}" for p in checker.problems(text)]
    assert failures == []


def test_the_check_catches_a_broken_adjective_in_realised_texts(realised, checker):
    """The check the exhaustive test relies on fails when one adjective of a real output is put in
    the neuter, which agrees with none of the vocabulary's nouns (all masculine or feminine)."""
    vocabulary = load_vocabulary()
    adjectives = {w for a in ("size", "color", "material") for v in vocabulary.values[a] for w in v.ru["synonyms"]}
    mutated = 0
    for *_, text in [entry for entry in realised if entry[-1] is not None][::97]:
        tokens = text.rstrip("?").split(" ")
        for position, token in enumerate(tokens):
            lemma = next(iter(adjective_lemmas(token.lower()) & adjectives), None)
            if lemma is not None:
                neuter = adjective_form(lemma, "nomn", "sing", "neut")
                broken = " ".join(tokens[:position] + [neuter] + tokens[position + 1:]) + "?"
                assert checker.problems(broken), broken
                mutated += 1
                break
    assert mutated > 200
