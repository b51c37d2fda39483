"""The three exact matches a reply to a ruCLEVR item can be scored by, and which of MERA's texts each follows.

=================  ===============================================================================
rule               what is compared, and where MERA has it
=================  ===============================================================================
``exact_match``    **the headline**: the whole reply, lower-cased, the 32 ASCII characters of
                   ``string.punctuation`` deleted, whitespace kept, against the gold word likewise.
                   This is lm-eval 0.4.x's ``exact_match`` metric with ``ignore_case: true`` and
                   ``ignore_punctuation: true`` after the default ``take_first`` filter, as MERA's
                   published ruCLEVR task (MERA-Evaluation/MERA_MULTIMODAL, HEAD 0f32158,
                   ``multimodal_tasks/ruclevr/ruclevr.yaml``) scores every reply: «Нет.» matches «нет»,
                   « нет» and «ОТВЕТ: нет» do not.
``answer_split``   the better of the whole reply and the text after its *last* «ОТВЕТ» marker
                   (:mod:`dataset.mera.answer_split`): the MERA Multi paper's description of how a reply
                   that reasons first is read. No published MERA task scores EM this way.
``compute_exact``  Hugging Face transformers' SQuAD ``compute_exact`` on the whole reply: lower-case,
                   ASCII punctuation deleted, the English articles a/an/the dropped, whitespace runs
                   collapsed and trimmed. The newer task files score with it
                   (``multimodal_tasks/custom_metrics.py``, ``process_results_template``, at
                   MERA_MULTIMODAL 3380006); they split on «ОТВЕТ» only for the judge model's score.
=================  ===============================================================================

The headline is what a number on MERA's leaderboard means; the other two are printed beside it,
labelled, so that a reply format which only one of them accepts is seen at once.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable

from dataset.mera.answer_split import answer_after_marker

HEADLINE = "exact_match"
ANSWER_SPLIT = "answer_split"
COMPUTE_EXACT = "compute_exact"
MERA_TASK_COMMIT = "0f32158"  # MERA_MULTIMODAL HEAD read for the headline (the run, lm-eval 0.4.13)
COMPUTE_EXACT_COMMIT = "3380006"  # MERA_MULTIMODAL commit of custom_metrics.py read for compute_exact
RULE_LABELS = {
    HEADLINE: f"MERA task EM (whole reply; MERA_MULTIMODAL {MERA_TASK_COMMIT})",
    ANSWER_SPLIT: "«ОТВЕТ»-split EM (MERA Multi paper)",
    COMPUTE_EXACT: f"compute_exact EM (custom_metrics.py, MERA_MULTIMODAL {COMPUTE_EXACT_COMMIT})",
}

_DELETE_ASCII_PUNCTUATION = str.maketrans("", "", string.punctuation)
_ENGLISH_ARTICLE = re.compile(r"\b(a|an|the)\b", re.UNICODE)


def normalise_answer(text: str) -> str:
    """An answer as lm-eval compares it with ignore_case and ignore_punctuation."""
    # lm-eval compares NumPy unicode arrays, and NumPy drops trailing NUL characters on storage.
    return text.rstrip("\x00").lower().translate(_DELETE_ASCII_PUNCTUATION)


def task_exact_match(prediction: str, reference: str) -> bool:
    """The headline: MERA's published task's exact match of the whole reply."""
    return normalise_answer(prediction) == normalise_answer(reference)


def answer_split_exact_match(prediction: str, reference: str) -> bool:
    """The paper's reading: the whole reply, or the text after its last «ОТВЕТ» marker, equals the reference."""
    gold = normalise_answer(reference)
    if normalise_answer(prediction) == gold:
        return True
    if "ответ" not in prediction.lower():  # no marker (the cheap test first: most predictions are a word)
        return False
    after = answer_after_marker(prediction)
    return after is not None and normalise_answer(after) == gold


def squad_normalise(text: str) -> str:
    """SQuAD's answer normalisation, in its order: lower-case, drop punctuation, drop a/an/the, collapse spaces."""
    text = text.lower()
    text = text.translate(_DELETE_ASCII_PUNCTUATION)
    text = _ENGLISH_ARTICLE.sub(" ", text)
    return " ".join(text.split())


def compute_exact_match(prediction: str, reference: str) -> bool:
    """transformers' ``compute_exact(gold, prediction)`` as MERA's newer task files call it."""
    return squad_normalise(reference) == squad_normalise(prediction)


OTHER_RULES: dict[str, Callable[[str, str], bool]] = {
    ANSWER_SPLIT: answer_split_exact_match,
    COMPUTE_EXACT: compute_exact_match,
}
