"""The one interface every Russian backend implements (native realiser, Google, MarianMT)."""

from __future__ import annotations

from typing import Mapping, Protocol, Sequence


class Backend(Protocol):
    """Turns question records (as in questions.json) into Russian question texts.

    ``name`` is recorded in each output item as ``translator`` (for example ``native`` or
    ``marian:Helsinki-NLP/opus-mt-en-ru``). ``realise`` returns one entry per input, in order;
    ``None`` marks a question the backend could not produce (reported, never silently dropped).
    """

    name: str

    def realise(self, questions: Sequence[Mapping[str, object]]) -> list[str | None]: ...
