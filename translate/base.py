"""The one interface every Russian backend implements (native realiser, Google, MarianMT)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol


class Backend(Protocol):
    """Turns question records (as in questions.json) into Russian question texts.

    ``name`` is recorded in each output item as ``translator`` (for example ``native`` or
    ``marian:Helsinki-NLP/opus-mt-en-ru``). ``realise`` returns one entry per input, in order;
    ``None`` marks a question the backend could not produce (reported, never silently dropped).

    A backend may also keep ``last_failures``: position in the last ``realise`` call -> reason,
    which the CLI reports; without it a ``None`` is reported as "the backend produced no text".
    """

    name: str

    def realise(self, questions: Sequence[Mapping[str, object]]) -> list[str | None]: ...


def is_echo(text: str, translation: str | None) -> bool:
    """True when a translator gave nothing back or handed back its input unchanged.

    Both happen when a machine translator cannot translate a text, and neither is Russian.
    """
    if translation is None or not translation.strip():
        return True
    return translation.strip().casefold() == text.strip().casefold()
