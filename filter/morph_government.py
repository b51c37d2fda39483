"""Government rules of the acceptability checker (:mod:`filter.morph`): the noun phrase after a
numeral or a preposition is in a form the governor allows."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from filter.morph_agreement import agreement_problems
from filter.morph_words import (
    AGREEMENT,
    MODIFIER_POS,
    NUMERAL,
    PERSONAL_PRONOUNS,
    PREPOSITION,
    PREPOSITION_CASES,
    Form,
    NounPhrase,
    Word,
)
from russian.morphology import (
    CASE_NAMES,
    CASES,
    PLACE_COMPARATIVES,
    keeps_plain_pronoun,
    numeral_government,
    takes_n_form,
)

_GENDERS = ("masc", "femn", "neut")
_NOMINAL_POS = frozenset({"NOUN", "ADJF", "PRTF", "NPRO", "NUMR"})
# Word numerals that govern like 2 (два куба, обе сферы); the others govern like 5.
_PAUCAL = frozenset({"два", "три", "четыре", "оба", "полтора"})
# Quantity words that govern the genitive of either number (сколько кубов, сколько резины).
_QUANTITY = frozenset({"сколько", "столько", "несколько", "много", "мало", "немного", "немало"})


# --- numerals -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Government:
    """One way a numeral can govern the phrase after it: the noun's case and number, and the
    adjectives' (None: they agree with the noun)."""

    noun_case: str
    noun_number: str | None  # None: either number (сколько кубов / сколько резины)
    adjectives: frozenset[tuple[str, str]] | None = None
    noun_gender: str | None = None  # the gender the reading was made for (2 большие сферы / 2 больших куба)

    def describe(self) -> str:
        number = {"sing": " singular", "plur": " plural"}.get(self.noun_number or "", "")
        return f"the {CASE_NAMES[self.noun_case]}{number}"


def numeral_governments(numeral: Word) -> list[Government]:
    """Every reading of a numeral (digits or a word) as the governor of the next noun phrase.

    The rules are the realiser's own (:func:`russian.morphology.numeral_government`), so the
    checker and the realiser cannot disagree about «2 куба» or «5 кубов». A word numeral is
    read as its class: 2 for два/три/четыре/оба/полтора, 5 for the rest; quantity words
    (сколько, несколько) take the genitive of either number.
    """
    if numeral.text.isascii() and numeral.text.isdigit():
        # Digits do not show their case: every case is a possible reading.
        return _governments(int(numeral.text), CASES, animate=(False, True))
    readings: list[Government] = []
    for form in numeral.forms:
        if form.pos != "NUMR" or form.case not in CASES:
            continue
        direct = form.case == "nomn" or (form.case == "accs" and form.animacy != "anim")
        if direct and form.lemma in _QUANTITY:
            readings.append(Government("gent", None))
            continue
        value = 2 if form.lemma in _PAUCAL else 5
        genders = _numeral_genders(form)
        readings += _governments(value, (form.case,), animate=(form.animacy == "anim",), genders=genders)
    return list(dict.fromkeys(readings))


def _numeral_genders(form: Form) -> tuple[str, ...]:
    # два/оба/полтора go with masculine and neuter nouns, две/обе/полторы with feminine ones.
    if form.gender == "femn":
        return ("femn",)
    if form.gender in ("masc", "neut"):
        return ("masc", "neut")
    return _GENDERS


def _governments(
    value: int, cases: Iterable[str], animate: Iterable[bool], genders: Sequence[str] = ("masc", "femn", "neut")
) -> list[Government]:
    readings = []
    for case in cases:
        for gender in genders:
            for is_animate in animate:
                (noun_case, noun_number), adjective = numeral_government(value, case, gender, is_animate)
                if adjective == (noun_case, noun_number):
                    readings.append(Government(noun_case, noun_number, None, gender))
                else:
                    # «две больших сферы» is also standard, beside the realiser's «две большие сферы».
                    readings.append(Government(noun_case, noun_number, frozenset({adjective, ("gent", "plur")}), gender))
    return list(dict.fromkeys(readings))


def is_numeral(word: Word) -> bool:
    return word.text.isdigit() or "NUMR" in word.pos


def governed_phrases(words: Sequence[Word], phrases: Sequence[NounPhrase]) -> list[tuple[int, NounPhrase]]:
    """(numeral position, phrase) for every phrase that directly follows a numeral.

    Adverbs and particles may stand between (``сколько ещё кубов``, ``сколько же шаров``). A
    phrase starting with ``один`` is not governed: in ``двадцать один куб`` it agrees instead.
    """
    starts = {p.start: p for p in phrases}
    found = []
    for position, word in enumerate(words):
        if not is_numeral(word):
            continue
        following = position + 1
        while following < len(words) and following - position <= 3 and _is_filler(words[following]):
            following += 1
        phrase = starts.get(following)
        if phrase is not None and not (phrase.modifiers and _is_one(phrase.modifiers[0])):
            found.append((position, phrase))
    return found


def _is_one(word: Word) -> bool:
    return any(f.lemma == "один" for f in word.forms)


def _is_filler(word: Word) -> bool:
    return bool(word.pos) and bool(word.pos & {"ADVB", "PRCL"}) and not word.pos & {"NOUN", "NUMR", "PREP"}


def numeral_problems(numeral: Word, phrase: NounPhrase) -> list[str]:
    """Whether the phrase after a numeral has a form the numeral allows, and agrees inside."""
    governments = numeral_governments(numeral)
    fitting = [(g, [f for f in phrase.head.forms if _noun_fits(f, g)]) for g in governments]
    fitting = [(g, nouns) for g, nouns in fitting if nouns]
    if not governments:
        return []
    if not fitting:
        direct = next((g for g in governments if g.noun_case == "gent"), governments[0])
        return [f"{NUMERAL}: «{phrase.head.text}» after «{numeral.text}» should be in {direct.describe()}"]
    problems = [_modifier_problems(phrase, nouns, g) for g, nouns in fitting]
    # The noun fits some reading: blame the modifiers only if they fit none of those readings.
    return [] if any(not p for p in problems) else problems[0]


def _noun_fits(noun: Form, government: Government) -> bool:
    if noun.pos != "NOUN" or noun.case != government.noun_case:
        return False
    if government.noun_number is not None and noun.number != government.noun_number:
        return False
    return government.noun_gender is None or noun.gender in (government.noun_gender, "ms-f", None)


def _modifier_problems(phrase: NounPhrase, nouns: Sequence[Form], government: Government) -> list[str]:
    if government.adjectives is None:
        return agreement_problems(phrase, nouns)
    wrong = [
        m.text for m in phrase.modifiers
        if not any(f.pos in MODIFIER_POS and (f.case, f.number) in government.adjectives for f in m.forms)
    ]
    if not wrong:
        return []
    return [f"{AGREEMENT}: «{' '.join(wrong)}» does not agree with «{phrase.head.text}» after a numeral"]


# --- prepositions ---------------------------------------------------------------------------


def preposition_problems(words: Sequence[Word], phrases: Sequence[NounPhrase]) -> list[str]:
    """The noun phrase (or word) right after a preposition has a reading in a case the preposition
    governs, and a third-person pronoun there has its н (от него, позади него; not от его, позади его)."""
    starts = {p.start: p for p in phrases}
    reasons = []
    for position, word in enumerate(words[:-1]):
        cases = PREPOSITION_CASES.get(word.lower)
        following = words[position + 1]
        if not following.known:
            continue
        if position + 1 not in starts and takes_n_form(word.lower) and _lacks_n(words, position + 1):
            reasons.append(f"{PREPOSITION}: «{following.text}» after «{word.text}» should be «н{following.lower}»")
        if keeps_plain_pronoun(word.lower) and _is_n_form(following):
            reasons.append(f"{PREPOSITION}: «{following.text}» after «{word.text}» should be «{following.lower[1:]}»")
        if cases is None or "PREP" not in word.pos and word.lower not in PLACE_COMPARATIVES:
            continue
        allowed = " or ".join(CASE_NAMES[c] for c in CASES if c in cases)
        # ``позади``/``впереди`` are adverbs too: «Позади большой шар» has the ball as its subject.
        adverb = "ADVB" in word.pos
        phrase = starts.get(position + 1)
        # A phrase is judged by its noun: its modifiers are the agreement check's business.
        judged, forms = (phrase.text, phrase.head.forms) if phrase else (following.text, following.forms)
        nominal = [f for f in forms if f.pos in (("NOUN",) if phrase else _NOMINAL_POS)]
        if nominal and not any(f.case in cases or adverb and f.case == "nomn" for f in nominal):
            reasons.append(f"{PREPOSITION}: «{judged}» after «{word.text}» should be in the {allowed}")
    return reasons


def _lacks_n(words: Sequence[Word], position: int) -> bool:
    """A third-person pronoun in an oblique case without its н (его, ей, им, их), unless it is
    the possessive before a noun phrase (от его куба)."""
    word = words[position]
    if word.lower.startswith("н") or not any(f.pos == "NPRO" and f.lemma in PERSONAL_PRONOUNS and f.case != "nomn"
                                              for f in word.forms):
        return False
    after = words[position + 1] if position + 1 < len(words) else None
    return after is None or not (after.is_noun() or after.is_modifier())


def _is_n_form(word: Word) -> bool:
    """A third-person pronoun in its н-form (него, ней, ним, них), said only after a preposition."""
    return word.lower.startswith("н") and any(f.pos == "NPRO" and f.lemma in PERSONAL_PRONOUNS and f.case != "nomn"
                                              for f in word.forms)
