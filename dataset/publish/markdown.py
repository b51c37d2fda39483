"""Text from data (annotator names, answers, question types) shown as text in published Markdown.

A card is read on the Hugging Face hub, which renders Markdown and some HTML: a name such as
``<script>…</script>``, ``\\n## Injected heading`` or ``[click](javascript:alert(1))`` must show as
those characters, never become markup. :func:`markdown_text` is the ``finalize`` of every Markdown
template that shows such values, so each ``{{ value }}`` is escaped, as HTML templates autoescape.
"""

from __future__ import annotations

import re
from typing import Any

#: Characters with a meaning in Markdown (CommonMark's escapable punctuation that can open markup).
_MARKUP = re.compile(r"([\\`*_{}\[\]()#+\-!|~>])")
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}


def markdown_text(value: Any) -> str:
    """``value`` as literal text inside a Markdown line: HTML's special characters as entities,
    Markdown's punctuation backslash-escaped, line breaks as spaces (no new block can start)."""
    text = "" if value is None else str(value)
    text = " ".join(text.splitlines())
    text = "".join(_HTML.get(character, character) for character in text)
    return _MARKUP.sub(r"\\\1", text)
