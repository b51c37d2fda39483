"""Exact-match evaluation (lm-eval's normalisation), per-type scores, blind baselines, predictions files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sample_outputs import write_sample_stage_outputs

from dataset.cli import main
from dataset.evaluation.evaluate import blind_baselines, exact_match, normalise_answer, score_predictions
from dataset.mera.document import read_export
from ruclevr.io import read_json

# (prediction, reference, equal?) under lm-eval's exact_match(ignore_case=True, ignore_punctuation=True):
# lower-case, delete string.punctuation (ASCII only), keep whitespace.
EDGE_CASES = [
    ("Нет.", "нет", True),
    ("нет", "нет", True),
    ("НЕТ", "нет", True),
    ("Да!", "да", True),
    (" нет", "нет", False),  # whitespace is kept
    ("нет ", "нет", False),
    ("нет\n", "нет", False),
    ("не т", "нет", False),
    ("н-е-т", "нет", True),  # ASCII hyphens are punctuation
    ("«нет»", "нет", False),  # Russian quotes are not ASCII punctuation
    ("нет…", "нет", False),  # nor is the ellipsis character
    ("нет...", "нет", True),
    ("3.", "3", True),
    ("3", "три", False),
    ("Жёлтый", "желтый", False),  # ё and е differ: the ё policy is applied when the data is made
    ("Жёлтый", "жёлтый", True),
    ("\"металл\"", "металл", True),
    ("нет\x00", "нет", True),  # NumPy unicode arrays, which lm-eval compares, drop trailing NULs
    ("", "", True),
]


@pytest.mark.parametrize("prediction, reference, equal", EDGE_CASES)
def test_normalisation_matches_lm_eval_exact_match(prediction: str, reference: str, equal: bool) -> None:
    assert exact_match(prediction, reference) is equal


def test_normalise_answer_lowercases_and_drops_ascii_punctuation_only() -> None:
    assert normalise_answer("Сколько: «ДВА», (3)!") == "сколько «два» 3"


def item(item_id: int, question_type: str, answer: str) -> dict:
    return {"outputs": answer, "meta": {"id": item_id, "question_type": question_type}}


# Hand-counted: binary answers да, да, нет; count answers 2, 2, 3, 4 (families as below).
ITEMS = [
    item(1, "binary", "да"), item(2, "binary", "да"), item(3, "binary", "нет"),
    item(4, "count", "2"), item(5, "count", "2"), item(6, "count", "3"), item(7, "count", "4"),
]
FAMILIES = {1: "exist/a", 2: "exist/a", 3: "exist/b", 4: "count/a", 5: "count/a", 6: "count/b", 7: "count/b"}


def test_all_correct_predictions_score_one_everywhere() -> None:
    scores = score_predictions(ITEMS, {i["meta"]["id"]: i["outputs"].upper() + "." for i in ITEMS})
    assert scores["overall"] == {"exact_match": 1.0, "correct": 7, "total": 7, "wrong_synonyms": 0}
    assert all(row["exact_match"] == 1.0 for row in scores["question_types"].values())


def test_per_type_figures_add_up_to_overall() -> None:
    predictions = {1: "да", 2: "нет", 3: "нет", 4: "2", 5: " 2", 7: "4"}  # id 6 missing
    scores = score_predictions(ITEMS, predictions)
    assert scores["question_types"]["binary"] == {"exact_match": 2 / 3, "correct": 2, "total": 3, "wrong_synonyms": 0}
    assert scores["question_types"]["count"] == {"exact_match": 2 / 4, "correct": 2, "total": 4, "wrong_synonyms": 0}
    assert scores["overall"] == {"exact_match": 4 / 7, "correct": 4, "total": 7, "wrong_synonyms": 0}
    assert scores["missing"] == 1
    rows = scores["question_types"].values()
    assert sum(r["correct"] for r in rows) == scores["overall"]["correct"]
    assert sum(r["total"] for r in rows) == scores["overall"]["total"]


def test_wrong_synonyms_of_the_gold_word_are_counted_per_type_and_still_wrong() -> None:
    items = [item(1, "shapes", "сфера"), item(2, "shapes", "куб"), item(3, "materials", "металл"),
             item(4, "size", "большой"), item(5, "colors", "красный")]
    predictions = {1: "Шар", 2: "сфера", 3: "металлический", 4: "крупный", 5: "красный"}
    scores = score_predictions(items, predictions)
    assert scores["overall"]["correct"] == 1  # exact match unchanged: a synonym is wrong
    assert {name: row["wrong_synonyms"] for name, row in scores["question_types"].items()} == {
        "colors": 0, "materials": 1, "shapes": 1, "size": 1,  # сфера for a cube is simply wrong
    }
    assert scores["overall"]["wrong_synonyms"] == 3


def test_blind_baselines_use_majority_per_type_and_per_family() -> None:
    baselines = blind_baselines(ITEMS, lambda i: FAMILIES[i["meta"]["id"]])
    per_type = baselines["majority_per_question_type"]
    # binary → да (2 of 3); count → 2 (2 of 4)
    assert per_type["question_types"]["binary"]["correct"] == 2
    assert per_type["question_types"]["count"]["correct"] == 2
    assert per_type["overall"]["exact_match"] == 4 / 7
    per_family = baselines["majority_per_family"]
    # exist/a → да (2/2), exist/b → нет (1/1), count/a → 2 (2/2), count/b → 3 (tie 3/4, alphabetical) (1/2)
    assert per_family["overall"]["correct"] == 6
    assert per_family["question_types"]["count"]["correct"] == 3


@pytest.fixture()
def exported(tmp_path: Path) -> Path:
    inputs = write_sample_stage_outputs(tmp_path / "in", n_scenes=8)
    out = tmp_path / "DATA" / "mera"
    assert main(["export", "--questions", str(inputs["questions"]), "--scenes", str(inputs["scenes"]),
                 "--out", str(out), "--shots", "2"]) == 0
    return out


def write_predictions(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def test_cli_scores_gold_answers_as_one_and_writes_results(exported, tmp_path, capsys) -> None:
    document = read_export(exported)
    records = [{"id": i["meta"]["id"], "prediction": i["outputs"].capitalize() + "."}
               for split in ("shots", "test") for i in document["data"][split]]
    predictions = write_predictions(tmp_path / "p.jsonl", records)
    results_path = tmp_path / "results.json"
    # --data accepts the build folder (DATA, holding mera/)
    assert main(["evaluate", "--data", str(exported.parent), "--predictions", str(predictions),
                 "--out", str(results_path)]) == 0
    printed = capsys.readouterr().out
    assert "overall" in printed and "majority/type" in printed
    results = read_json(results_path)
    scores = results["results"]["predictions"]
    assert scores["overall"]["exact_match"] == 1.0
    assert scores["overall"]["total"] == len(document["data"]["test"])
    assert scores["ignored_other_split"] == len(document["data"]["shots"])
    assert results["info"]["split"] == "test" and results["info"]["predictions"] == "p.jsonl"
    assert results["results"]["baselines"]["majority_per_question_type"]["overall"]["exact_match"] < 1.0


def test_cli_without_predictions_reports_baselines(exported, capsys) -> None:
    assert main(["evaluate", "--data", str(exported), "--split", "shots"]) == 0
    assert "exact match on split shots" in capsys.readouterr().out


@pytest.mark.parametrize(
    "content, message",
    [
        ('{"id": 1, "prediction": "да"}\n{"id": 1, "prediction": "нет"}\n', "line 2: id 1 appears twice"),
        ('{"id": 1, "prediction": "да"}\nnot json\n', "line 2: not JSON"),
        ('{"id": "1", "prediction": "да"}\n', "'id' must be an integer"),
        ('{"id": 1, "prediction": 3}\n', "'prediction' must be a string"),
        ('[1, "да"]\n', "expected an object"),
        ('{"id": 100000, "prediction": "да"}\n', "not in the dataset: 100000"),
        # MERA's submission format and lm-eval's logged samples
        ('{"data": {"test": [{"outputs": "да", "meta": {}}]}}', "data.test[0]: 'meta.id' must be an integer"),
        ('{"data": {"test": [{"outputs": 1, "meta": {"id": 1}}]}}', "'outputs' must be a string"),
        ('{"data": {"test": {"outputs": "да"}}}', "data.test of a MERA submission must be a list"),
        ('{"doc": {"meta": {"id": 1}}, "filtered_resps": []}\n', "'filtered_resps[0]' must be a string"),
        ('{"doc": {"meta": {}}, "filtered_resps": ["да"]}\n', "'doc.meta.id' must be an integer"),
    ],
)
def test_bad_predictions_file_is_one_line_exit_2(exported, tmp_path, capsys, content, message) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text(content, encoding="utf-8")
    assert main(["evaluate", "--data", str(exported), "--predictions", str(path)]) == 2
    error = capsys.readouterr().err
    assert message in error and error.count("\n") == 1


def test_missing_files_are_usage_errors(exported, tmp_path, capsys) -> None:
    assert main(["evaluate", "--data", str(exported), "--predictions", str(tmp_path / "none.jsonl")]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["evaluate", "--data", str(tmp_path / "nowhere")]) == 2
    assert "no exported dataset" in capsys.readouterr().err


def test_meras_submission_and_lm_eval_samples_score_like_json_lines(exported, tmp_path) -> None:
    test = read_export(exported)["data"]["test"]
    answers = {item["meta"]["id"]: (item["outputs"] if n % 2 else "неверно") for n, item in enumerate(test)}
    lines = write_predictions(tmp_path / "p.jsonl", [{"id": i, "prediction": p} for i, p in answers.items()])
    submission = tmp_path / "ruCLEVR.json"
    submission.write_text(json.dumps({"data": {"test": [{"outputs": p, "meta": {"id": i}} for i, p in answers.items()]}},
                                     ensure_ascii=False, indent=2), encoding="utf-8")
    samples = write_predictions(tmp_path / "samples_ruclevr_2026.jsonl", [
        {"doc_id": n, "doc": item, "target": item["outputs"], "resps": [[answers[item["meta"]["id"]]]],
         "filtered_resps": [answers[item["meta"]["id"]]], "exact_match": 0.0}
        for n, item in enumerate(test)])
    scored = []
    for path in (lines, submission, samples):
        assert main(["evaluate", "--data", str(exported), "--predictions", str(path), "--out", str(tmp_path / "r.json")]) == 0
        scored.append(read_json(tmp_path / "r.json")["results"]["predictions"])
    assert scored[0] == scored[1] == scored[2]
    assert [row["exact_match"] for row in scored[0]["items"]] == [n % 2 for n in range(len(test))]

