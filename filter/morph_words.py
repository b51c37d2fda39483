"""The words and noun phrases the acceptability checker (:mod:`filter.morph`) reasons about:
a token's morphological readings, runs of modifiers before a noun, and agreement between them.
Also the reason categories every rule reports under."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

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
WORD_ORDER = "word_order"

MODIFIER_POS = frozenset({"ADJF", "PRTF"})
# Verbs whose instrumental complement is a predicate (является металлическим).
_COPULAS = frozenset({"являться", "быть", "стать", "становиться", "оказаться", "оказываться", "казаться", "считаться"})
# Particles that may stand inside a noun phrase: «такой же формы», «одинакового ли размера».
_INSIDE_PHRASE = frozenset({"же", "ли"})
# Third-person pronouns take an н after a preposition: от него, за ней, у них.
PERSONAL_PRONOUNS = frozenset({"он", "она", "оно", "они"})


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
        if not self.known or "ADJF" not in self.pos or not self.pos <= MODIFIER_POS | {"NOUN", "COMP"}:
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
    if modifier.pos not in MODIFIER_POS or noun.pos != "NOUN":
        return False
    if modifier.number != noun.number or modifier.case != noun.case:
        return False
    if noun.number == "sing" and noun.gender not in (None, "ms-f") and modifier.gender != noun.gender:
        return False
    # Accusative adjectives mark animacy (большой куб / большого кота); other forms do not.
    return modifier.animacy is None or noun.animacy is None or modifier.animacy == noun.animacy


def modifiers_agreeing(modifiers: Iterable[Word], noun: Form) -> list[bool]:
    return [any(agrees(f, noun) for f in m.forms) for m in modifiers]


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
