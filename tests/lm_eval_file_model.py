"""A model for lm-evaluation-harness that answers from a predictions file, for the task test.

Imported inside lm-eval's own environment (it registers itself as ``ruclevr_answers_file``); it
answers each request with the prediction recorded for the item's ``meta.id``, so the harness's
scores can be compared with ``python -m dataset evaluate`` on the same file.
"""

from __future__ import annotations

import json

from lm_eval.api.model import LM
from lm_eval.api.registry import register_model


@register_model("ruclevr_answers_file")
class AnswersFromFile(LM):
    MULTIMODAL = True  # the task passes each item's picture; this model ignores it

    def __init__(self, answers: str, **_config) -> None:
        super().__init__()
        with open(answers, encoding="utf-8") as handle:
            records = [json.loads(line) for line in handle if line.strip()]
        self.answers = {record["id"]: record["prediction"] for record in records}
        self.prompts: list[str] = []

    def generate_until(self, requests, disable_tqdm: bool = False) -> list[str]:
        replies = []
        for request in requests:
            self.prompts.append(request.args[0])
            replies.append(self.answers.get(request.doc["meta"]["id"], ""))
        return replies

    def loglikelihood(self, requests, disable_tqdm: bool = False):
        raise NotImplementedError("the ruclevr task only generates")

    def loglikelihood_rolling(self, requests, disable_tqdm: bool = False):
        raise NotImplementedError("the ruclevr task only generates")
