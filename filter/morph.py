"""The acceptability checker: pymorphy3 rules for the errors generated Russian questions make.

This is the project's one checker of finished Russian text: the ``morph`` filter backend runs
it on every translation, and the native realiser's tests run it on everything the realiser can
write. Machine translation and template filling go wrong in a few recognisable ways: a
placeholder left in (``<Z>``, ``{color}``, ``[shape]``), an English word left in, a word that
is not Russian, broken form (spacing, capital letter, question mark), an adjective that does
not agree with its noun, a short form (сделан, какова) or ``который`` that does not agree with
the noun it speaks of, a verb that does not agree in number with its subject (находятся куб),
a compared phrase not in the nominative after «как»/«что и», a pronoun with two earlier object
nouns it could stand for, a noun in the wrong form after a
numeral or a preposition, a pronoun without its н after a preposition (от его). Each check returns reasons ``"category: detail"``;
the category (before the colon) is what the filter's report counts.

Every rule is written to be *lenient under ambiguity*: a word's analyses are all considered,
and a phrase is wrong only if no combination of analyses makes it right. The checker must
accept every question the native realiser writes, so a missed error is preferred to a false
alarm.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from filter.base import Verdict
from translate.morphology import CASE_NAMES, CASES, analyzer, default_lexicon, numeral_government

# Reason categories (the part of a reason before the colon).
PLACEHOLDER = "placeholder"
LATIN = "latin"
UNKNOWN_WORD = "unknown_word"
FORM = "form"
AGREEMENT = "agreement"
NUMERAL = "numeral"
PREPOSITION = "preposition"
COMPARISON = "comparison"
PRONOUN = "pronoun"

# A leftover template slot in any of the syntaxes the pipeline uses (CLEVR <Z>, Python/Jinja
# {x}, bracketed [x]), or a lone bracket that a half-substituted slot leaves behind.
_PLACEHOLDER = re.compile(r"<[^<>]*>|\{[^{}]*\}|\[[^\[\]]*\]|[<>{}\[\]]")
_TOKEN = re.compile(r"\d+|[^\W\d_]+(?:-[^\W\d_]+)*|\S")
_LATIN = re.compile(r"[A-Za-z]")
_CYRILLIC_WORD = re.compile(r"[а-яё]+(?:-[а-яё]+)*")

# Analyses that are technically possible but never meant in a generated question (``куба`` as
# the country Cuba, ``куб`` as the abbreviation of "cubic", ``ли`` as a name). Dropping them
# keeps them from excusing a real error; they are kept when nothing else is left.
_IMPROBABLE = frozenset({"Name", "Surn", "Patr", "Geox", "Orgn", "Trad", "Abbr", "Arch", "Erro", "Dist"})
# Second genitive/locative/accusative (``чаю``, ``в углу``) agree as the main case does.
_CASE_ALIASES = {"gen1": "gent", "gen2": "gent", "acc2": "accs", "loc1": "loct", "loc2": "loct"}
_GENDERS = ("masc", "femn", "neut")
_MODIFIER_POS = frozenset({"ADJF", "PRTF"})
_NOMINAL_POS = frozenset({"NOUN", "ADJF", "PRTF", "NPRO", "NUMR"})
# Verbs whose instrumental complement is a predicate (является металлическим).
_COPULAS = frozenset({"являться", "быть", "стать", "становиться", "оказаться", "оказываться", "казаться", "считаться"})
# Particles that may stand inside a noun phrase: «такой же формы», «одинакового ли размера».
_INSIDE_PHRASE = frozenset({"же", "ли"})
# Hyphenated particles (``какой-то``, ``куда-нибудь``) that the dictionary does not list alone.
_HYPHEN_PARTICLES = frozenset({"то", "либо", "нибудь", "ка", "таки", "де"})
# Word numerals that govern like 2 (два куба, обе сферы); the others govern like 5.
_PAUCAL = frozenset({"два", "три", "четыре", "оба", "полтора"})
# Quantity words that govern the genitive of either number (сколько кубов, сколько резины).
_QUANTITY = frozenset({"сколько", "столько", "несколько", "много", "мало", "немного", "немало"})
# The cases each preposition governs (closed-class grammar, not vocabulary).
PREPOSITION_CASES: dict[str, frozenset[str]] = {
    word: frozenset(cases) for words, cases in [
        (["от", "из", "у", "до", "без", "для", "около", "возле", "позади", "впереди", "среди", "из-за",
          "левее", "правее",
          "из-под", "кроме", "после", "вместо", "вокруг", "ради", "против", "напротив", "внутри", "вдоль",
          "мимо"], ("gent",)),
        (["к", "ко", "благодаря", "согласно"], ("datv",)),
        (["через", "сквозь", "про"], ("accs",)),
        (["при"], ("loct",)),
        (["перед", "передо", "над", "надо"], ("ablt",)),
        (["между"], ("ablt", "gent")),
        (["за", "под", "подо"], ("accs", "ablt")),
        (["с", "со"], ("gent", "accs", "ablt")),
        (["в", "во", "на", "о", "об", "обо"], ("accs", "loct")),
        (["по"], ("datv", "accs", "loct")),
    ] for word in words
}
# Comparatives used as prepositions of place (левее шара); other comparatives take «чем» or «к».
_PLACE_COMPARATIVES = frozenset({"левее", "правее"})
# Third-person pronouns take an н after a preposition: от него, за ней, у них.
_PERSONAL_PRONOUNS = frozenset({"он", "она", "оно", "они"})
# Short adjectives and participles: the predicate of a noun (сделан куб, какова форма).
_SHORT_POS = frozenset({"ADJS", "PRTS"})
# Words after which a plural predicate may stand before a singular first subject
# («Сделаны ли куб и шар...»).
_COORDINATORS = frozenset({"и", "или", "либо"})
# Where a sentence or clause ends for the look-back of «который».
_SENTENCE_END = frozenset({".", "?", "!", ";"})
_DOUBLE_SPACE = re.compile(r"\s{2,}")
_SPACE_BEFORE_PUNCTUATION = re.compile(r"\s[,.?!:;]")


@dataclass(frozen=True)
class Form:
    """One morphological analysis of a word, reduced to what agreement needs."""

    pos: str
    lemma: str
    case: str | None
    number: str | None
    gender: str | None
    animacy: str | None
    intransitive: bool = False  # a verb that takes no direct object (находится), so a phrase next to it is its subject


@dataclass(frozen=True)
class Word:
    """A token of the question with its analyses; punctuation and digits have none."""

    text: str
    forms: tuple[Form, ...] = ()
    known: bool = True

    @property
    def lower(self) -> str:
        return self.text.lower()

    @property
    def pos(self) -> frozenset[str]:
        return frozenset(f.pos for f in self.forms)

    def is_modifier(self) -> bool:
        """An adjective (possibly also a noun, as ``красный``) that can modify the noun after it.

        Words that are only participles are left out: they take objects of their own
        («имеющий ту же форму», «окрашенный красным цветом»). ``который`` agrees with the noun
        before its comma, never with the one after it. A comparative reading does not stop an
        adjective (``синее`` is «bluer» too): before a noun it is the adjective.
        """
        if not self.known or "ADJF" not in self.pos or not self.pos <= _MODIFIER_POS | {"NOUN", "COMP"}:
            return False
        return all(f.lemma != "который" for f in self.forms)

    def is_noun(self) -> bool:
        return self.known and self.pos == {"NOUN"}


@dataclass(frozen=True)
class NounPhrase:
    """Modifiers and the noun they modify; ``start`` and ``end`` are the positions of the first
    word and of the noun in the token list."""

    start: int
    modifiers: tuple[Word, ...]
    head: Word
    end: int

    @property
    def text(self) -> str:
        return " ".join(w.text for w in (*self.modifiers, self.head))


class MorphChecker:
    """Finds the errors of generated Russian questions; ``problems(text)`` lists them as reasons."""

    def __init__(self) -> None:
        # The realiser's analyser: one set of dictionaries in memory, loaded on first use.
        self._analyzer = analyzer()
        self._word = lru_cache(maxsize=65536)(self._analyse)

    @property
    def dictionary_revision(self) -> str:
        return str(self._analyzer.dictionary.meta.get("source_revision", "unknown"))

    def problems(self, text: str) -> list[str]:
        """All reasons ``text`` is not an acceptable question; empty when none is found."""
        reasons = [f"{PLACEHOLDER}: «{m.group()}» left in the text" for m in _PLACEHOLDER.finditer(text)]
        # A placeholder splits the sentence so that no phrase is read across it.
        words = [self._word(t) for t in _TOKEN.findall(_PLACEHOLDER.sub(" | ", text))]
        reasons += [f"{LATIN}: «{w.text}» has Latin letters" for w in words if _LATIN.search(w.text)]
        reasons += [f"{UNKNOWN_WORD}: «{w.text}» is not a Russian word" for w in words if not w.known]
        reasons += form_problems(text)
        phrases = noun_phrases(words)
        governed = set()  # a phrase after a numeral is checked by the numeral's rules instead
        for position, phrase in governed_phrases(words, phrases):
            governed.add(phrase.start)
            reasons += numeral_problems(words[position], phrase)
        reasons += [r for p in phrases if p.start not in governed for r in agreement_problems(p)]
        reasons += predicate_problems(words, phrases)
        reasons += verb_problems(words, phrases)
        reasons += comparison_problems(words, phrases)
        reasons += relative_pronoun_problems(words)
        reasons += pronoun_antecedent_problems(words)
        reasons += preposition_problems(words, phrases)
        return reasons

    def _analyse(self, token: str) -> Word:
        lower = token.lower()
        if _LATIN.search(token):
            return Word(token)  # reported as Latin, not a second time as unknown
        if not _CYRILLIC_WORD.fullmatch(lower):
            # Digits and punctuation are fine; letters of another script are not Russian.
            return Word(token, known=not token[0].isalpha())
        parses = self._analyzer.parse(lower)
        likely = [p for p in parses if not (p.tag.grammemes & _IMPROBABLE)] or parses
        forms = tuple(dict.fromkeys(_form(p) for p in likely))
        return Word(token, forms, known=self._is_known(lower))

    def _is_known(self, word: str) -> bool:
        if self._analyzer.word_is_known(word):
            return True
        parts = word.split("-")
        return len(parts) > 1 and all(p in _HYPHEN_PARTICLES or self._analyzer.word_is_known(p) for p in parts)


def _form(parse: object) -> Form:
    tag = parse.tag  # type: ignore[attr-defined]  # pymorphy3 has no stubs
    case = _grammeme(tag.case)
    return Form(
        pos=str(tag.POS),
        lemma=parse.normal_form,  # type: ignore[attr-defined]  # pymorphy3 has no stubs
        case=_CASE_ALIASES.get(case, case) if case else None,
        number=_grammeme(tag.number),
        gender=_grammeme(tag.gender),
        animacy=_grammeme(tag.animacy),
        intransitive=_grammeme(tag.transitivity) == "intr",
    )


def _grammeme(value: object) -> str | None:
    # pymorphy3 returns grammeme objects that refuse comparison with unknown names ("ms-f").
    return str(value) if value else None


# --- form -------------------------------------------------------------------------------------


def form_problems(text: str) -> list[str]:
    """Spacing, the capital letter and the question mark (placeholders and Latin letters have
    categories of their own)."""
    problems = []
    if _DOUBLE_SPACE.search(text):
        problems.append("double space")
    if text != text.strip():
        problems.append("leading or trailing space")
    if _SPACE_BEFORE_PUNCTUATION.search(text):
        problems.append("space before a punctuation mark")
    if text and not text[0].isupper():
        problems.append("does not start with a capital letter")
    if not text.rstrip().endswith("?"):
        problems.append("does not end with a question mark")
    return [f"{FORM}: {problem}" for problem in problems]


# --- noun phrases and agreement -------------------------------------------------------------


def noun_phrases(words: Sequence[Word]) -> list[NounPhrase]:
    """Runs of modifiers directly before a noun. A noun ends a phrase; anything else breaks it."""
    phrases: list[NounPhrase] = []
    run: list[int] = []
    for position, word in enumerate(words):
        if word.is_noun():
            start = run[0] if run else position
            phrases.append(NounPhrase(start, tuple(words[i] for i in run), word, position))
            run = []
        elif word.is_modifier() and not (not run and _is_predicate(words, position)):
            run.append(position)
        elif not (run and word.lower in _INSIDE_PHRASE):
            run = []
    return phrases


def _is_predicate(words: Sequence[Word], position: int) -> bool:
    """An instrumental adjective right after a copula is its predicate: «Является ли металлическим
    большой шар?» — it does not modify the noun that follows."""
    before = position - 1
    if before >= 0 and words[before].lower == "ли":
        before -= 1
    if before < 0 or not any(f.lemma in _COPULAS for f in words[before].forms):
        return False
    return any(f.case == "ablt" for f in words[position].forms)


def agrees(modifier: Form, noun: Form) -> bool:
    """Whether an adjective form agrees with a noun form in number, case, gender and animacy."""
    if modifier.pos not in _MODIFIER_POS or noun.pos != "NOUN":
        return False
    if modifier.number != noun.number or modifier.case != noun.case:
        return False
    if noun.number == "sing" and noun.gender not in (None, "ms-f") and modifier.gender != noun.gender:
        return False
    # Accusative adjectives mark animacy (большой куб / большого кота); other forms do not.
    return modifier.animacy is None or noun.animacy is None or modifier.animacy == noun.animacy


def modifiers_agreeing(modifiers: Iterable[Word], noun: Form) -> list[bool]:
    return [any(agrees(f, noun) for f in m.forms) for m in modifiers]


def agreement_problems(phrase: NounPhrase, nouns: Iterable[Form] | None = None) -> list[str]:
    """Modifiers that agree with no reading of the noun (``nouns`` narrows the readings)."""
    if not phrase.modifiers:
        return []
    candidates = [f for f in (phrase.head.forms if nouns is None else nouns) if f.pos == "NOUN"]
    if not candidates:
        return []
    # Judge against the noun reading most modifiers agree with, so the report names the odd one out.
    best = max((modifiers_agreeing(phrase.modifiers, noun) for noun in candidates), key=sum)
    wrong = [m.text for m, ok in zip(phrase.modifiers, best, strict=True) if not ok]
    if not wrong:
        return []
    return [f"{AGREEMENT}: «{' '.join(wrong)}» does not agree with «{phrase.head.text}»"]


def predicate_problems(words: Sequence[Word], phrases: Sequence[NounPhrase]) -> list[str]:
    """A short form right before its subject (``Сделана ли большая сфера``, ``Какова форма``,
    ``Сделан ли он``) agrees with it in number and, in the singular, gender.

    Only a subject in the nominative that directly follows (after an optional ``ли``) is judged;
    a plural short form before coordinated subjects («Сделаны ли куб и шар») is right.
    """
    starts = {p.start: p for p in phrases}
    reasons = []
    for position, word in enumerate(words):
        if not word.forms or not all(f.pos in _SHORT_POS for f in word.forms):
            continue
        following = position + 1
        if following < len(words) and words[following].lower == "ли":
            following += 1
        phrase = starts.get(following)
        if phrase is not None:
            subjects = [f for f in phrase.head.forms if f.pos == "NOUN" and f.case == "nomn"]
            subject_text, after = phrase.text, phrase.end + 1
        elif following < len(words) and _is_personal_pronoun(words[following]):
            subjects = [f for f in words[following].forms if f.case == "nomn"]
            subject_text, after = words[following].text, following + 1
        else:
            continue
        coordinated = after < len(words) and words[after].lower in _COORDINATORS
        if subjects and not any(_predicate_agrees(s, n, coordinated) for s in word.forms for n in subjects):
            reasons.append(f"{AGREEMENT}: «{word.text}» does not agree with «{subject_text}»")
    return reasons


def verb_problems(words: Sequence[Word], phrases: Sequence[NounPhrase]) -> list[str]:
    """An intransitive finite verb (находится, находятся, являются) agrees in number with its subject: the
    nominative phrase right after it (after an optional ``ли``), else the one or the relative
    «который» right before it. Coordinated subjects («куб и шар») take either number; a phrase
    with no nominative reading (сколько кубов находится) is not a subject."""
    starts = {p.start: p for p in phrases}
    ends = {p.end: p for p in phrases}
    reasons = []
    for position, word in enumerate(words):
        numbers = {f.number for f in word.forms}
        if not word.forms or not all(f.pos == "VERB" and f.intransitive for f in word.forms) or len(numbers) != 1 or None in numbers:
            continue
        number = numbers.pop()
        following = position + 1 + (position + 1 < len(words) and words[position + 1].lower == "ли")
        subject = starts.get(following)
        if subject is not None:
            after = subject.end + 1
            if after < len(words) and words[after].lower in _COORDINATORS:
                continue
            forms, text = subject.head.forms, subject.text
        elif position > 0 and any(f.lemma == "который" for f in words[position - 1].forms):
            forms, text = words[position - 1].forms, words[position - 1].text
        elif position - 1 in ends and not (position >= 2 and words[ends[position - 1].start - 1].lower in _COORDINATORS):
            forms, text = ends[position - 1].head.forms, ends[position - 1].text
        else:
            continue
        nominative = [f for f in forms if f.case == "nomn"]
        if nominative and not any(f.number == number for f in nominative):
            reasons.append(f"{AGREEMENT}: the verb «{word.text}» does not agree in number with «{text}»")
    return reasons


def comparison_problems(words: Sequence[Word], phrases: Sequence[NounPhrase]) -> list[str]:
    """After «, как», «, как и» and «, что и» (such as X, as Y) the compared phrase is nominative,
    like the subject it is compared with; a preposition there (что и у Y) sets its own case."""
    starts = {p.start: p for p in phrases}
    reasons = []
    for position, word in enumerate(words):
        if word.lower not in ("как", "что") or position == 0 or words[position - 1].text != ",":
            continue
        following = position + 1
        if following < len(words) and words[following].lower == "и":
            following += 1
        elif word.lower == "что":
            continue  # «, что» alone opens a clause (Верно ли, что ...)
        phrase = starts.get(following)
        if phrase is None:
            continue
        nominative = [f for f in phrase.head.forms if f.pos == "NOUN" and f.case == "nomn"]
        if not any(all(modifiers_agreeing(phrase.modifiers, f)) for f in nominative):
            reasons.append(f"{COMPARISON}: «{phrase.text}» after «{word.text}» should be nominative, like what it is compared with")
    return reasons


def pronoun_antecedent_problems(words: Sequence[Word]) -> list[str]:
    """A personal pronoun (он, неё, ним ...) needs exactly one earlier object noun of its gender and
    number; with two («Посмотри на куб за цилиндром. Что слева от него?») it has two readings.
    Object nouns are the vocabulary's (куб, сфера, предмет ...); a noun counts only when every
    reading of it agrees, so an ambiguous form never raises a false alarm."""
    object_nouns = _object_nouns()
    reasons = []
    for position, word in enumerate(words):
        pronouns = [f for f in word.forms if f.pos == "NPRO" and f.lemma in _PERSONAL_PRONOUNS]
        if not pronouns or len(word.forms) != len(pronouns):
            continue
        earlier_nouns = [w for w in words[:position] if w.is_noun() and w.forms[0].lemma in object_nouns]
        # Under each reading of the pronoun (ним: him, or dative them) that some noun fits, the
        # nouns it could stand for; the pronoun is ambiguous when even the narrowest has two.
        readings = [[w.text for w in earlier_nouns if all(_refers(pronoun, noun) for noun in w.forms)] for pronoun in pronouns]
        agreeing = min((r for r in readings if r), key=len, default=[])
        if len(agreeing) > 1:
            reasons.append(f"{PRONOUN}: «{word.text}» could stand for {' or '.join(f'«{t}»' for t in agreeing)}")
    return reasons


@lru_cache(maxsize=1)
def _object_nouns() -> frozenset[str]:
    return frozenset(default_lexicon().nouns)


def _refers(pronoun: Form, noun: Form) -> bool:
    if pronoun.number == "plur" or noun.number == "plur":
        return pronoun.number == noun.number
    return pronoun.gender == noun.gender


def _is_personal_pronoun(word: Word) -> bool:
    return any(f.pos == "NPRO" and f.lemma in _PERSONAL_PRONOUNS for f in word.forms)


def _predicate_agrees(short: Form, subject: Form, coordinated: bool) -> bool:
    if short.number == "plur":
        return subject.number == "plur" or coordinated
    return subject.number == "sing" and (subject.gender in (None, "ms-f") or short.gender == subject.gender)


def relative_pronoun_problems(words: Sequence[Word]) -> list[str]:
    """``который`` agrees in number and gender with a noun before its comma (``сфера, которая``,
    ``кубов, которые``, ``шара, справа от которого``). Any noun of the clause before the comma
    may be the one meant, so only a form that fits none of them is reported."""
    reasons = []
    for position, word in enumerate(words):
        if not word.forms or not all(f.lemma == "который" for f in word.forms):
            continue
        comma = _opening_comma(words, position)
        if comma is None:
            continue
        start = comma
        while start > 0 and words[start - 1].text not in _SENTENCE_END:
            start -= 1
        nouns = [f for w in words[start:comma] for f in w.forms if f.pos == "NOUN" or _is_personal_pronoun(w)]
        if nouns and not any(_relative_agrees(r, n) for r in word.forms for n in nouns):
            reasons.append(f"{AGREEMENT}: «{word.text}» agrees with no noun before it")
    return reasons


def _opening_comma(words: Sequence[Word], position: int) -> int | None:
    """The comma opening the clause of ``который`` at ``position``: right before it, or before
    the preposition it follows («, слева от которого»)."""
    for before in range(position - 1, max(position - 4, -1), -1):
        if words[before].text == ",":
            return before
        if not words[before].pos & {"PREP", "ADVB", "COMP"}:
            return None
    return None


def _relative_agrees(relative: Form, noun: Form) -> bool:
    if relative.number != noun.number:
        return False
    return relative.number == "plur" or noun.gender in (None, "ms-f") or relative.gender == noun.gender


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

    The rules are the realiser's own (:func:`translate.morphology.numeral_government`), so the
    checker and the realiser cannot disagree about «2 куба» or «5 кубов». A word numeral is
    read as its class: 2 for два/три/четыре/оба/полтора, 5 for the rest; quantity words
    (сколько, несколько) take the genitive of either number.
    """
    if numeral.text.isdigit():
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
        if not any(f.pos in _MODIFIER_POS and (f.case, f.number) in government.adjectives for f in m.forms)
    ]
    if not wrong:
        return []
    return [f"{AGREEMENT}: «{' '.join(wrong)}» does not agree with «{phrase.head.text}» after a numeral"]


# --- prepositions ---------------------------------------------------------------------------


def preposition_problems(words: Sequence[Word], phrases: Sequence[NounPhrase]) -> list[str]:
    """The noun phrase (or word) right after a preposition has a reading in a case the preposition
    governs, and a third-person pronoun there has its н (от него, not от его)."""
    starts = {p.start: p for p in phrases}
    reasons = []
    for position, word in enumerate(words[:-1]):
        cases = PREPOSITION_CASES.get(word.lower)
        following = words[position + 1]
        if cases is None or "PREP" not in word.pos and word.lower not in _PLACE_COMPARATIVES or not following.known:
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
        elif phrase is None and not adverb and _lacks_n(words, position + 1):
            reasons.append(f"{PREPOSITION}: «{following.text}» after «{word.text}» should be «н{following.lower}»")
    return reasons


def _lacks_n(words: Sequence[Word], position: int) -> bool:
    """A third-person pronoun in an oblique case without its н (его, ей, им, их), unless it is
    the possessive before a noun phrase (от его куба)."""
    word = words[position]
    if word.lower.startswith("н") or not any(f.pos == "NPRO" and f.lemma in _PERSONAL_PRONOUNS and f.case != "nomn"
                                              for f in word.forms):
        return False
    after = words[position + 1] if position + 1 < len(words) else None
    return after is None or not (after.is_noun() or after.is_modifier())


# --- the backend ------------------------------------------------------------------------------


class MorphScorer:
    """The ``morph`` backend: score 1 / (1 + number of problems), with the problems as reasons."""

    name = "morph"
    # Any problem rejects by default; a lower threshold tolerates some.
    default_threshold = 1.0

    def __init__(self) -> None:
        import pymorphy3

        import translate.morphology

        self._checker = MorphChecker()
        # The scores depend on these rules, the realiser's grammar and the dictionary: a change to
        # any of them gives a new key, so saved scores are not reused across it.
        rules = hashlib.sha256()
        for module in (__file__, translate.morphology.__file__):
            rules.update(Path(module).read_bytes())
        self._settings = {
            "rules": rules.hexdigest()[:16],
            "pymorphy3": pymorphy3.__version__,
            "dictionary": self._checker.dictionary_revision,
        }
        self.key = "morph:" + ":".join(f"{k}={v}" for k, v in self._settings.items())

    def settings(self) -> dict[str, object]:
        return dict(self._settings)

    def score(self, texts: Sequence[str]) -> list[Verdict]:
        verdicts = []
        for text in texts:
            reasons = self._checker.problems(text)
            verdicts.append(Verdict(round(1.0 / (1 + len(reasons)), 6), tuple(reasons)))
        return verdicts
