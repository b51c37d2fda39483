"""Exact-match scoring of predictions, overall and per question type, and blind baselines.

The normalisation is lm-eval's ``exact_match`` with ``ignore_case=True`` and
``ignore_punctuation=True`` (``lm_eval/api/metrics.py``, ported from Hugging Face evaluate):
lower-case, then delete the 32 ASCII characters of ``string.punctuation``. Whitespace is *not*
stripped and non-ASCII punctuation (« » — …) is *not* removed, exactly as there: ``"Нет."``
matches ``"нет"`` but ``" нет"`` does not.

Predictions come in any of three formats, told apart by their content:

- JSON lines, one object per item: ``{"id": 12, "prediction": "нет"}`` (``id`` is ``meta.id``);
- MERA's submission file: ``{"data": {"test": [{"outputs": "нет", "meta": {"id": 12}}, ...]}}``;
- lm-evaluation-harness's ``--log_samples`` output (``samples_<task>_<date>.jsonl``): one object
  per item with the item as ``doc`` and the model's filtered answer as ``filtered_resps[0]``.
"""

from __future__ import annotations

import json
import string
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruclevr.cli import UsageError
from translate.answers import russian_answer_words

_DELETE_ASCII_PUNCTUATION = str.maketrans("", "", string.punctuation)

Item = Mapping[str, Any]


def normalise_answer(text: str) -> str:
    """An answer as lm-eval compares it with ignore_case and ignore_punctuation."""
    # lm-eval compares NumPy unicode arrays, and NumPy drops trailing NUL characters on storage.
    return text.rstrip("\x00").lower().translate(_DELETE_ASCII_PUNCTUATION)


def exact_match(prediction: str, reference: str) -> bool:
    return normalise_answer(prediction) == normalise_answer(reference)


@dataclass
class Tally:
    correct: int = 0
    total: int = 0
    synonyms: int = 0  # wrong predictions that name the gold answer's value by another word

    def add(self, is_correct: bool, is_synonym: bool = False) -> None:
        self.correct += int(is_correct)
        self.total += 1
        self.synonyms += int(is_synonym)

    def as_dict(self) -> dict[str, float | int]:
        return {"exact_match": self.correct / self.total if self.total else 0.0, "correct": self.correct, "total": self.total,
                "wrong_synonyms": self.synonyms}


def synonyms_of_answers() -> dict[str, frozenset[str]]:
    """Normalised gold answer -> normalised other words for the same value (шар for сфера)."""
    found: dict[str, frozenset[str]] = {}
    for entries in russian_answer_words().values():
        for answer, others in entries.items():
            found[normalise_answer(answer)] = frozenset(normalise_answer(word) for word in others)
    return found


def is_synonym(prediction: str | None, reference: str, synonyms: Mapping[str, frozenset[str]]) -> bool:
    """Whether a wrong ``prediction`` is another word for the gold answer (analysis only, never scored)."""
    return prediction is not None and normalise_answer(prediction) in synonyms.get(normalise_answer(reference), ())


def score_predictions(items: Sequence[Item], predictions: Mapping[int, str], per_item: bool = False) -> dict[str, Any]:
    """Exact match overall and per ``meta.question_type``; an item without a prediction counts as wrong.

    Each tally also counts the wrong predictions that are synonyms of the gold word
    (``wrong_synonyms``, e.g. «шар» for «сфера»); they stay wrong, as in MERA's exact match.
    ``per_item`` adds ``items``: ``{"id", "exact_match": 0 or 1}`` for every scored item, in order.
    """
    synonyms = synonyms_of_answers()
    overall = Tally()
    per_type: dict[str, Tally] = {}
    scores = []
    missing = 0
    for item in items:
        prediction = predictions.get(item["meta"]["id"])
        missing += prediction is None
        is_correct = prediction is not None and exact_match(prediction, item["outputs"])
        synonym = not is_correct and is_synonym(prediction, item["outputs"], synonyms)
        overall.add(is_correct, synonym)
        per_type.setdefault(item["meta"]["question_type"], Tally()).add(is_correct, synonym)
        scores.append({"id": item["meta"]["id"], "exact_match": int(is_correct)})
    result: dict[str, Any] = {
        "overall": overall.as_dict(),
        "question_types": {name: per_type[name].as_dict() for name in sorted(per_type)},
        "missing": missing,
    }
    if per_item:
        result["items"] = scores
    return result


def majority_predictions(items: Sequence[Item], group_of: Callable[[Item], str]) -> dict[int, str]:
    """Predict for every item the most frequent answer of its group, never looking at the image.

    Ties go to the alphabetically first answer so the baseline is deterministic.
    """
    answers: dict[str, Counter[str]] = {}
    for item in items:
        answers.setdefault(group_of(item), Counter())[item["outputs"]] += 1
    majority = {group: min(counts, key=lambda answer: (-counts[answer], answer)) for group, counts in answers.items()}
    return {item["meta"]["id"]: majority[group_of(item)] for item in items}


def blind_baselines(items: Sequence[Item], family_of: Callable[[Item], str]) -> dict[str, dict[str, Any]]:
    """Majority answer per question type and per family, fitted on the scored items themselves.

    Fitting on the same items makes these an upper bound on what answer priors alone can reach:
    the gap between a model and them is what the image contributes.
    """
    per_type = majority_predictions(items, lambda item: item["meta"]["question_type"])
    per_family = majority_predictions(items, family_of)
    return {
        "majority_per_question_type": score_predictions(items, per_type),
        "majority_per_family": score_predictions(items, per_family),
    }


def read_predictions(path: str | Path) -> dict[int, str]:
    """Read predictions in any of the three formats into ``{id: prediction}``."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"predictions file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as error:
        raise UsageError(f"predictions file {path} cannot be read as UTF-8 text: {error}") from None
    submission = _as_mera_submission(text)
    if submission is not None:
        return _read_mera_submission(submission, path)
    predictions: dict[int, str] = {}
    for line_number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        item_id, prediction = _parse_prediction_line(line, f"{path} line {line_number}")
        if item_id in predictions:
            raise UsageError(f"{path} line {line_number}: id {item_id} appears twice")
        predictions[item_id] = prediction
    return predictions


def _as_mera_submission(text: str) -> dict[str, Any] | None:
    """The parsed file when it is one JSON object with a ``data`` object (MERA's submission), else None."""
    if not text.lstrip().startswith("{"):
        return None
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        return None  # JSON lines: several objects
    return whole if isinstance(whole, dict) and isinstance(whole.get("data"), dict) else None


def _read_mera_submission(submission: Mapping[str, Any], path: str | Path) -> dict[int, str]:
    predictions: dict[int, str] = {}
    for split, records in submission["data"].items():
        if not isinstance(records, list):
            raise UsageError(f"{path}: data.{split} of a MERA submission must be a list")
        for position, record in enumerate(records):
            where = f"{path} data.{split}[{position}]"
            meta = record.get("meta") if isinstance(record, dict) else None
            item_id = meta.get("id") if isinstance(meta, dict) else None
            prediction = record.get("outputs") if isinstance(record, dict) else None
            item_id, prediction = _checked(item_id, prediction, where, ("meta.id", "outputs"))
            if item_id in predictions:
                raise UsageError(f"{where}: id {item_id} appears twice")
            predictions[item_id] = prediction
    return predictions


def _parse_prediction_line(line: str, where: str) -> tuple[int, str]:
    """One JSON line: ours ({"id", "prediction"}) or an lm-eval logged sample ({"doc", "filtered_resps"})."""
    expected = '{"id": 1, "prediction": "..."} or an lm-eval sample'
    try:
        record = json.loads(line)
    except json.JSONDecodeError as error:
        raise UsageError(f"{where}: not JSON ({error.msg}); expected {expected}") from None
    if not isinstance(record, dict):
        raise UsageError(f"{where}: expected an object {expected}")
    if "doc" in record:
        return _lm_eval_sample(record, where)
    return _checked(record.get("id"), record.get("prediction"), where, ("id", "prediction"))


def _lm_eval_sample(record: Mapping[str, Any], where: str) -> tuple[int, str]:
    """lm-eval's logged sample: the item is ``doc``; the scored answer is the first filtered response."""
    doc = record["doc"]
    meta = doc.get("meta") if isinstance(doc, dict) else None
    responses = record.get("filtered_resps")
    answer = responses[0] if isinstance(responses, list) and responses else None
    if isinstance(answer, list):  # some lm-eval versions keep one list per repeat
        answer = answer[0] if answer else None
    return _checked(meta.get("id") if isinstance(meta, dict) else None, answer, where,
                    ("doc.meta.id", "filtered_resps[0]"))


def _checked(item_id: Any, prediction: Any, where: str, keys: tuple[str, str]) -> tuple[int, str]:
    """``(id, prediction)`` once both have the right type; ``keys`` name them as the file's format does."""
    if not isinstance(item_id, int) or isinstance(item_id, bool):
        raise UsageError(f"{where}: '{keys[0]}' must be an integer meta.id, got {item_id!r}")
    if not isinstance(prediction, str):
        raise UsageError(f"{where}: '{keys[1]}' must be a string, got {prediction!r}")
    return item_id, prediction


def evaluate(
    items: Sequence[Item],
    family_of: Callable[[Item], str],
    predictions: Mapping[int, str] | None,
    known_ids: set[int],
) -> dict[str, Any]:
    """Score ``predictions`` (if any) and the blind baselines on ``items``.

    ``known_ids`` are the ids of every split: a prediction for another split is ignored and
    counted, one for an id that does not exist is a usage error (the file is for another dataset).
    """
    result: dict[str, Any] = {"items": len(items), "baselines": blind_baselines(items, family_of)}
    if predictions is not None:
        unknown = sorted(set(predictions) - known_ids)
        if unknown:
            shown = ", ".join(str(i) for i in unknown[:5])
            raise UsageError(f"predictions name ids that are not in the dataset: {shown}{' ...' if len(unknown) > 5 else ''}")
        scored_ids = {item["meta"]["id"] for item in items}
        result["predictions"] = score_predictions(items, predictions, per_item=True)
        result["predictions"]["ignored_other_split"] = len(set(predictions) - scored_ids)
    return result


def format_results(result: Mapping[str, Any], split: str) -> str:
    """A plain-text table: one row per question type, one column per scorer."""
    columns: list[tuple[str, Mapping[str, Any]]] = []
    if "predictions" in result:
        columns.append(("predictions", result["predictions"]))
    columns.append(("majority/type", result["baselines"]["majority_per_question_type"]))
    columns.append(("majority/family", result["baselines"]["majority_per_family"]))
    header = f"{'question_type':<16}{'n':>6}" + "".join(f"{name:>18}" for name, _ in columns)
    lines = [f"exact match on split {split} ({result['items']} items)", header]
    types = list(columns[0][1]["question_types"])
    for question_type in types:
        total = columns[0][1]["question_types"][question_type]["total"]
        cells = "".join(f"{scores['question_types'][question_type]['exact_match']:>18.4f}" for _, scores in columns)
        lines.append(f"{question_type:<16}{total:>6}{cells}")
    cells = "".join(f"{scores['overall']['exact_match']:>18.4f}" for _, scores in columns)
    lines.append(f"{'overall':<16}{result['items']:>6}{cells}")
    if "predictions" in result:
        scores = result["predictions"]
        by_type = ", ".join(f"{name} {tally['wrong_synonyms']}" for name, tally in scores["question_types"].items())
        lines.append(f"wrong predictions that are synonyms of the gold word: {scores['overall']['wrong_synonyms']} ({by_type})")
        lines.append(
            f"missing predictions: {result['predictions']['missing']}; "
            f"ignored (other split): {result['predictions']['ignored_other_split']}"
        )
    return "\n".join(lines)
