"""Evaluation: exact match of a model's predictions (a JSON-lines file, an lm-eval samples file or a
MERA submission zip) per question type, family and group, blind baselines, and the LLM judge.

This module is the public face: other parts of ``dataset`` import only the names below
(docs/architecture.md, tests/test_package_layers.py)."""

from __future__ import annotations

from dataset.evaluation.evaluate import (
    AnswerCounts,
    dataset_ids,
    format_results,
    lm_eval_sample,
    read_predictions,
    score_predictions,
)
from dataset.evaluation.evaluate import evaluate as evaluate_predictions  # not ``evaluate``: that is the module
from dataset.evaluation.judge import format_judge, judge_predictions
from dataset.evaluation.submission_zip import LOG_PREFIXES, LOGS_FILE, SAMPLES_PREFIX, TASK_FILE, is_submission_zip

__all__ = [
    "AnswerCounts",
    "dataset_ids",
    "evaluate_predictions",
    "format_judge",
    "format_results",
    "is_submission_zip",
    "judge_predictions",
    "lm_eval_sample",
    "LOG_PREFIXES",
    "LOGS_FILE",
    "read_predictions",
    "SAMPLES_PREFIX",
    "score_predictions",
    "TASK_FILE",
]
