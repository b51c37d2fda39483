"""Exact-match scoring of predictions, overall and per question type, and blind baselines.

The headline exact match is MERA's published ruCLEVR task's: lm-eval's ``exact_match`` with
``ignore_case=True`` and ``ignore_punctuation=True`` on the whole reply (``lm_eval/api/metrics.py``,
ported from Hugging Face evaluate): lower-case, then delete the 32 ASCII characters of
``string.punctuation``. Whitespace is *not* stripped and non-ASCII punctuation (« » — …) is *not*
removed, exactly as there: ``"Нет."`` matches ``"нет"`` but ``" нет"`` and ``"ОТВЕТ: нет"`` do not.
Beside it, labelled, come the MERA Multi paper's «ОТВЕТ»-split EM and the newer task files'
``compute_exact`` EM (:mod:`dataset.mera.em_rules` says which MERA text each follows).

Predictions come in any of three formats, told apart by how the file opens (a zip; an object whose
first member is ``data``: MERA's submission; anything else is JSON lines, every line checked):

- JSON lines, one object per item: ``{"id": 12, "prediction": "нет"}`` (``id`` is ``meta.id``);
- MERA's submission file: ``{"data": {"test": [{"outputs": "нет", "meta": {"id": 12}}, ...]}}``;
- lm-evaluation-harness's ``--log_samples`` output (``samples_<task>_<date>.jsonl``): one object
  per item with the item as ``doc`` and the model's filtered answer as ``filtered_resps[0]``;

and the zip ``dataset submission`` writes for MERA's site is read through its ``ruCLEVR.json``.
"""

from __future__ import annotations

import re
from array import array
from collections import Counter
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from dataset.evaluation.submission_zip import TASK_FILE, is_submission_zip, open_task_file
from dataset.mera import (
    HEADLINE,
    OTHER_RULES,
    RULE_LABELS,
    SPLITS,
    GroupScoring,
    MeraDocument,
    StreamedDocument,
    family_in,
    format_group_results,
    normalise_answer,
    task_exact_match,
)
from ruclevr import jsonincremental, jsonlimits
from ruclevr.cli import UsageError
from ruclevr.io import parse_json_line, read_lines
from ruclevr.jsonstream import LazyList
from ruclevr.paths import regular_file
from translate import YO_POLICIES, russian_answer_words

Item = Mapping[str, Any]


def exact_match(prediction: str, reference: str) -> bool:
    """The headline exact match: MERA's published task's, on the whole reply (:func:`dataset.mera.em_rules.task_exact_match`)."""
    return task_exact_match(prediction, reference)


@dataclass
class Tally:
    correct: int = 0
    total: int = 0
    synonyms: int = 0  # wrong predictions that name the gold answer's value by another word
    other_rules: dict[str, int] | None = None  # items right under each other rule (dataset.mera.em_rules.OTHER_RULES)

    def add(self, is_correct: bool, is_synonym: bool = False, count: int = 1) -> None:
        self.correct += count * int(is_correct)
        self.total += count
        self.synonyms += count * int(is_synonym)

    def add_other_rules(self, right: Mapping[str, bool], count: int = 1) -> None:
        """``count`` items' verdicts under the other rules, beside the headline's."""
        if self.other_rules is None:
            self.other_rules = dict.fromkeys(OTHER_RULES, 0)
        for rule, is_right in right.items():
            self.other_rules[rule] += count * int(is_right)

    def fraction(self, count: int) -> float:
        return count / self.total if self.total else 0.0

    def as_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = {"exact_match": self.fraction(self.correct), "correct": self.correct,
                                  "total": self.total, "wrong_synonyms": self.synonyms}
        if self.other_rules is not None:
            result["other_rules"] = {rule: {"exact_match": self.fraction(count), "correct": count}
                                     for rule, count in self.other_rules.items()}
        return result


def synonyms_of_answers() -> dict[str, frozenset[str]]:
    """Normalised gold answer -> normalised other words for the same value (шар for сфера)."""
    found: dict[str, frozenset[str]] = {}
    for policy in YO_POLICIES:  # the gold is spelt by the build's ё policy, either of them
        for entries in russian_answer_words(policy).values():
            for answer, others in entries.items():
                found[normalise_answer(answer)] = frozenset(normalise_answer(word) for word in others)
    return found


def is_synonym(prediction: str | None, reference: str, synonyms: Mapping[str, frozenset[str]]) -> bool:
    """Whether a wrong ``prediction`` is another word for the gold answer (analysis only, never scored)."""
    return prediction is not None and normalise_answer(prediction) in synonyms.get(normalise_answer(reference), ())


class ItemScores(LazyList):
    """Each scored item's ``{"id", "exact_match"}``, in order, kept as 9 bytes an item; iterating gives the dicts."""

    def __init__(self) -> None:
        self.ids = array("q")
        self.matches = bytearray()

    def add(self, item_id: int, is_correct: bool) -> None:
        self.ids.append(item_id)
        self.matches.append(int(is_correct))

    def __len__(self) -> int:
        return len(self.ids)

    def __iter__(self) -> Iterator[dict[str, int]]:
        for item_id, match in zip(self.ids, self.matches, strict=True):
            yield {"id": item_id, "exact_match": match}


class _Scorer:
    """Exact match of one predictor, tallied one item at a time (see :func:`score_predictions`)."""

    def __init__(self, per_item: bool = False, other_rules: bool = False) -> None:
        self.other_rules = other_rules  # also tally the labelled rules beside the headline
        self.synonyms = synonyms_of_answers()
        self.overall = Tally()
        self.per_type: dict[str, Tally] = {}
        self.missing = 0
        self.items = ItemScores() if per_item else None

    def add(self, item: Item, prediction: str | None) -> None:
        is_correct = self.add_answers(item["meta"]["question_type"], item["outputs"], prediction)
        if self.items is not None:
            self.items.add(item["meta"]["id"], is_correct)

    def add_answers(self, question_type: str, answer: str, prediction: str | None, count: int = 1) -> bool:
        """``count`` items of ``question_type`` answered ``answer``, all predicted ``prediction``; whether it is right."""
        self.missing += count * (prediction is None)
        is_correct = prediction is not None and exact_match(prediction, answer)
        synonym = not is_correct and is_synonym(prediction, answer, self.synonyms)
        self.overall.add(is_correct, synonym, count)
        self.per_type.setdefault(question_type, Tally()).add(is_correct, synonym, count)
        if self.other_rules:
            right = {rule: prediction is not None and match(prediction, answer) for rule, match in OTHER_RULES.items()}
            for tally in (self.overall, self.per_type[question_type]):
                tally.add_other_rules(right, count)
        return is_correct

    def result(self) -> dict[str, Any]:
        result: dict[str, Any] = {
            "overall": self.overall.as_dict(),
            "question_types": {name: self.per_type[name].as_dict() for name in sorted(self.per_type)},
            "missing": self.missing,
        }
        if self.items is not None:
            result["items"] = self.items
        return result


def score_predictions(items: Iterable[Item], predictions: Mapping[int, str], per_item: bool = False,
                      other_rules: bool = False) -> dict[str, Any]:
    """Exact match overall and per ``meta.question_type``; an item without a prediction counts as wrong.

    Each tally also counts the wrong predictions that are synonyms of the gold word
    (``wrong_synonyms``, e.g. «шар» for «сфера»); they stay wrong, as in MERA's exact match.
    ``per_item`` adds ``items``: ``{"id", "exact_match": 0 or 1}`` for every scored item, in order
    (an :class:`ItemScores`: iterate it, or :func:`ruclevr.jsonstream.write_json` it). ``other_rules``
    adds each tally's ``other_rules``: the EM under :data:`dataset.mera.em_rules.OTHER_RULES`.
    """
    scorer = _Scorer(per_item, other_rules)
    for item in items:
        scorer.add(item, predictions.get(item["meta"]["id"]))
    return scorer.result()


class AnswerCounts:
    """How many items there are of each (question type, family, answer), added one item at a time:
    all the blind baselines need (bounded by the vocabulary and the families, not the items)."""

    def __init__(self) -> None:
        self.items = 0
        self.counts: Counter[tuple[str, str, str]] = Counter()

    def add(self, item: Item, record: Mapping[str, Any]) -> None:
        self.items += 1
        self.counts[(item["meta"]["question_type"], family_in(record), item["outputs"])] += 1

    def baselines(self) -> dict[str, dict[str, Any]]:
        """Majority answer per question type and per family, fitted on the counted items and scored on them."""
        per_type: dict[str, Counter[str]] = {}
        per_family: dict[str, Counter[str]] = {}
        for (question_type, family, answer), count in self.counts.items():
            per_type.setdefault(question_type, Counter())[answer] += count
            per_family.setdefault(family, Counter())[answer] += count
        by_type, by_family = _majority(per_type), _majority(per_family)
        scorers = {"majority_per_question_type": _Scorer(), "majority_per_family": _Scorer()}
        for (question_type, family, answer), count in self.counts.items():
            scorers["majority_per_question_type"].add_answers(question_type, answer, by_type[question_type], count)
            scorers["majority_per_family"].add_answers(question_type, answer, by_family[family], count)
        return {name: scorer.result() for name, scorer in scorers.items()}


def blind_baselines(items: Iterable[Item], family_of: Callable[[Item], str]) -> dict[str, dict[str, Any]]:
    """Majority answer per question type and per family, fitted on the scored items themselves.

    Fitting on the same items makes these an upper bound on what answer priors alone can reach:
    the gap between a model and them is what the image contributes. ``items`` is gone through once.
    """
    counts = AnswerCounts()
    for item in items:
        counts.add(item, {"family": family_of(item)})
    return counts.baselines()


def _scored(records: Iterable[tuple[Item, Mapping[str, Any]]], predictions: Mapping[int, str] | None) -> dict[str, Any]:
    """The blind baselines and the predictions' scores, tallied in one pass over the
    (item, provenance record) pairs."""
    answers = AnswerCounts()
    predicted = _Scorer(per_item=True, other_rules=True) if predictions is not None else None
    scored_ids: set[int] = set()
    for item, record in records:
        answers.add(item, record)
        if predicted is not None and predictions is not None:
            item_id = item["meta"]["id"]
            predicted.add(item, predictions.get(item_id))
            if item_id in predictions:
                scored_ids.add(item_id)
    result: dict[str, Any] = {"items": answers.items, "baselines": answers.baselines()}
    if predicted is not None and predictions is not None:
        result["predictions"] = predicted.result()
        result["predictions"]["ignored_other_split"] = len(predictions) - len(scored_ids)
    return result


def _majority(answers: Mapping[str, Counter[str]]) -> dict[str, str]:
    return {group: min(counts, key=lambda answer: (-counts[answer], answer)) for group, counts in answers.items()}


def read_predictions(path: str | Path, known: Container[int] | None = None) -> dict[int, str]:
    """Read predictions in any of the three formats (or a submission zip) into ``{id: prediction}``,
    one line or item at a time (bounded memory for any file, ``/dev/zero`` included). With ``known``
    (the dataset's ids), an id outside it is refused where it stands, so the result never outgrows
    the dataset."""
    label = f"predictions file {path}"
    regular_file(path, "predictions file")
    if is_submission_zip(path):  # `dataset submission`'s zip: its ruCLEVR.json is MERA's submission file
        records = _submission_records(lambda: open_task_file(path), f"{path}:{TASK_FILE}", f"{label}:{TASK_FILE}")
    elif is_submission_file(path):
        records = _submission_records(lambda: open(path, "rb"), str(path), label)
    else:
        records = ((f"{path} line {number}", _parse_prediction_line(line, f"{path} line {number}"))
                   for number, line in read_lines(path, label) if line.strip())
    predictions: dict[int, str] = {}
    for where, (item_id, prediction) in records:
        if item_id in predictions:
            raise UsageError(f"{where}: id {item_id} appears twice")
        if known is not None and item_id not in known:
            raise UsageError(f"{where}: predictions name ids that are not in the dataset: {item_id}")
        predictions[item_id] = prediction
    if not predictions:  # an empty file would score 0 without a word
        raise UsageError(f"{label} holds no predictions")
    return predictions


def dataset_ids(document: MeraDocument | StreamedDocument) -> set[int]:
    """Every item id of every split: the ids a predictions file may name."""
    return {item["meta"]["id"] for split in SPLITS for item, _ in document.records(split)}


#: How MERA's submission file opens, whatever its layout: one object whose first member is ``data``.
_SUBMISSION_OPENING = re.compile(rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"data"\s*:')


def is_submission_file(path: str | Path) -> bool:
    """Whether ``path`` is MERA's submission (``{"data": {split: [...]}}``, on one line or over many) rather
    than JSON lines: told from how the file opens (its first member is ``data``), never from whether its
    first line parses, so a broken first line of JSON lines is refused as such, not read as another format."""
    with open(path, "rb") as handle:
        head = handle.read(4096)
    return _SUBMISSION_OPENING.match(head) is not None


def _submission_records(open_handle: Callable[[], AbstractContextManager[IO[bytes]]], name: str,
                        label: str) -> Iterator[tuple[str, tuple[int, str]]]:
    """MERA's submission JSON item by item; ``open_handle`` opens it (a file, or a zip's member)."""
    positions: dict[str, int] = {}
    with open_handle() as handle:
        try:
            for split, record in jsonincremental.nested_list_items(handle, "data"):
                position = positions[split] = positions.get(split, -1) + 1
                where = f"{name} data.{split}[{position}]"
                meta = record.get("meta") if isinstance(record, dict) else None
                item_id = meta.get("id") if isinstance(meta, dict) else None
                prediction = record.get("outputs") if isinstance(record, dict) else None
                yield where, _checked(item_id, prediction, where, ("meta.id", "outputs"))
        except (jsonincremental.IncrementalError, jsonlimits.JsonLimitError) as error:
            raise UsageError(f"{label} {error}") from None
        except UnicodeDecodeError as error:
            raise UsageError(f"{label} is not UTF-8 text ({error.reason})") from None


def _parse_prediction_line(line: str, where: str) -> tuple[int, str]:
    """One JSON line: ours ({"id", "prediction"}) or an lm-eval logged sample ({"doc", "filtered_resps"})."""
    expected = '{"id": 1, "prediction": "..."} or an lm-eval sample'
    record = parse_json_line(line, where, expected)
    if not isinstance(record, dict):
        raise UsageError(f"{where}: expected an object {expected}")
    if "doc" in record:
        return lm_eval_sample(record, where)
    return _checked(record.get("id"), record.get("prediction"), where, ("id", "prediction"))


def lm_eval_sample(record: Mapping[str, Any], where: str) -> tuple[int, str]:
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


def evaluate(document: MeraDocument | StreamedDocument, split: str, predictions: Mapping[int, str] | None) -> dict[str, Any]:
    """Score ``predictions`` (if any) and the blind baselines on the items of ``split``, going
    through the document item by item (once, and once more over every split with predictions).

    A prediction for another split is ignored and counted; one for an id that no split has is a
    usage error (the file is for another dataset).
    """
    if predictions is not None:
        unknown = set(predictions)
        for any_split in SPLITS:
            for item, _ in document.records(any_split):
                unknown.discard(item["meta"]["id"])
        if unknown:
            ordered = sorted(unknown)
            shown = ", ".join(str(i) for i in ordered[:5])
            raise UsageError(f"predictions name ids that are not in the dataset: {shown}{' ...' if len(ordered) > 5 else ''}")
    groups = GroupScoring(predictions, exact_match)  # minimal pairs (dataset.mera.groups), in the same pass
    result = _scored(groups.passing(document.records(split)), predictions)
    group_result = groups.result()
    if group_result is not None:  # group exact match beside exact match
        result["groups"] = group_result
    return result


def format_results(result: Mapping[str, Any], split: str) -> str:
    """A plain-text table: one row per question type, one column per scorer; the predictions' headline
    EM (MERA's task) first, then, labelled, the same predictions under the other rules."""
    columns = score_columns(result)
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
        lines.extend(f"{name}: {label}" for name, label in column_legend(columns))
        scores = result["predictions"]
        by_type = ", ".join(f"{name} {tally['wrong_synonyms']}" for name, tally in scores["question_types"].items())
        lines.append(f"wrong predictions that are synonyms of the gold word: {scores['overall']['wrong_synonyms']} ({by_type})")
        lines.append(
            f"missing predictions: {result['predictions']['missing']}; "
            f"ignored (other split): {result['predictions']['ignored_other_split']}"
        )
    if "groups" in result:
        lines.append(format_group_results(result["groups"]))
    return "\n".join(lines)


def _under_rule(scores: Mapping[str, Any], rule: str) -> dict[str, Any]:
    """A scorer's result seen through one of the other rules (its tallies' ``other_rules[rule]``)."""
    def view(tally: Mapping[str, Any]) -> dict[str, Any]:
        return {**tally, **tally["other_rules"][rule]}
    return {"overall": view(scores["overall"]),
            "question_types": {name: view(tally) for name, tally in scores["question_types"].items()}}


def score_columns(result: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """``(column name, scores)`` in print order: predictions (headline), its other rules, the baselines."""
    columns: list[tuple[str, Mapping[str, Any]]] = []
    if "predictions" in result:
        predictions = result["predictions"]
        columns.append(("predictions", predictions))
        if "other_rules" in predictions["overall"]:
            columns.extend((f"  {rule}", _under_rule(predictions, rule)) for rule in predictions["overall"]["other_rules"])
    columns.append(("majority/type", result["baselines"]["majority_per_question_type"]))
    columns.append(("majority/family", result["baselines"]["majority_per_family"]))
    return columns


def column_legend(columns: Sequence[tuple[str, Any]]) -> list[tuple[str, str]]:
    """What each predictions column is: the headline rule, then each other rule."""
    legend = []
    for name, _ in columns:
        rule = HEADLINE if name == "predictions" else name.strip()
        if rule in RULE_LABELS:
            legend.append((name.strip(), RULE_LABELS[rule]))
    return legend
