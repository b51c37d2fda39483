"""The acceptability backends by name, built only when chosen (``rucola`` imports torch)."""

from __future__ import annotations

from collections.abc import Callable

from filter.base import AcceptAll, Scorer
from filter.rucola import RucolaOptions

BACKENDS = ("rucola", "morph", "none")


def make_scorer(name: str, rucola: RucolaOptions | None = None) -> Scorer:
    """Build the backend ``name``; ``rucola`` options are only read by the rucola backend."""
    builders: dict[str, Callable[[], Scorer]] = {
        "rucola": lambda: _rucola(rucola or RucolaOptions()),
        "morph": _morph,
        "none": AcceptAll,
    }
    if name not in builders:
        raise KeyError(f"unknown backend {name!r}; allowed: {', '.join(BACKENDS)}")
    return builders[name]()


def _rucola(options: RucolaOptions) -> Scorer:
    from filter.rucola import RucolaScorer

    return RucolaScorer(options)


def _morph() -> Scorer:
    from filter.morph import MorphScorer

    return MorphScorer()
