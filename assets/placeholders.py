"""The one home of template placeholder syntax, shared by the family validator, the English
realiser, the Russian templates and the filter; and the "did you mean" of misspelt names.

A placeholder names a family parameter: ``<`` + a capital letter + capitals or digits + ``>``
(``<Z>``, ``<S2>``), the same in every language. A *leftover slot* is what a finished text must
never hold: a placeholder in any syntax the pipeline meets (CLEVR ``<Z>``, Python/Jinja ``{x}``,
bracketed ``[x]``) or a lone bracket that a half-substituted slot leaves behind.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

#: A placeholder; its group is the bare name (``Z`` of ``<Z>``).
PLACEHOLDER = re.compile(r"<([A-Z][A-Z0-9]*)>")
#: Anything between angle brackets (a placeholder or a malformed one), for template checks.
ANGLE_TOKEN = re.compile(r"<[^<>]*>?")
#: A leftover template slot of any syntax in finished text, or a lone bracket.
LEFTOVER_SLOT = re.compile(r"<[^<>]*>|\{[^{}]*\}|\[[^\[\]]*\]|[<>{}\[\]]")


def is_placeholder(text: str) -> bool:
    """Whether ``text`` is exactly one placeholder (``<Z>``)."""
    return PLACEHOLDER.fullmatch(text) is not None


def placeholders(text: str) -> list[str]:
    """The placeholders (``<Z>`` ...) a text mentions, in order, in any language."""
    return [f"<{name}>" for name in PLACEHOLDER.findall(text)]


def did_you_mean(name: object, known: Iterable[str]) -> str:
    """`` (did you mean 'intersect'?)`` for the known name closest to a misspelt one; "" when none is
    close. A placeholder is matched only with those of its letter (``<S3>``: ``<S2>`` before ``<S>``)."""
    if not isinstance(name, str):
        return ""
    text = name
    candidates = list(known)
    if is_placeholder(text):
        candidates = [c for c in candidates if is_placeholder(c) and c[1] == text[1]]
        candidates.sort(key=lambda c: abs(len(c) - len(text)))
        return f" (did you mean {candidates[0]!r}?)" if candidates else ""
    close = difflib.get_close_matches(text, candidates, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""
