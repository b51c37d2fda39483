"""MERA Multi's judge score: a sequence classifier says whether each prediction is right for its question.

``dataset evaluate --judge MODEL`` (a local folder or a hub id, e.g. ``MERA-evaluation/MERA_Answer_judge``,
a RuModernBERT classifier) scores every prediction as MERA's ``judge_score`` does
(``multimodal_tasks/custom_metrics.py`` in MERA_MULTIMODAL, read, not copied): the classifier reads

    question <sep> gold answer <sep> prediction

where *question* is the prompt the model saw (the item's instruction filled with its inputs) and
``<sep>`` the tokenizer's separator token; when the prediction has text after its last ``ОТВЕТ``
(split case-sensitively, as there), that text is judged too, and the item scores 1 when either
reading is classed 1 (the argmax of the classifier's two classes), else 0. A missing prediction
scores 0. An input longer than the model takes (at most 8,192 tokens) is read twice, cut at the end
and cut at the start, and either reading classed 1 counts, as MERA does. The judge score overall is the mean over the items, and MERA's
task score is ``(EM + JS) / 2``.

Needs the ``[ml]`` extra (torch and transformers); without it the command ends with one line naming it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dataset.mera import MeraDocument, StreamedDocument
from ruclevr.cli import UsageError

JUDGE_MARKER = "ОТВЕТ"
RIGHT_CLASS = 1
BATCH_SIZE = 16
MAX_TOKENS = 8192  # MERA's judge truncates at about this many tokens


def judge_texts(question: str, gold: str, prediction: str, sep: str) -> list[str]:
    """What the judge reads for one item: the whole prediction, and the part after the last ОТВЕТ if any."""
    texts = [question + sep + gold + sep + prediction]
    after = prediction.split(JUDGE_MARKER)[-1].strip()
    if JUDGE_MARKER in prediction and after:
        texts.append(question + sep + gold + sep + after)
    return texts


def prompt_of(item: Mapping[str, Any]) -> str:
    """The prompt the model saw: MERA's ``instruction.format(**inputs)``, within the prompt sandbox's limits."""
    from jinja2.exceptions import SecurityError

    from dataset.mera import format_instruction

    try:
        return format_instruction(str(item["instruction"]), dict(item["inputs"]))
    except SecurityError as error:
        raise UsageError(f"item {item.get('meta', {}).get('id')}: its instruction: {error}") from None
    except (KeyError, IndexError, ValueError) as error:
        raise UsageError(f"item {item.get('meta', {}).get('id')}: its instruction cannot be filled ({error!r})") from None


class Judge:
    """A sequence classifier from a local folder or the hub, run on CPU (or CUDA when torch has it)."""

    def __init__(self, model: str) -> None:
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        from filter import is_local_model, model_token_limit

        options = {"local_files_only": is_local_model(model), "trust_remote_code": False}
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(model, **options)
            self.model = AutoModelForSequenceClassification.from_pretrained(model, **options).eval()
        except (OSError, ValueError) as error:
            raise UsageError(f"cannot load the judge model {model!r}: {' '.join(str(error).split())[:300]}") from None
        if self.model.config.num_labels < 2:
            raise UsageError(f"judge model {model!r} has {self.model.config.num_labels} output; it needs two classes")
        self.name = model
        self.sep = self.tokenizer.sep_token or "\n"
        self.max_length = min(model_token_limit(self.model.config, self.tokenizer), MAX_TOKENS)
        self._torch = torch

    def classes(self, texts: Sequence[str], side: str = "right") -> list[int]:
        """The argmax class of each text, in batches, a text too long cut on ``side``."""
        found: list[int] = []
        kept_side = self.tokenizer.truncation_side
        self.tokenizer.truncation_side = side
        try:
            for start in range(0, len(texts), BATCH_SIZE):
                batch = list(texts[start:start + BATCH_SIZE])
                encoded = self.tokenizer(batch, padding=True, truncation=True, max_length=self.max_length,
                                         return_tensors="pt")
                with self._torch.inference_mode():
                    logits = self.model(**encoded).logits
                found.extend(int(index) for index in logits.argmax(dim=-1).tolist())
        finally:
            self.tokenizer.truncation_side = kept_side
        return found

    def judged_right(self, texts: Sequence[str]) -> list[bool]:
        """Whether each text is classed right; one longer than the model takes is read cut at the end
        and cut at the start, and is right when either reading is (as MERA's judge does)."""
        right = [found == RIGHT_CLASS for found in self.classes(texts)]
        long = [n for n, text in enumerate(texts) if len(self.tokenizer(text)["input_ids"]) > self.max_length]
        for n, found in zip(long, self.classes([texts[n] for n in long], side="left"), strict=True):
            right[n] = right[n] or found == RIGHT_CLASS
        return right


@dataclass
class JudgeTally:
    """Judge and exact-match scores per question type, and the judge's verdict of every item."""

    items: list[dict[str, int]] = field(default_factory=list)
    per_type: dict[str, list[int]] = field(default_factory=dict)  # [judged right, exact match, items]

    def add(self, item_id: int, question_type: str, judged: int, exact: int) -> None:
        self.items.append({"id": item_id, "judge_score": judged})
        tally = self.per_type.setdefault(question_type, [0, 0, 0])
        tally[0] += judged
        tally[1] += exact
        tally[2] += 1

    def result(self, model: str) -> dict[str, Any]:
        def scores(judged: int, exact: int, total: int) -> dict[str, float | int]:
            js = judged / total if total else 0.0
            em = exact / total if total else 0.0
            return {"judge_score": js, "exact_match": em, "score": (em + js) / 2, "judged_right": judged, "total": total}

        overall = [sum(tally[n] for tally in self.per_type.values()) for n in range(3)]
        return {"model": model, "overall": scores(*overall),
                "question_types": {name: scores(*self.per_type[name]) for name in sorted(self.per_type)},
                "items": self.items}


def _chunks(records: Iterable[tuple[Mapping[str, Any], int]], size: int) -> Iterator[list[tuple[Mapping[str, Any], int]]]:
    chunk: list[tuple[Mapping[str, Any], int]] = []
    for record in records:
        chunk.append(record)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def judge_predictions(document: MeraDocument | StreamedDocument, split: str, predictions: Mapping[int, str],
                      exact: Mapping[int, int], model: str) -> dict[str, Any]:
    """The judge score of every item of ``split`` (``exact``: its exact match by id), overall and per type."""
    judge = Judge(model)
    tally = JudgeTally()
    items = ((item, exact.get(item["meta"]["id"], 0)) for item, _ in document.records(split))
    for chunk in _chunks(items, BATCH_SIZE * 8):
        texts: list[str] = []
        owners: list[int] = []
        for position, (item, _) in enumerate(chunk):
            prediction = predictions.get(item["meta"]["id"])
            if prediction is not None:
                for text in judge_texts(prompt_of(item), str(item["outputs"]), prediction, judge.sep):
                    texts.append(text)
                    owners.append(position)
        right = [0] * len(chunk)
        for owner, is_right in zip(owners, judge.judged_right(texts), strict=True):
            right[owner] = max(right[owner], int(is_right))
        for (item, is_exact), judged in zip(chunk, right, strict=True):
            tally.add(item["meta"]["id"], item["meta"]["question_type"], judged, int(is_exact))
    return tally.result(model)


def format_judge(result: Mapping[str, Any]) -> str:
    """Lines for the terminal: JS and (EM + JS) / 2 beside EM, per question type and overall."""
    lines = [f"judge score by {result['model']} (MERA's score is (EM + JS) / 2)",
             f"{'question_type':<16}{'n':>6}{'EM':>10}{'JS':>10}{'(EM+JS)/2':>12}"]
    rows = [*result["question_types"].items(), ("overall", result["overall"])]
    for name, row in rows:
        lines.append(f"{name:<16}{row['total']:>6}{row['exact_match']:>10.4f}{row['judge_score']:>10.4f}{row['score']:>12.4f}")
    return "\n".join(lines)
