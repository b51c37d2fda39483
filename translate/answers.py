"""English answers to Russian answers in MERA's convention, through the vocabulary.

Answers are never machine-translated: yes/no become да/нет, counts stay digits, colours
become masculine nominative singular adjectives, sizes the masculine adjective, materials and
shapes the one noun the vocabulary names as their answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from assets.vocabulary import ATTRIBUTES, load_vocabulary
from questions import question_type_of
from translate.spelling import DEFAULT_YO_POLICY, YO_POLICIES, apply_yo_policy


@lru_cache(maxsize=1024)
def answer_to_russian(answer: str, yo_policy: str = DEFAULT_YO_POLICY) -> str:
    """Map one English answer (``yes``, ``3``, ``red``, ``metal`` ...) to MERA's Russian answer
    (remembered: a run asks the same few answers again and again)."""
    vocabulary = load_vocabulary()
    if answer in vocabulary.answers:
        return apply_yo_policy(vocabulary.answers[answer]["ru"], yo_policy)
    if answer.isascii() and answer.isdigit():
        return answer
    for attribute in ATTRIBUTES:
        if answer in vocabulary.names(attribute):
            return apply_yo_policy(vocabulary.value(attribute, answer).ru_answer, yo_policy)
    raise ValueError(f"answer {answer!r} is not yes/no, a count or a vocabulary value")


def russian_answer_words(yo_policy: str = DEFAULT_YO_POLICY) -> dict[str, dict[str, frozenset[str]]]:
    """Per question type (colors, materials, shapes, size), each Russian answer word and the
    other Russian words the vocabulary has for the same value (synonyms, lemma, adjective):
    ``{"shapes": {"сфера": {"шар"}, ...}}``, spelt by ``yo_policy`` as the gold is. Each answer word is
    :func:`answer_to_russian`'s, the function the gold of every item comes from. The answer vocabulary
    of the card and the synonym analysis of ``dataset evaluate`` both come from here."""
    vocabulary = load_vocabulary()
    words: dict[str, dict[str, frozenset[str]]] = {}
    for attribute in ATTRIBUTES:
        entries: dict[str, frozenset[str]] = {}
        for name in vocabulary.names(attribute):
            value = vocabulary.value(attribute, name)
            answer = answer_to_russian(name, yo_policy)
            others = {str(w) for w in value.ru.get("synonyms", [])} | {str(value.ru[k]) for k in ("lemma", "adjective") if k in value.ru}
            entries[answer] = frozenset({apply_yo_policy(word, yo_policy) for word in others} - {answer})
        words[question_type_of(attribute)] = entries
    return words


def answer_vocabulary(yo_policy: str = DEFAULT_YO_POLICY) -> dict[str, dict[str, list[str]]]:
    """Per MERA question type, its gold answer words (:func:`answer_to_russian`'s, spelt by ``yo_policy``)
    and the other words for the same values."""
    vocabulary = load_vocabulary()
    table = {
        "binary": {"gold": [answer_to_russian(answer, yo_policy) for answer in vocabulary.answers], "others": []},
        "count": {"gold": ["0", "1", "2", "…"], "others": []},
    }
    for question_type, entries in sorted(russian_answer_words(yo_policy).items()):
        table[question_type] = {
            "gold": sorted(entries),
            "others": sorted({f"{word} ({answer})" for answer, words in entries.items() for word in words}),
        }
    return table


def recorded_yo_policy(sources: Mapping[str, Any] | None) -> str:
    """The ё policy a build's stage records name (the translate stage records it as ``yo``), else the default."""
    for source in (sources or {}).values():
        policy = (source.get("info") or {}).get("yo") if isinstance(source, Mapping) else None
        if policy in YO_POLICIES:
            return str(policy)
    return DEFAULT_YO_POLICY
