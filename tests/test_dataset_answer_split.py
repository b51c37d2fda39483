"""The three exact matches (dataset/mera/em_rules.py): MERA's task on the whole reply (the headline), the paper's
«ОТВЕТ» split, transformers' compute_exact; and docs/lm_eval's copy of them."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import module_from_file

from dataset.evaluation.evaluate import exact_match, score_predictions
from dataset.mera.answer_split import answer_after_marker
from dataset.mera.em_rules import answer_split_exact_match, compute_exact_match, task_exact_match

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
def test_answer_split_takes_the_better_of_the_whole_reply_and_the_answer_after_the_last_marker(reply, gold, expected):
    assert answer_split_exact_match(reply, gold) is expected


@pytest.mark.parametrize(("reply", "gold", "_split"), REPLIES)
def test_the_headline_scores_the_whole_reply_as_meras_task_does(reply, gold, _split):
    assert exact_match(reply, gold) is task_exact_match(reply, gold)
    whole_reply_matches = reply.lower().strip(".") == gold  # none of these replies has other punctuation
    assert exact_match(reply, gold) is whole_reply_matches


# (reply, gold, compute_exact): lower-case, ASCII punctuation out, a/an/the out, whitespace collapsed and trimmed
COMPUTE_EXACT_CASES = [
    (" нет ", "нет", True), ("нет\n", "нет", True), ("Нет.", "нет", True), ("не т", "нет", False),
    ("«нет»", "нет", False), ("the да", "да", True), ("ОТВЕТ: да", "да", False), ("", "да", False),
    ("большой  куб", "большой куб", True), ("Жёлтый", "желтый", False),
]


@pytest.mark.parametrize(("reply", "gold", "expected"), COMPUTE_EXACT_CASES)
def test_compute_exact_collapses_whitespace_and_drops_english_articles(reply, gold, expected) -> None:
    assert compute_exact_match(reply, gold) is expected


def test_answer_after_marker_drops_the_separator_and_is_none_without_a_marker() -> None:
    assert answer_after_marker("РАССУЖДЕНИЕ: … ОТВЕТ: да") == "да"
    assert answer_after_marker("ответ - Да.") == "Да."
    assert answer_after_marker("ОТВЕТ: 1 ОТВЕТ: 2") == "2"
    assert answer_after_marker("да") is None
    assert answer_after_marker("ответить") is None


def test_the_lm_eval_task_scores_every_reply_as_evaluate_does() -> None:
    utils = module_from_file(LM_EVAL_UTILS, "ruclevr_lm_eval_utils")
    cases = [(reply, gold) for reply, gold, _ in REPLIES] + [(reply, gold) for reply, gold, _ in COMPUTE_EXACT_CASES]
    for reply, gold in cases:
        assert utils.process_results({"outputs": gold}, [reply]) == {
            "exact_match": int(task_exact_match(reply, gold)), "answer_split": int(answer_split_exact_match(reply, gold)),
            "compute_exact": int(compute_exact_match(reply, gold))}, reply


def test_score_predictions_counts_reasoning_replies_wrong_in_the_headline_and_right_beside_it() -> None:
    items = [{"meta": {"id": n, "question_type": "binary"}, "outputs": "да"} for n in range(4)]
    predictions = {0: "РАССУЖДЕНИЕ: вижу куб. ОТВЕТ: да", 1: "ответ - Да.", 2: "ОТВЕТ: нет", 3: " да "}
    result = score_predictions(items, predictions, per_item=True, other_rules=True)
    assert [row["exact_match"] for row in result["items"]] == [0, 0, 0, 0]
    assert result["overall"]["exact_match"] == 0
    assert result["overall"]["other_rules"] == {"answer_split": {"exact_match": 0.5, "correct": 2},
                                                "compute_exact": {"exact_match": 0.25, "correct": 1}}
    assert result["question_types"]["binary"]["other_rules"] == result["overall"]["other_rules"]
