"""Russian morphology for the native realiser: a curated noun lexicon, cached inflection, checks.

pymorphy3 is used only to inflect words whose lemma and gender we already know. Its first
parse is often wrong for our words (``цилиндр``, ``предмет``, ``объект`` parse as accusative
first; ``стали`` as a verb), so every noun comes from the vocabulary with its gender and
animacy, and the parse we inflect from is the one that matches them. ``make_agree_with_number``
is not used (it ignores case for adjectives outside the nominative): numeral government is
:func:`numeral_government`. ``inflect()`` returning None (a form that does not exist) is an
error that names the word and the form, never an empty string.

The checkers at the bottom (:func:`check_agreement`, :func:`check_surface`) analyse finished
Russian text with pymorphy3 and know nothing about templates, so the ``morph`` acceptability
filter can call them on machine-translated text too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType
from typing import Iterable, Mapping

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
        for word in ru["synonyms"]:  # type: ignore[union-attr]
            code = genders.get(word)  # type: ignore[union-attr]
            if code not in GENDERS:
                raise MorphologyError(
                    f"vocabulary: {where}: Russian noun {word!r} needs its gender in ru.genders (m, f or n)"
                )
            nouns[word] = Noun(word, GENDERS[code], animate)
    relation_cases: dict[str, str] = {}
    for name, entry in vocabulary.relations.items():
        ru = entry["ru"]
        for phrase in ru["synonyms"]:  # type: ignore[union-attr]
            case = ru.get("cases", {}).get(phrase)  # type: ignore[union-attr]
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


@lru_cache(maxsize=None)
def _noun_parse(lemma: str, gender: str) -> pymorphy3.analyzer.Parse:
    for parse in analyzer().parse(lemma):
        tag = parse.tag
        if tag.POS == "NOUN" and parse.normal_form == lemma and gender in tag and "sing" in tag and "nomn" in tag:
            return parse
    raise MorphologyError(f"pymorphy3 does not know {lemma!r} as a {gender} noun in the nominative singular")


@lru_cache(maxsize=None)
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


@lru_cache(maxsize=None)
def noun_form(lemma: str, gender: str, case: str, number: str) -> str:
    """``noun_form("цилиндр", "masc", "ablt", "plur")`` -> ``"цилиндрами"``."""
    return _inflect(_noun_parse(lemma, gender), {case, number}, "the noun")


@lru_cache(maxsize=None)
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


@lru_cache(maxsize=None)
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
    ``adjective`` (agrees: другой, который, один, сделанный), ``invariable`` (ещё, же) or ``unknown``.
    """
    if word in (lexicon or default_lexicon()).nouns:
        return "noun"
    return _grammatical_role(word)


@lru_cache(maxsize=None)
def _grammatical_role(word: str) -> str:
    if word == _PRONOUN_LEMMAS["masc"]:
        return "pronoun"
    if _adjective_parse(word) is not None:
        return "adjective"
    parses = analyzer().parse(word)
    if parses and all(p.tag.POS in _INVARIABLE_POS for p in parses):
        return "invariable"
    return "unknown"


# ---------------------------------------------------------------------------------------------
# Checks of finished text, reusable by the morph acceptability filter.

_TOKEN = re.compile(r"\d+|[А-Яа-яЁё]+(?:-[А-Яа-яЁё]+)*|\S")
_CASE_NORMAL = MappingProxyType({"gen1": "gent", "gen2": "gent", "acc2": "accs", "loc1": "loct", "loc2": "loct", "voct": "nomn"})
#: Parses that stop a word from being read as a modifier inside a noun phrase (всего, больше).
_NOT_A_MODIFIER = frozenset({"ADVB", "PRCL", "CONJ", "PREP", "PRED", "INTJ", "NPRO"})
#: Parses of function words and adverbs that stop a word from heading a noun phrase (из, ли, справа).
_NOT_A_HEAD = frozenset({"PRCL", "CONJ", "PREP", "ADVB"})
#: Dictionary readings too rare to trust: abbreviations and names (куб as an abbreviation,
#: «ли» as a surname, «того» as the country).
_RARE_READINGS = frozenset({"Abbr", "Name", "Surn", "Patr", "Geox", "Orgn", "Init", "Erro", "Dist"})
#: Cases each preposition takes (closed-class grammar, not vocabulary).
PREPOSITION_CASES = MappingProxyType({
    "от": {"gent"}, "из": {"gent"}, "у": {"gent"}, "до": {"gent"}, "без": {"gent"}, "для": {"gent"},
    "около": {"gent"}, "возле": {"gent"}, "позади": {"gent"}, "впереди": {"gent"}, "среди": {"gent"},
    "перед": {"ablt"}, "над": {"ablt"}, "между": {"ablt", "gent"}, "за": {"accs", "ablt"},
    "под": {"accs", "ablt"}, "с": {"gent", "accs", "ablt"}, "со": {"gent", "accs", "ablt"},
    "в": {"accs", "loct"}, "во": {"accs", "loct"}, "на": {"accs", "loct"}, "о": {"accs", "loct"},
    "об": {"accs", "loct"}, "по": {"datv", "accs", "loct"}, "к": {"datv"}, "ко": {"datv"},
})

# (case, number, gender or None, animacy or None)
_Features = tuple[str, str, "str | None", "str | None"]


@dataclass(frozen=True)
class _WordInfo:
    modifier: frozenset  # features of adjective-like parses; empty when the word cannot modify
    head: frozenset  # features of noun or pronoun parses; empty when the word cannot head a phrase


def _grammeme(value: object) -> str | None:
    # pymorphy3 returns its own grammeme strings, which refuse comparison with unknown names
    return str(value) if value else None


def _features(tag: object) -> _Features:
    case = _grammeme(tag.case)  # type: ignore[attr-defined]
    case = _CASE_NORMAL.get(case, case)  # type: ignore[arg-type]
    number = _grammeme(tag.number) or "sing"  # type: ignore[attr-defined]
    gender = _grammeme(tag.gender) if number == "sing" else None  # type: ignore[attr-defined]
    return (case, number, gender, _grammeme(tag.animacy))  # type: ignore[attr-defined, return-value]


@lru_cache(maxsize=65536)
def _word_info(word: str) -> _WordInfo:
    parses = [p for p in analyzer().parse(word) if not (p.tag.grammemes & _RARE_READINGS)]
    modifier, head = set(), set()
    not_a_modifier = any(p.tag.POS in _NOT_A_MODIFIER for p in parses)
    not_a_head = any(p.tag.POS in _NOT_A_HEAD for p in parses)
    for p in parses:
        if p.tag.POS in _ADJECTIVE_POS and p.tag.case and not not_a_modifier:
            modifier.add(_features(p.tag))
        if p.tag.POS in ("NOUN", "NPRO") and p.tag.case and (p.tag.POS == "NPRO" or not not_a_head):
            case, number, _, animacy = _features(p.tag)
            head.add((case, number, _grammeme(p.tag.gender), animacy))  # nouns keep their gender in the plural
    return _WordInfo(frozenset(modifier), frozenset(head))


def _agrees(modifier: _Features, head: _Features) -> bool:
    m_case, m_number, m_gender, m_animacy = modifier
    h_case, h_number, h_gender, h_animacy = head
    if (m_case, m_number) != (h_case, h_number):
        return False
    if m_number == "sing" and m_gender is not None and h_gender not in (m_gender, "Ms-f", None):
        return False
    return m_animacy is None or h_animacy is None or m_animacy == h_animacy


def _modifier_fits(modifier_features: Iterable[_Features], case: str, number: str, head: _Features) -> bool:
    target = (case, number, head[2], head[3])
    return any(_agrees(m, target) for m in modifier_features)


def _phrase_ok(count: int | None, modifiers: list[_WordInfo], head: _WordInfo, cases: set[str] | None) -> bool:
    """Whether some reading of the head makes every modifier agree (and the preposition fit)."""
    for features in head.head:
        phrase_cases = CASES if count is not None else (features[0],)
        for phrase_case in phrase_cases:
            if cases is not None and phrase_case not in cases:
                continue
            if count is None:
                noun = (features[0], features[1])
                allowed = [noun]
            else:
                noun, adjective = numeral_government(count, phrase_case, features[2] or "masc")
                allowed = [adjective]
                if noun == ("gent", "sing") and phrase_case in ("nomn", "accs"):
                    allowed = [("gent", "plur"), (phrase_case, "plur")]  # 2 больших / большие сферы
            if (features[0], features[1]) != noun:
                continue
            if all(any(_modifier_fits(m.modifier, c, n, features) for c, n in allowed) for m in modifiers):
                return True
    return False


def check_agreement(text: str) -> list[str]:
    """Problems of agreement in ``text`` found by analysing each noun phrase with pymorphy3.

    A noun phrase is an optional numeral (digits), a run of adjective-like words and the noun
    (or pronoun) that ends it. Checked: the adjectives agree with the noun in gender, number and
    case; the numeral governs the right form (1 куб, 2 куба, 5 кубов, 21 сфера, 2 большие сферы);
    a preposition is followed by a case it takes (от + genitive, за + accusative/instrumental).
    pymorphy3 is ambiguous, so a phrase passes when some reading of all its words is consistent,
    and readings pymorphy3 marks as abbreviations or names are ignored: the check errs towards
    passing, and a reported problem is almost surely real. A numeral in digits may stand in any
    case («около 2 больших кубов»), so only forms no case allows are reported after it.
    Returns an empty list for good text.
    """
    tokens = _TOKEN.findall(text)
    infos = [_word_info(t.lower()) if t[0].isalpha() else None for t in tokens]
    problems: list[str] = []
    i = 0
    while i < len(tokens):
        start = i
        preposition = tokens[i - 1].lower() if i > 0 else ""
        count = None
        if tokens[i].isdigit():
            count = int(tokens[i])
            i += 1
        run_end = i
        while run_end < len(tokens) and infos[run_end] is not None and infos[run_end].modifier:
            run_end += 1
        head = _head_position(infos, i, run_end)
        if head is None:
            i = max(run_end, start + 1)
            continue
        cases = PREPOSITION_CASES.get(preposition)
        if not _phrase_ok(count, infos[i:head], infos[head], cases):  # type: ignore[arg-type]
            phrase = " ".join(tokens[start:head + 1])
            problems.append(_describe(phrase, preposition, count, infos[i:head], infos[head], cases))  # type: ignore[arg-type]
        i = head + 1
    return problems


def _head_position(infos: list[_WordInfo | None], run_start: int, run_end: int) -> int | None:
    """The noun ending a run of modifiers: the word after the run, else the run's last word when it
    can be a noun too (a substantivised adjective); None when the run ends without a noun."""
    if run_end < len(infos) and infos[run_end] is not None and infos[run_end].head:  # type: ignore[union-attr]
        return run_end
    if run_end > run_start and infos[run_end - 1].head:  # type: ignore[union-attr]
        return run_end - 1
    return None


def _describe(phrase: str, preposition: str, count: int | None, modifiers: list[_WordInfo], head: _WordInfo, cases: set[str] | None) -> str:
    if cases is not None and _phrase_ok(count, modifiers, head, None):
        allowed = " or ".join(CASE_NAMES[c] for c in CASES if c in cases)
        return f"«{preposition} {phrase}»: «{preposition}» takes the {allowed} case"
    if count is not None:
        return f"«{phrase}»: the numeral {count} does not govern this form of the noun phrase"
    return f"«{phrase}»: the words do not agree in gender, number and case"


_LATIN = re.compile(r"[A-Za-z]+")
_TEMPLATE_LEFTOVER = re.compile(r"<[^>]*>|[\[\]|{}<>]")
_SPACE_BEFORE_PUNCTUATION = re.compile(r"\s[,.?!:;]")


def check_surface(text: str, question: bool = True) -> list[str]:
    """Problems of form: Latin letters, template leftovers, spacing, capital letter, question mark."""
    problems = []
    latin = _LATIN.findall(text)
    if latin:
        problems.append(f"Latin letters: {', '.join(sorted(set(latin)))}")
    leftovers = _TEMPLATE_LEFTOVER.findall(text)
    if leftovers:
        problems.append(f"template syntax left in the text: {' '.join(leftovers)}")
    if "  " in text:
        problems.append("double space")
    if text != text.strip():
        problems.append("leading or trailing space")
    if _SPACE_BEFORE_PUNCTUATION.search(text):
        problems.append("space before a punctuation mark")
    if text and not text[0].isupper():
        problems.append("does not start with a capital letter")
    if question and not text.endswith("?"):
        problems.append("does not end with a question mark")
    return problems


def check_text(text: str, question: bool = True) -> list[str]:
    """All problems of ``text``: :func:`check_surface` then :func:`check_agreement`."""
    return check_surface(text, question) + check_agreement(text)
