"""What every acceptability backend returns and how the filter talks to it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Verdict:
    """A backend's judgement of one question: a score in [0, 1] (higher = more acceptable) and why."""

    score: float
    reasons: tuple[str, ...] = ()


class Scorer(Protocol):
    """An acceptability backend (``rucola``, ``morph``, ``none``).

    ``name`` is recorded in each item's ``acceptability.backend``. ``key`` names everything that
    decides the scores (model and revision, rule version...): saved scores are reused only under
    the same key, so a different model never inherits another's scores. ``settings`` is recorded
    in the output's ``info``. ``score`` returns one verdict per text, in order.
    """

    name: str
    default_threshold: float

    @property
    def key(self) -> str: ...

    def settings(self) -> dict[str, object]: ...

    def score(self, texts: Sequence[str]) -> list[Verdict]: ...


class AcceptAll:
    """The ``none`` backend: keeps everything, still recording a score so every item looks alike."""

    name = "none"
    default_threshold = 0.0
    key = "none"

    def settings(self) -> dict[str, object]:
        return {}

    def score(self, texts: Sequence[str]) -> list[Verdict]:
        return [Verdict(1.0) for _ in texts]
