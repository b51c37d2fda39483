"""The answer after the last «ОТВЕТ» marker: the MERA Multi paper's reading of a reply that reasons first.

The reasoning prompts (``--prompt mera-blocks-reasoning``) ask the model to reason after
«РАССУЖДЕНИЕ:» and to give the answer after «ОТВЕТ:». The paper describes scoring such a reply as
the better of two exact matches: the whole reply, and the text after the *last* marker. MERA's
published task does not (it compares the whole reply: :mod:`dataset.mera.em_rules`), so this reading is
the labelled ``answer_split`` EM beside the headline, never the headline. The marker is found in any
case (ОТВЕТ, Ответ, ответ), with or without a colon, and the separator after it (spaces, a colon, a
hyphen or dash) is dropped, as is whitespace at the end:

==============================================  =====================
reply                                           answer after the marker
==============================================  =====================
``РАССУЖДЕНИЕ: слева два куба. ОТВЕТ: да``      ``да``
``ответ - Да.``                                 ``Да.`` (matches «да»)
``ОТВЕТ: 2, нет, проверю ещё раз. ОТВЕТ: 3``    ``3`` (the last marker)
``да``                                          none: only the whole reply is compared
==============================================  =====================

The marker is a word of its own: «ответа» or «ответить» in the reasoning is not a marker. Nothing
here imports the ruclevr package's scoring, so the same rule is written out again in
``docs/lm_eval/utils.py`` for lm-eval's environment (tests/test_lm_eval_task.py checks they agree).
"""

from __future__ import annotations

import re

ANSWER_MARKER = re.compile(r"(?<![а-яё])ответ(?![а-яё])", re.IGNORECASE)
SEPARATORS = " \t\r\n:-–—"  # dropped between the marker and the answer


def answer_after_marker(reply: str) -> str | None:
    """The text after the last «ОТВЕТ» marker of ``reply`` (see the module docstring), or None without one."""
    ends = [marker.end() for marker in ANSWER_MARKER.finditer(reply)]
    return reply[ends[-1]:].lstrip(SEPARATORS).rstrip() if ends else None

