"""The one home of template placeholder syntax, shared by the family validator, the English
realiser, the Russian templates and the filter.

A placeholder names a family parameter: ``<`` + a capital letter + capitals or digits + ``>``
(``<Z>``, ``<S2>``), the same in every language. A *leftover slot* is what a finished text must
never hold: a placeholder in any syntax the pipeline meets (CLEVR ``<Z>``, Python/Jinja ``{x}``,
bracketed ``[x]``) or a lone bracket that a half-substituted slot leaves behind.
"""

from __future__ import annotations

import re

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
