"""Agreement rules of the acceptability checker (:mod:`filter.morph`): modifiers with their
noun, short-form and verb predicates with their subject, compared phrases, pronouns and
``который`` with the noun they stand for."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache

from filter.morph_words import (
    AGREEMENT,
    COMPARISON,
    PERSONAL_PRONOUNS,
    PREPOSITION_CASES,
    PRONOUN,
    Form,
    NounPhrase,
    Word,
    modifiers_agreeing,
)
from russian.morphology import default_lexicon

# Short adjectives and participles: the predicate of a noun (сделан куб, какова форма).
_SHORT_POS = frozenset({"ADJS", "PRTS"})
# Words after which a plural predicate may stand before a singular first subject
# («Сделаны ли куб и шар...»).
_COORDINATORS = frozenset({"и", "или", "либо"})
# Where a sentence or clause ends for the look-back of «который».
_SENTENCE_END = frozenset({".", "?", "!", ";"})


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
    The noun right before the pronoun's relation phrase is the one it describes, not a reading.
    Object nouns are the vocabulary's (куб, сфера, предмет ...); a noun counts only when every
    reading of it agrees, so an ambiguous form never raises a false alarm."""
    object_nouns = _object_nouns()
    reasons = []
    for position, word in enumerate(words):
        pronouns = [f for f in word.forms if f.pos == "NPRO" and f.lemma in PERSONAL_PRONOUNS]
        if not pronouns or len(word.forms) != len(pronouns):
            continue
        # After a preposition only the forms in a case it governs are readings (за ним: him, not
        # dative them).
        governed = PREPOSITION_CASES.get(words[position - 1].lower) if position else None
        if governed is not None:
            pronouns = [f for f in pronouns if f.case in governed] or pronouns
        earlier = words[:position]
        # «другой объект слева от него»: the noun the pronoun's relation phrase follows is what it
        # describes, not what it may stand for.
        start = position - 1 - (position >= 3 and words[position - 1].lower == "от" and words[position - 2].lower in ("слева", "справа"))
        if governed is not None and start > 0 and words[start - 1].is_noun():
            earlier = [*words[:start - 1], *words[start:position]]
        earlier_nouns = [w for w in earlier if w.is_noun() and w.forms[0].lemma in object_nouns]
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
    return any(f.pos == "NPRO" and f.lemma in PERSONAL_PRONOUNS for f in word.forms)


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
