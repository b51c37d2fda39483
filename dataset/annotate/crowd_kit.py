"""``--aggregate crowd-kit-ds|crowd-kit-glad``: crowd-kit's Dawid–Skene and GLAD on the same answers.

crowd-kit (Toloka's aggregation library, the optional extra ``pip install -e '.[crowd]'``) reads
crowd labels in the long form that ``annotate import`` writes to ``answers_crowd_kit.csv``: one
row per answer, ``task`` (the item's meta.id), ``worker``, ``label`` (the normalised answer).
Its per-task labels become the aggregated answers, reported as the project's own methods are
(:mod:`dataset.annotate.aggregate`). Dawid–Skene gets the honeypots' known answers
(``true_labels``); crowd-kit's GLAD takes none. Neither has a tie rule: crowd-kit picks one of
equal classes, so a crowd-kit answer is None only when the pooled rare answers win (past
``MAX_CLASSES`` answer classes the rare ones are pooled, as for the own models: each worker's
confusion matrix is classes squared).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dataset.annotate.answer_classes import RARE_ANSWERS, answer_classes
from ruclevr.cli import UsageError

CROWD_KIT_METHODS = ("crowd-kit-ds", "crowd-kit-glad")
MAX_ITERATIONS = 100  # as the project's own models (crowd-kit's default for both)


def crowd_kit_modules() -> tuple[Any, Any]:
    """pandas and crowd-kit's aggregation module, or a UsageError naming the extra to install."""
    try:
        import pandas
        from crowdkit import aggregation
    except ImportError as error:
        missing = (error.name or "crowdkit").split(".")[0]
        raise UsageError(f"--aggregate {'|'.join(CROWD_KIT_METHODS)} needs the optional package crowd-kit "
                         f"({missing} is missing): pip install -e '.[crowd]'") from None
    return pandas, aggregation


def crowd_kit_available() -> bool:
    try:
        crowd_kit_modules()
    except UsageError:
        return False
    return True


def crowd_kit_answers(table: Mapping[int, Mapping[str, str]], method: str,
                      known: Mapping[int, str] | None = None) -> dict[int, str | None]:
    """Each item's label from crowd-kit's ``method`` (one of :data:`CROWD_KIT_METHODS`) on ``table``'s answers."""
    pandas, aggregation = crowd_kit_modules()
    known = {item: answer for item, answer in (known or {}).items() if item in table}
    kept = set(answer_classes(table, set(known.values())))  # past MAX_CLASSES the rare answers are pooled

    def label_of(answer: str) -> str:
        return answer if answer in kept else RARE_ANSWERS

    rows = [(item, worker, label_of(answer)) for item in sorted(table) for worker, answer in sorted(table[item].items())]
    data = pandas.DataFrame(rows, columns=["task", "worker", "label"])
    if method == "crowd-kit-ds":
        true_labels = pandas.Series(known, dtype=object)
        labels = aggregation.DawidSkene(n_iter=MAX_ITERATIONS).fit_predict(
            data, true_labels=true_labels if len(true_labels) else None)
    elif method == "crowd-kit-glad":
        labels = aggregation.GLAD(n_iter=MAX_ITERATIONS).fit_predict(data)
    else:
        raise ValueError(f"unknown crowd-kit method {method!r}")
    return {int(item): None if labels[item] == RARE_ANSWERS else str(labels[item]) for item in table}
