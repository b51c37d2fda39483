"""Russian morphology for the native realiser and the morph filter: a curated noun lexicon and cached inflection.

pymorphy3 is used only to inflect words whose lemma and gender we already know. Its first
parse is often wrong for our words (``цилиндр``, ``предмет``, ``объект`` parse as accusative
first; ``стали`` as a verb), so every noun comes from the vocabulary with its gender and
animacy, and the parse we inflect from is the one that matches them. ``make_agree_with_number``
is not used (it ignores case for adjectives outside the nominative): numeral government is
:func:`numeral_government`. ``inflect()`` returning None (a form that does not exist) is an
error that names the word and the form, never an empty string.

Finished text is checked by one checker, :class:`filter.morph.MorphChecker` (the ``morph``
acceptability filter), which the realiser's tests run on everything the realiser can write.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from types import MappingProxyType

import pymorphy3

from assets.vocabulary import Vocabulary, load_vocabulary

#: The six Russian cases, by their OpenCorpora (pymorphy3) names.
CASES = ("nomn", "gent", "datv", "accs", "ablt", "loct")
NUMBERS = ("sing", "plur")
GENDERS = MappingProxyType({"m": "masc", "f": "femn", "n": "neut"})
CASE_NAMES = MappingProxyType(
    {"nomn": "nominative", "gent": "genitive", "datv": "dative",
     "accs": "accusative", "ablt": "instrumental", "loct": "prepositional"}
)

#: Personal pronoun lemmas by gender (singular) and for the plural.
_PRONOUN_LEMMAS = MappingProxyType({"masc": "он", "femn": "она", "neut": "оно", "plur": "они"})

#: Parts of speech that never inflect: such words are copied into a noun phrase as written.
_INVARIABLE_POS = frozenset({"PRCL", "ADVB", "CONJ", "PREP", "INTJ", "PRED"})
_ADJECTIVE_POS = frozenset({"ADJF", "PRTF"})


class MorphologyError(ValueError):
    """A word or form the realiser cannot produce (unknown noun, impossible form)."""


#: Words whose readings are kept (the filter asks of every word of every question: bounded whatever the input).
WORDS_CACHED = 16384


@lru_cache(maxsize=1)
def analyzer() -> pymorphy3.MorphAnalyzer:
    """The one pymorphy3 analyser (loading dictionaries takes ~0.5 s, so only on first use)."""
    return pymorphy3.MorphAnalyzer()


# ---------------------------------------------------------------------------------------------
# The curated lexicon: every noun the realiser may put in a question, from the vocabulary.


@dataclass(frozen=True)
class Noun:
    """A Russian noun with what pymorphy3 must not be trusted to guess."""

    lemma: str
    gender: str  # masc / femn / neut
    animate: bool = False


@dataclass(frozen=True)
class Lexicon:
    """Nouns (shape synonyms and generic object nouns) and relation phrases with their cases."""

    nouns: Mapping[str, Noun]
    relation_cases: Mapping[str, str]  # "слева от" -> "gent"

    def noun(self, lemma: str) -> Noun:
        try:
            return self.nouns[lemma]
        except KeyError:
            known = ", ".join(sorted(self.nouns))
            raise MorphologyError(f"{lemma!r} is not a noun of the vocabulary; known nouns: {known}") from None


def build_lexicon(vocabulary: Vocabulary) -> Lexicon:
    """Collect every Russian noun and relation phrase of ``vocabulary`` with gender, animacy, case."""
    nouns: dict[str, Noun] = {}
    entries = [(f"shape {v.name}", v.ru) for v in vocabulary.values["shape"]]
    entries.append(("object noun", vocabulary.object_noun["ru"]))
    for where, ru in entries:
        genders = ru.get("genders", {})
        animate = ru.get("animacy", "inan") == "anim"
        for word in ru["synonyms"]:
            code = genders.get(word)
            if code not in GENDERS:
                raise MorphologyError(
                    f"vocabulary: {where}: Russian noun {word!r} needs its gender in ru.genders (m, f or n)"
                )
            nouns[word] = Noun(word, GENDERS[code], animate)
    relation_cases: dict[str, str] = {}
    for name, entry in vocabulary.relations.items():
        ru = entry["ru"]
        for phrase in ru["synonyms"]:
            case = ru.get("cases", {}).get(phrase)
            if case not in CASES:
                raise MorphologyError(
                    f"vocabulary: relation {name}: phrase {phrase!r} needs the case it governs in ru.cases "
                    f"(one of {', '.join(CASES)})"
                )
            relation_cases[phrase] = case
    return Lexicon(MappingProxyType(nouns), MappingProxyType(relation_cases))


@lru_cache(maxsize=1)
def default_lexicon() -> Lexicon:
    return build_lexicon(load_vocabulary())


# ---------------------------------------------------------------------------------------------
# Inflection. Every function is cached: the realiser's hot path is dictionary look-ups.


@cache
def _noun_parse(lemma: str, gender: str) -> pymorphy3.analyzer.Parse:
    for parse in analyzer().parse(lemma):
        tag = parse.tag
        if tag.POS == "NOUN" and parse.normal_form == lemma and gender in tag and "sing" in tag and "nomn" in tag:
            return parse
    raise MorphologyError(f"pymorphy3 does not know {lemma!r} as a {gender} noun in the nominative singular")


@cache
def _adjective_parse(lemma: str) -> pymorphy3.analyzer.Parse | None:
    """The masculine nominative singular adjective or participle parse of ``lemma``, if any."""
    for parse in analyzer().parse(lemma):
        tag = parse.tag
        if tag.POS in _ADJECTIVE_POS and parse.word == lemma and {"masc", "sing", "nomn"} <= tag.grammemes:
            return parse
    return None


def _inflect(parse: pymorphy3.analyzer.Parse, grammemes: set[str], what: str) -> str:
    form = parse.inflect(grammemes)
    if form is None:
        raise MorphologyError(f"pymorphy3 has no {','.join(sorted(grammemes))} form of {what} {parse.word!r}")
    return form.word


@cache
def noun_form(lemma: str, gender: str, case: str, number: str) -> str:
    """``noun_form("цилиндр", "masc", "ablt", "plur")`` -> ``"цилиндрами"``."""
    return _inflect(_noun_parse(lemma, gender), {case, number}, "the noun")


@cache
def adjective_form(
    lemma: str, case: str, number: str, gender: str, animate: bool = False, short: bool = False
) -> str:
    """The form of an adjective or participle (given as masculine nominative singular) that agrees.

    ``short`` gives the short form (``сделанный`` -> ``сделана``), which has no case.
    """
    parse = _adjective_parse(lemma)
    if parse is None:
        raise MorphologyError(f"{lemma!r} is not an adjective in the masculine nominative singular")
    grammemes = {number} | ({gender} if number == "sing" else set())
    if short:
        grammemes.add("PRTS" if parse.tag.POS == "PRTF" else "ADJS")
    else:
        grammemes.add(case)
        # Only the masculine singular and the plural accusative tell animate from inanimate.
        if case == "accs" and (number == "plur" or gender == "masc"):
            grammemes.add("anim" if animate else "inan")
    return _inflect(parse, grammemes, "the adjective")


def past_verb_form(lemma: str, gender: str, number: str) -> str:
    """A past-tense verb (given as masculine singular: был) agreeing with its subject: была, было, были."""
    parse = _past_verb_parse(lemma)
    if parse is None:
        raise MorphologyError(f"{lemma!r} is not a past-tense verb in the masculine singular")
    return _inflect(parse, {"plur"} if number == "plur" else {gender}, "the verb")


@cache
def _past_verb_parse(word: str) -> pymorphy3.analyzer.Parse | None:
    parses = analyzer().parse(word)
    if parses and all(p.tag.POS == "VERB" and {"past", "masc", "sing"} <= p.tag.grammemes for p in parses):
        return parses[0]
    return None


def agreeing_form(kind: str, word: str, case: str, number: str, noun: Noun, short: bool = False,
                  after_preposition: bool = False) -> str:
    """A word of a group agreeing with ``noun``: an ``adjective`` (a literal, or an attribute's
    adjective; "" stays ""), the ``pronoun`` standing for the noun, a past-tense ``verb``, or a fixed word."""
    if kind == "adjective":
        return adjective_form(word, case, number, noun.gender, noun.animate, short) if word else ""
    if kind == "pronoun":
        return pronoun_form(noun.gender, number, case, after_preposition)
    if kind == "verb":
        return past_verb_form(word, noun.gender, number)
    return word


#: Derived prepositions of the dative after which a pronoun keeps its plain form (благодаря ему), and
#: the words read as prepositions or gerunds that do the same (включая его, исключая её, спустя их).
_PLAIN_PRONOUN_PREPOSITIONS = frozenset({"благодаря", "согласно", "вопреки", "навстречу", "подобно", "вслед", "наперекор",
                                         "соответственно", "сообразно", "включая", "исключая", "спустя"})
#: Comparatives of place that govern the genitive like a preposition (левее неё).
PLACE_COMPARATIVES = frozenset({"левее", "правее"})


def keeps_plain_pronoun(word: str) -> bool:
    """Whether a third-person pronoun right after ``word`` keeps its plain form although ``word``
    reads as a preposition (благодаря ему, включая его): its н-form there is an error."""
    return word.lower() in _PLAIN_PRONOUN_PREPOSITIONS


@lru_cache(maxsize=WORDS_CACHED)
def takes_n_form(word: str) -> bool:
    """Whether a third-person pronoun right after ``word`` takes its н-form (за ним, между ней,
    позади него, левее неё): after a preposition, primary or derived, and after a comparative of
    place; not after the words that keep the plain form (благодаря ему, включая его)."""
    word = word.lower()
    if keeps_plain_pronoun(word):
        return False
    return word in PLACE_COMPARATIVES or any(parse.tag.POS == "PREP" for parse in analyzer().parse(word))


@cache
def pronoun_form(gender: str, number: str, case: str, after_preposition: bool = False) -> str:
    """The third-person pronoun standing for a noun: ``(femn, sing, gent, True)`` -> ``"неё"``."""
    lemma = _PRONOUN_LEMMAS["plur" if number == "plur" else gender]
    parse = next(p for p in analyzer().parse(lemma) if p.tag.POS == "NPRO" and "nomn" in p.tag)
    if case == "nomn":
        return lemma
    if after_preposition:  # него, ней, них: the н-forms after a preposition
        form = parse.inflect({case, "Af-p"})
        if form is not None:
            return form.word
    return _inflect(parse, {case}, "the pronoun")


def numeral_government(count: int, case: str, gender: str, animate: bool = False) -> tuple[tuple[str, str], tuple[str, str]]:
    """(case, number) of the noun and of its adjectives after the numeral ``count`` in ``case``.

    1, 21, 101: everything agrees in the singular (21 большая сфера). In the nominative and
    inanimate accusative 2-4 (not 12-14) take the genitive singular noun with genitive plural
    adjectives, or nominative plural ones for feminine nouns (2 больших куба, 2 большие сферы);
    other numbers take the genitive plural (5 больших кубов). In the other cases the numeral
    agrees, so noun and adjectives stand in that case in the plural (с 5 большими кубами).
    """
    last, last_two = count % 10, count % 100
    if last == 1 and last_two != 11:
        return (case, "sing"), (case, "sing")
    if case == "accs" and animate:  # animate accusative = genitive (двух котов)
        return ("gent", "plur"), ("gent", "plur")
    if case in ("nomn", "accs"):
        if 2 <= last <= 4 and not 12 <= last_two <= 14:
            return ("gent", "sing"), ((case, "plur") if gender == "femn" else ("gent", "plur"))
        return ("gent", "plur"), ("gent", "plur")
    return (case, "plur"), (case, "plur")


def count_number(count: int) -> str:
    """Grammatical number a pronoun or relative word takes when it refers back to ``count`` things."""
    return "sing" if count % 10 == 1 and count % 100 != 11 else "plur"


@lru_cache(maxsize=65536)
def noun_phrase(modifiers: tuple[tuple[str, str], ...], noun: Noun, case: str, number: str) -> str:
    """Assemble an agreeing noun phrase. ``modifiers`` precede the noun, each one of:

    ``("adjective", lemma)`` agrees with the noun; ``("fixed", text)`` is copied (ещё);
    ``("count", digits)`` is a numeral that governs the noun and the adjectives (``number`` is
    then ignored).
    """
    noun_case, noun_number = adjective_case, adjective_number = case, number
    for kind, text in modifiers:
        if kind == "count":
            (noun_case, noun_number), (adjective_case, adjective_number) = numeral_government(
                int(text), case, noun.gender, noun.animate
            )
    words = []
    for kind, text in modifiers:
        if kind == "adjective":
            words.append(adjective_form(text, adjective_case, adjective_number, noun.gender, noun.animate))
        else:
            words.append(text)
    words.append(noun_form(noun.lemma, noun.gender, noun_case, noun_number))
    return " ".join(words)


def word_role(word: str, lexicon: Lexicon | None = None) -> str:
    """What a literal word of a template can do: ``noun`` (from the lexicon), ``pronoun`` (он),
    ``adjective`` (agrees: другой, который, один, сделанный), ``verb`` (a past-tense verb, agrees
    in gender and number: был), ``invariable`` (ещё, же) or ``unknown``.
    """
    if word in (lexicon or default_lexicon()).nouns:
        return "noun"
    return _grammatical_role(word)


@cache
def _grammatical_role(word: str) -> str:
    if word == _PRONOUN_LEMMAS["masc"]:
        return "pronoun"
    if _adjective_parse(word) is not None:
        return "adjective"
    if _past_verb_parse(word) is not None:
        return "verb"
    parses = analyzer().parse(word)
    if parses and all(p.tag.POS in _INVARIABLE_POS for p in parses):
        return "invariable"
    return "unknown"


@cache
def verb_number(word: str) -> str | None:
    """``sing``/``plur`` when every reading of ``word`` is a finite verb or short participle of that
    number (находится, находятся, сделаны); None for any other word, and for a verb that addresses
    the reader (an imperative or a first or second person form: «Скажи», «посмотрите»), which
    agrees with no group."""
    parses = analyzer().parse(word)
    numbers = {parse.tag.number for parse in parses if parse.tag.POS in ("VERB", "PRTS")}
    if not parses or any(parse.tag.POS not in ("VERB", "PRTS") for parse in parses) or len(numbers) != 1:
        return None
    if all(parse.tag.mood == "impr" or parse.tag.person in ("1per", "2per") for parse in parses):
        return None
    return numbers.pop()

