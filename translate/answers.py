"""English answers to Russian answers in MERA's convention, through the vocabulary.

Answers are never machine-translated: yes/no become да/нет, counts stay digits, colours
become masculine nominative singular adjectives, sizes the masculine adjective, materials and
shapes the one noun the vocabulary names as their answer.
"""

from __future__ import annotations

from assets.vocabulary import ATTRIBUTES, load_vocabulary
from translate.spelling import DEFAULT_YO_POLICY, apply_yo_policy


def answer_to_russian(answer: str, yo_policy: str = DEFAULT_YO_POLICY) -> str:
    """Map one English answer (``yes``, ``3``, ``red``, ``metal`` ...) to MERA's Russian answer."""
    vocabulary = load_vocabulary()
    if answer in vocabulary.answers:
        return apply_yo_policy(vocabulary.answers[answer]["ru"], yo_policy)
    if answer.isdigit():
        return answer
    for attribute in ATTRIBUTES:
        if answer in vocabulary.names(attribute):
            return apply_yo_policy(vocabulary.value(attribute, answer).ru_answer, yo_policy)
    raise ValueError(f"answer {answer!r} is not yes/no, a count or a vocabulary value")
