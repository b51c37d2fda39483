"""MERA Multi's exact match: the better of the whole reply and the text after its last «ОТВЕТ» marker."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from dataset.answer_split import answer_after_marker
from dataset.evaluate import exact_match, score_predictions

LM_EVAL_UTILS = Path(__file__).resolve().parents[1] / "docs" / "lm_eval" / "utils.py"

REPLIES = [  # reply, gold, exact match
    ("РАССУЖДЕНИЕ: слева два куба, справа шар. ОТВЕТ: да", "да", True),
    ("РАССУЖДЕНИЕ: слева два куба.\nОТВЕТ:\nда\n", "да", True),
    ("ответ - Да.", "да", True),
    ("Ответ — 3", "3", True),
    ("ОтВеТ да", "да", True),
    ("ОТВЕТ: 2, нет, проверю ещё раз. ОТВЕТ: 3", "3", True),  # the last marker counts
    ("ОТВЕТ: 3. Хотя нет, ОТВЕТ: 2", "3", False),
    ("да", "да", True),  # no marker: the whole reply
    ("Да.", "да", True),
    ("Думаю, что да", "да", False),
    ("Чтобы ответить, посчитаю: да", "да", False),  # «ответить» is not the marker
    ("РАССУЖДЕНИЕ: ответа не видно. ОТВЕТ: нет", "нет", True),
    ("ОТВЕТ: да, это точно", "да", False),
    ("ОТВЕТ:", "да", False),
]


@pytest.mark.parametrize(("reply", "gold", "expected"), REPLIES)
def test_exact_match_takes_the_better_of_the_whole_reply_and_the_answer_after_the_last_marker(reply, gold, expected):
    assert exact_match(reply, gold) is expected


def test_answer_after_marker_drops_the_separator_and_is_none_without_a_marker() -> None:
    assert answer_after_marker("РАССУЖДЕНИЕ: … ОТВЕТ: да") == "да"
    assert answer_after_marker("ответ - Да.") == "Да."
    assert answer_after_marker("ОТВЕТ: 1 ОТВЕТ: 2") == "2"
    assert answer_after_marker("да") is None
    assert answer_after_marker("ответить") is None


def test_the_lm_eval_task_scores_every_reply_as_evaluate_does() -> None:
    spec = importlib.util.spec_from_file_location("ruclevr_lm_eval_utils", LM_EVAL_UTILS)
    assert spec is not None and spec.loader is not None
    utils = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(utils)
    for reply, gold, expected in REPLIES:
        assert utils.process_results({"outputs": gold}, [reply]) == {"exact_match": int(expected)}, reply


def test_score_predictions_counts_reasoning_replies_by_their_answer() -> None:
    items = [{"meta": {"id": n, "question_type": "binary"}, "outputs": "да"} for n in range(3)]
    predictions = {0: "РАССУЖДЕНИЕ: вижу куб. ОТВЕТ: да", 1: "ответ - Да.", 2: "ОТВЕТ: нет"}
    result = score_predictions(items, predictions, per_item=True)
    assert [row["exact_match"] for row in result["items"]] == [1, 1, 0]
    assert result["overall"]["exact_match"] == pytest.approx(2 / 3)
