"""English answers to Russian answers in MERA's convention, through the vocabulary.

Answers are never machine-translated: yes/no become да/нет, counts stay digits, colours
become masculine nominative singular adjectives, sizes the masculine adjective, materials and
shapes the one noun the vocabulary names as their answer.
"""

from __future__ import annotations

from functools import lru_cache

from assets.vocabulary import ATTRIBUTES, load_vocabulary
from questions.family import question_type_of
from translate.spelling import DEFAULT_YO_POLICY, apply_yo_policy


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


def russian_answer_words() -> dict[str, dict[str, frozenset[str]]]:
    """Per question type (colors, materials, shapes, size), each Russian answer word and the
    other Russian words the vocabulary has for the same value (synonyms, lemma, adjective):
    ``{"shapes": {"сфера": {"шар"}, ...}}``. The answer vocabulary of the card and the synonym
    analysis of ``dataset evaluate`` both come from here."""
    vocabulary = load_vocabulary()
    words: dict[str, dict[str, frozenset[str]]] = {}
    for attribute in ATTRIBUTES:
        entries: dict[str, frozenset[str]] = {}
        for name in vocabulary.names(attribute):
            value = vocabulary.value(attribute, name)
            answer = value.ru_answer
            others = {str(w) for w in value.ru.get("synonyms", [])} | {str(value.ru[k]) for k in ("lemma", "adjective") if k in value.ru}
            entries[answer] = frozenset(others - {answer})
        words[question_type_of(attribute)] = entries
    return words


def answer_vocabulary() -> dict[str, dict[str, list[str]]]:
    """Per MERA question type, its gold answer words and the other words for the same values."""
    vocabulary = load_vocabulary()
    table = {
        "binary": {"gold": [answer["ru"] for answer in vocabulary.answers.values()], "others": []},
        "count": {"gold": ["0", "1", "2", "…"], "others": []},
    }
    for question_type, entries in sorted(russian_answer_words().items()):
        table[question_type] = {
            "gold": sorted(entries),
            "others": sorted({f"{word} ({answer})" for answer, words in entries.items() for word in words}),
        }
    return table
