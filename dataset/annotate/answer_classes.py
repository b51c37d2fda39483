"""The answer classes the crowd models learn, shared by the own models (:mod:`dataset.annotate.aggregate`)
and crowd-kit's (:mod:`dataset.annotate.crowd_kit`): every answer given, or, past a limit, the frequent
ones with the rare ones pooled, so that memory stays bounded whatever the answers."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

#: At most this many answer classes (ruCLEVR's answers are about 30 words); past it, rare answers are pooled.
MAX_CLASSES = 48
#: The pooled class of rare answers: an item it wins gets no aggregated answer (as a tie).
RARE_ANSWERS = "\0rare answers"

Table = Mapping[int, Mapping[str, str]]


def answer_classes(table: Table, known: set[str]) -> list[str]:
    """The classes the models learn: every answer given, or, past :data:`MAX_CLASSES`, the known (honeypot)
    answers and the most frequent others, the rest pooled as :data:`RARE_ANSWERS` (each annotator's confusion
    matrix is classes squared: a thousand free-text answers would make it gigabytes)."""
    counts = Counter(answer for answers in table.values() for answer in answers.values())
    if len(counts.keys() | known) <= MAX_CLASSES:
        return sorted(counts.keys() | known)
    frequent = [answer for answer, _ in sorted(counts.items(), key=lambda pair: (-pair[1], pair[0])) if answer not in known]
    kept = set(known) | set(frequent[:max(0, MAX_CLASSES - 1 - len(known))])
    return sorted(kept) + [RARE_ANSWERS]
