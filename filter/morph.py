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
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import filter.morph_agreement as morph_agreement
import filter.morph_government as morph_government
import filter.morph_words as morph_words
from assets.placeholders import LEFTOVER_SLOT
from filter.base import Verdict
from filter.morph_agreement import (
    agreement_problems,
    comparison_problems,
    predicate_problems,
    pronoun_antecedent_problems,
    relative_pronoun_problems,
    verb_problems,
)
from filter.morph_government import governed_phrases, numeral_problems, preposition_problems
from filter.morph_words import FORM, LATIN, PLACEHOLDER, UNKNOWN_WORD, WORD_ORDER, Form, Word, noun_phrases
from russian.morphology import analyzer

_TOKEN = re.compile(r"\d+|[^\W\d_]+(?:-[^\W\d_]+)*|\S")
_LATIN = re.compile(r"[A-Za-z]")
_CYRILLIC_WORD = re.compile(r"[а-яё]+(?:-[а-яё]+)*")

# Analyses that are technically possible but never meant in a generated question (``куба`` as
# the country Cuba, ``куб`` as the abbreviation of "cubic", ``ли`` as a name). Dropping them
# keeps them from excusing a real error; they are kept when nothing else is left.
_IMPROBABLE = frozenset({"Name", "Surn", "Patr", "Geox", "Orgn", "Trad", "Abbr", "Arch", "Erro", "Dist"})
# Second genitive/locative/accusative (``чаю``, ``в углу``) agree as the main case does.
_CASE_ALIASES = {"gen1": "gent", "gen2": "gent", "acc2": "accs", "loc1": "loct", "loc2": "loct"}
# Hyphenated particles (``какой-то``, ``куда-нибудь``) that the dictionary does not list alone.
_HYPHEN_PARTICLES = frozenset({"то", "либо", "нибудь", "ка", "таки", "де"})
_DOUBLE_SPACE = re.compile(r"\s{2,}")
_SPACE_BEFORE_PUNCTUATION = re.compile(r"\s[,.?!:;]")
_DOUBLED_PUNCTUATION = re.compile(r"[,.?!:;]{2,}")  # «того же цвета.?» (an ellipsis «...» is allowed)
_DOUBLED_WORD = re.compile(r"(?<![\w-])([^\W\d_]+)\s+\1(?![\w-])", re.IGNORECASE)  # «этот этот»
# Words Russian may say twice in a row: «Верно ли, что что бы ни стояло за кубом, …» (a conjunction, then a pronoun).
_MAY_BE_SAID_TWICE = frozenset({"что"})
# «Какой он величины?» is natural, «Какой этот предмет величины?» is not: «какой … <attribute noun>»
# split by a noun phrase (a pronoun of the template said as its phrase) reads as a calque.
_SPLIT_WHICH = re.compile(r"\b(какой|какого)\s+(эт[а-яё]+\s+(?:[а-яё]+\s+){0,4}?)(величины|формы|цвета|размера|материала)\b",
                          re.IGNORECASE)


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
        reasons = [f"{PLACEHOLDER}: «{m.group()}» left in the text" for m in LEFTOVER_SLOT.finditer(text)]
        # A placeholder splits the sentence so that no phrase is read across it.
        words = [self._word(t) for t in _TOKEN.findall(LEFTOVER_SLOT.sub(" | ", text))]
        reasons += [f"{LATIN}: «{w.text}» has Latin letters" for w in words if _LATIN.search(w.text)]
        reasons += [f"{UNKNOWN_WORD}: «{w.text}» is not a Russian word" for w in words if not w.known]
        reasons += form_problems(text)
        reasons += [f"{WORD_ORDER}: «{m.group()}» splits «{m.group(1)} {m.group(3)}» around a noun phrase: "
                    f"«{m.group(1)} {m.group(3)} {m.group(2).strip()}»" for m in _SPLIT_WHICH.finditer(text)
                    if (m.group(1).lower() == "какой") == (m.group(3).lower() in ("величины", "формы"))]
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
    """Spacing, the capital letter, the question mark, doubled punctuation and a word said twice
    in a row (placeholders and Latin letters have categories of their own)."""
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
    problems += [f"doubled punctuation «{m.group()}»" for m in _DOUBLED_PUNCTUATION.finditer(text) if m.group() != "..."]
    problems += [f"a word said twice in a row «{m.group()}»" for m in _DOUBLED_WORD.finditer(text)
                 if m.group(1).lower() not in _MAY_BE_SAID_TWICE]
    return [f"{FORM}: {problem}" for problem in problems]


# --- the backend ------------------------------------------------------------------------------


class MorphScorer:
    """The ``morph`` backend: score 1 / (1 + number of problems), with the problems as reasons."""

    name = "morph"
    # Any problem rejects by default; a lower threshold tolerates some.
    default_threshold = 1.0

    def __init__(self) -> None:
        import pymorphy3

        import russian.morphology

        self._checker = MorphChecker()
        # The scores depend on these rules, the realiser's grammar and the dictionary: a change to
        # any of them gives a new key, so saved scores are not reused across it.
        rules = hashlib.sha256()
        for module in (__file__, morph_words.__file__, morph_agreement.__file__, morph_government.__file__,
                       russian.morphology.__file__):
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
