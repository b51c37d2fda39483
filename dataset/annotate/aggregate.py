"""Aggregating several people's answers into one per item: majority vote, Dawid–Skene, GLAD.

MERA's guide for human baselines names these three for overlap-5 answers. All take
``{item id: {annotator: normalised answer}}`` and give ``{item id: answer or None}``; the classes
are every answer anybody gave. ``crowd-kit`` 1.4.2 installs beside NumPy 1.x (with scikit-learn,
SciPy and NLTK), but it does not use the honeypots well: on the planted crowds of
tests/test_dataset_annotate_aggregate.py (300 items, one annotator always right, four random, 15
honeypots) its ``DawidSkene.fit(true_labels=...)`` recovered 143, 198 and 150 items against its
majority vote's 157, 167 and 160 (this module: 232, 254, 272), and its ``GLAD`` takes no known
answers. So both models are written here from the papers, in NumPy (crowd-kit's, when installed, run as
``--aggregate crowd-kit-ds|crowd-kit-glad``: :mod:`dataset.annotate.crowd_kit`):

- **Dawid–Skene** (Dawid & Skene 1979, "Maximum likelihood estimation of observer error-rates
  using the EM algorithm"): each annotator has a confusion matrix ``π[w, true, given]``; EM from
  the majority's vote shares, or, with honeypots, from each annotator's accuracy on them (on the
  diagonal, the rest even): the M-step sets the class prior and ``π`` from the current item
  posteriors (plus :data:`SMOOTHING` pseudo-counts), the E-step sets
  ``log T[i, k] = log p_k + Σ_(w answered l on i) log π[w, k, l]`` (normalised).
- **GLAD** (Whitehill et al. 2009, "Whose vote should count more"), in its multi-class form: the
  annotator's ability ``α_w`` and the item's inverse difficulty ``β_i = exp(b_i)`` make an answer
  right with probability ``σ(α_w β_i)``, and a wrong answer is any other class alike; EM, with the
  M-step a few gradient-ascent steps on ``α`` and ``b`` under normal priors (mean 1 and 0).

Honeypots: MERA puts about 5 % control items with known answers among the tasks. Both models take
them as items whose true class is known (their posterior is held at the known answer, as in the
semi-supervised form of Dawid and Skene's EM). They are what lets a model tell a reliable annotator
from a random one: with one always-right annotator and four answering uniformly at random, the five
answer columns are independent and uniform alike, so without any known answer no method can tell
which one is right (Dawid–Skene then trusts an arbitrary annotator and scores below the majority).

Ties: an item whose best classes are equal (within 1e-9) has no answer, as the majority's tie
rule; so a method never guesses by the gold answer. Every step is deterministic (no random start).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from dataset.annotate.answer_classes import RARE_ANSWERS, Table, answer_classes

METHODS = ("majority", "dawid-skene", "glad")
SMOOTHING = 0.01  # Dawid–Skene pseudo-counts per confusion cell
MAX_ITERATIONS = 100
TOLERANCE = 1e-7
TIE = 1e-9
RATE = 1.0  # GLAD's gradient step, per answer a parameter explains



@dataclass(frozen=True)
class Observations:
    """The answers as parallel arrays of item, annotator and class numbers."""

    items: list[int]
    classes: list[str]
    item: np.ndarray
    annotator: np.ndarray
    label: np.ndarray
    annotators: int
    known_rows: np.ndarray  # rows of the items whose true class is known (honeypots)
    known_labels: np.ndarray

    @classmethod
    def of(cls, table: Table, known: Mapping[int, str] | None = None) -> Observations:
        known = {item: answer for item, answer in (known or {}).items() if item in table}
        items = sorted(table)
        classes = answer_classes(table, set(known.values()))
        names = {name: n for n, name in enumerate(sorted({a for answers in table.values() for a in answers}))}
        class_of = {name: n for n, name in enumerate(classes)}
        rare = class_of.get(RARE_ANSWERS)
        rows = [(row, names[a], class_of.get(answer, rare)) for row, item in enumerate(items)
                for a, answer in sorted(table[item].items())]
        item, annotator, label = (np.array(column, dtype=np.intp) for column in zip(*rows, strict=True)) if rows else (
            np.zeros(0, dtype=np.intp),) * 3
        row_of = {item: row for row, item in enumerate(items)}
        known_rows = np.array([row_of[item] for item in sorted(known)], dtype=np.intp)
        known_labels = np.array([class_of[known[item]] for item in sorted(known)], dtype=np.intp)
        return cls(items, classes, item, annotator, label, len(names), known_rows, known_labels)

    def vote_shares(self) -> np.ndarray:
        shares = np.zeros((len(self.items), len(self.classes)))
        np.add.at(shares, (self.item, self.label), 1.0)
        return self.clamped(shares / np.maximum(shares.sum(axis=1, keepdims=True), 1.0))

    def honeypot_confusion(self) -> np.ndarray:
        """Confusion matrices to start from: each annotator's accuracy on the honeypots (Laplace-smoothed)
        on the diagonal, the rest spread evenly (a full matrix cannot be learnt from a few honeypots)."""
        on_honeypot = np.isin(self.item, self.known_rows)
        truth = np.full(len(self.items), -1, dtype=np.intp)
        truth[self.known_rows] = self.known_labels
        right = np.bincount(self.annotator[on_honeypot], (self.label == truth[self.item])[on_honeypot], self.annotators)
        seen = np.bincount(self.annotator[on_honeypot], minlength=self.annotators)
        accuracy = (right + 1.0) / (seen + 2.0)
        classes = max(len(self.classes), 2)
        confusion = np.repeat(((1 - accuracy) / (classes - 1))[:, None, None], len(self.classes), axis=1)
        confusion = np.repeat(confusion, len(self.classes), axis=2)
        confusion[:, np.arange(len(self.classes)), np.arange(len(self.classes))] = accuracy[:, None]
        return confusion

    def first_weights(self) -> np.ndarray:
        """Weights of the answers in the first M-step: only the honeypots' answers when there are any."""
        if not self.known_rows.size:
            return np.ones(self.item.size)
        return np.isin(self.item, self.known_rows).astype(float)

    def clamped(self, posteriors: np.ndarray) -> np.ndarray:
        """``posteriors`` with every honeypot's row set to its known class."""
        posteriors[self.known_rows] = 0.0
        posteriors[self.known_rows, self.known_labels] = 1.0
        return posteriors

    def answers(self, posteriors: np.ndarray) -> dict[int, str | None]:
        """Each item's most probable class, or None on a tie."""
        result: dict[int, str | None] = {}
        for row, item in enumerate(self.items):
            best = posteriors[row].max()
            leaders = np.flatnonzero(posteriors[row] >= best - TIE)
            winner = self.classes[int(leaders[0])] if leaders.size == 1 else None
            result[item] = winner if winner != RARE_ANSWERS else None
        return result


def majority_answers(table: Table, known: Mapping[int, str] | None = None) -> dict[int, str | None]:
    """The most frequent answer of each item; a tie has none (``known`` answers do not change a vote)."""
    result: dict[int, str | None] = {}
    for item, answers in table.items():
        counts = Counter(answers.values()).most_common()
        result[item] = counts[0][0] if len(counts) == 1 or counts[0][1] > counts[1][1] else None
    return result


def _normalised(log_scores: np.ndarray) -> np.ndarray:
    scores = np.exp(log_scores - log_scores.max(axis=1, keepdims=True))
    return scores / scores.sum(axis=1, keepdims=True)


def dawid_skene_posteriors(obs: Observations, iterations: int = MAX_ITERATIONS) -> np.ndarray:
    """Item × class posteriors of Dawid–Skene's EM, started from the honeypots (else the vote shares)."""
    posteriors = obs.vote_shares()
    for iteration in range(iterations):
        prior = posteriors.mean(axis=0)
        if iteration == 0 and obs.known_rows.size:
            confusion = obs.honeypot_confusion()
        else:
            confusion = np.full((obs.annotators, len(obs.classes), len(obs.classes)), SMOOTHING)
            cells = (obs.annotator, slice(None), obs.label)
            np.add.at(confusion, cells, posteriors[obs.item])  # type: ignore[arg-type]  # a slice is a valid index
            confusion /= confusion.sum(axis=2, keepdims=True)
        log_scores = np.tile(np.log(np.maximum(prior, 1e-300)), (len(obs.items), 1))
        np.add.at(log_scores, obs.item, np.log(confusion[obs.annotator, :, obs.label]))
        updated = obs.clamped(_normalised(log_scores))
        change = float(np.abs(updated - posteriors).max()) if updated.size else 0.0
        posteriors = updated
        if change < TOLERANCE:
            break
    return posteriors


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def glad_posteriors(obs: Observations, iterations: int = MAX_ITERATIONS, steps: int = 10,
                    rate: float = RATE) -> np.ndarray:
    """Item × class posteriors of GLAD's EM (abilities α, log inverse difficulties b), from the vote shares."""
    classes = max(len(obs.classes), 2)
    alpha = np.ones(obs.annotators)
    b = np.zeros(len(obs.items))
    posteriors = obs.vote_shares()
    weights = obs.first_weights()
    for iteration in range(iterations):
        prior = posteriors.mean(axis=0)
        right = posteriors[obs.item, obs.label]  # the chance that each answer is the true class
        weight = weights if iteration == 0 else np.ones(obs.item.size)
        # each parameter's step is scaled by how many answers it explains (and its prior), so the step
        # size does not grow with the crowd
        per_annotator = np.bincount(obs.annotator, weight, obs.annotators) + 1.0
        per_item = np.bincount(obs.item, weight, len(obs.items)) + 1.0
        for _ in range(steps if iteration else steps * 5):
            beta = np.exp(b)
            p = np.clip(_sigmoid(alpha[obs.annotator] * beta[obs.item]), 1e-12, 1 - 1e-12)
            residual = (right - p) * weight
            grad_alpha = np.bincount(obs.annotator, residual * beta[obs.item], obs.annotators) - (alpha - 1.0)
            grad_b = np.bincount(obs.item, residual * alpha[obs.annotator] * beta[obs.item], len(obs.items)) - b
            alpha += rate * grad_alpha / per_annotator
            b += rate * grad_b / per_item
        p = np.clip(_sigmoid(alpha[obs.annotator] * np.exp(b)[obs.item]), 1e-12, 1 - 1e-12)
        log_scores = np.tile(np.log(np.maximum(prior, 1e-300)), (len(obs.items), 1))
        wrong = np.log((1 - p) / (classes - 1))
        np.add.at(log_scores, obs.item, np.repeat(wrong[:, None], len(obs.classes), axis=1))
        np.add.at(log_scores, (obs.item, obs.label), np.log(p) - wrong)
        updated = obs.clamped(_normalised(log_scores))
        change = float(np.abs(updated - posteriors).max()) if updated.size else 0.0
        posteriors = updated
        if change < TOLERANCE:
            break
    return posteriors


def dawid_skene_answers(table: Table, known: Mapping[int, str] | None = None) -> dict[int, str | None]:
    obs = Observations.of(table, known)
    return obs.answers(dawid_skene_posteriors(obs))


def glad_answers(table: Table, known: Mapping[int, str] | None = None) -> dict[int, str | None]:
    obs = Observations.of(table, known)
    return obs.answers(glad_posteriors(obs))


AGGREGATORS: dict[str, Callable[[Table, Mapping[int, str] | None], dict[int, str | None]]] = {
    "majority": majority_answers, "dawid-skene": dawid_skene_answers, "glad": glad_answers}


def aggregate(table: Table, method: str, known: Mapping[int, str] | None = None) -> dict[int, str | None]:
    """Each item's aggregated answer by ``method`` (one of :data:`METHODS`, or crowd-kit's
    ``crowd-kit-ds`` / ``crowd-kit-glad``), None on a tie.

    ``known`` maps honeypot items (in ``table`` too) to their known answers; the models learn the
    annotators from them. The result has every item of ``table``, honeypots included.
    """
    if not table:  # no answers at all (a header-only file): nothing to learn from
        return {}
    if method.startswith("crowd-kit-"):  # the optional extra [crowd], imported only when chosen
        from dataset.annotate.crowd_kit import crowd_kit_answers

        return crowd_kit_answers(table, method, known)
    return AGGREGATORS[method](table, known)
