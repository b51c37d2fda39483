"""MERA's human-baseline rule (the majority vote: at least 3 of 5 agree; unanswered items wrong), plurality
beside it, and the answers in crowd-kit's long form."""

from __future__ import annotations

import csv
from pathlib import Path

from annotate_helpers import load, read_dataset, small_export

from dataset.annotate.agreement import MERA_MIN_VOTES, Majority, majority, mera_human_baseline, mera_majority
from dataset.annotate.report import review_summary
from dataset.publish import render_card_section


def item(item_id: int, kind: str, gold: str) -> dict:
    return {"meta": {"id": item_id, "question_type": kind}, "outputs": gold}


def test_a_2_1_1_1_crowd_has_a_plurality_and_no_majority_under_meras_rule() -> None:
    crowd = ["куб", "куб", "сфера", "цилиндр", "шар"]
    assert majority(crowd).answer == "куб"
    assert mera_majority(crowd) == Majority(None, 2, 5, ())
    assert mera_majority(["куб", "куб", "куб", "сфера", "шар"]).answer == "куб" and MERA_MIN_VOTES == 3
    assert mera_majority(["да", "да"]).answer is None  # two people cannot reach 3 of 5


def test_meras_baseline_counts_every_item_and_the_unanswered_as_wrong() -> None:
    items = [item(1, "binary", "да"), item(2, "shapes", "куб"), item(3, "count", "3"), item(4, "colors", "синий")]
    answers = {1: ["да"] * 3 + ["нет"] * 2, 2: ["куб", "куб", "сфера", "цилиндр", "шар"], 3: ["3"] * 5}  # 4: none
    result = mera_human_baseline(items, answers)
    assert result["overall"] == {"exact_match": 0.5, "correct": 2, "total": 4, "wrong_synonyms": 0}
    assert result["no_majority"] == 2 and result["question_types"]["colors"]["total"] == 1
    assert "at least 3" in result["rule"]
    assert "at least 4 people" in mera_human_baseline(items, answers, min_votes=4)["rule"]


def write_crowd_tsv(path: Path, rows: list[tuple[int, str, str]]) -> None:
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(["task_id", "image", "question", "annotator", "answer"])
        writer.writerows([item_id, "images/x.png", "?", annotator, text] for item_id, annotator, text in rows)


def test_import_reports_meras_rule_as_the_baseline_beside_the_plurality(tmp_path, run_captured) -> None:
    export = small_export(tmp_path)
    test = read_dataset(export)["data"]["test"]
    first, second = test[0], test[1]
    wrong = "нет" if first["outputs"] != "нет" else "да"
    planted = [first["outputs"], first["outputs"], wrong + "1", wrong + "2", wrong + "3"]  # 2-1-1-1: gold has a plurality
    rows = [(first["meta"]["id"], f"ann{n}", text) for n, text in enumerate(planted)]
    rows += [(second["meta"]["id"], f"ann{n}", second["outputs"].upper()) for n in range(3)]  # 3 of 3 agree: a majority
    write_crowd_tsv(tmp_path / "crowd.tsv", rows)
    status, out, err = run_captured("dataset", "annotate", "import", "--data", export, "--answers",
                                    tmp_path / "crowd.tsv", "--out", tmp_path / "report")
    assert status == 0, err
    report = load(tmp_path / "report" / "human.json")
    # The report's names say what they are: the human baseline is MERA's rule, the plurality is labelled so.
    mera, plurality = report["human_baseline"], report["aggregated_baseline"]
    assert "human_baseline_mera" not in report and plurality["method"] == "plurality"
    assert plurality["overall"]["correct"] == 2 and plurality["overall"]["total"] == 2  # answered items only
    assert mera["overall"]["correct"] == 1 and mera["overall"]["total"] == len(test)  # every item, unanswered wrong
    assert mera["no_majority"] == len(test) - 1
    # The rule is printed and written as the report records it (one home for its numbers).
    assert "at least 3 people give (of 5)" in mera["rule"] and "unanswered, counts as wrong" in mera["rule"]
    assert f"human baseline ({mera['rule']}) {1 / len(test):.4f}" in out
    assert f"beside it, plurality exact match {1:.4f} on 2 answered items" in out
    section = (tmp_path / "report" / "human_baseline.md").read_text(encoding="utf-8")
    assert "by MERA's majority vote: an answer at least 3 people give" in section  # the card escapes the brackets
    assert f"counts as wrong ({len(test) - 1} items had no majority)" in section
    assert "Human baseline (MERA's rule)" in section and "| human baseline (MERA's rule, every item) |" in section
    # MERA's rule scores every item: each question type has its row, those nobody answered too
    for name, row in mera["question_types"].items():
        answered = plurality["question_types"].get(name)
        beside = f"{answered['total']} | {answered['exact_match']:.3f}" if answered else "0 | —"
        assert f"| {name} | {row['total']} | {row['exact_match']:.3f} | {beside} |" in section, name
    assert set(mera["question_types"]) - set(plurality["question_types"])  # the export has unanswered types
    assert "| plurality exact match (answered items) |" in section and '\\|' not in section
    # A filtered export made by an earlier import (MERA's figure under human_baseline_mera, the plurality's
    # under human_baseline) gives the same card section; one from before MERA's rule says it lacks it.
    summary = review_summary(report)
    earlier = dict(summary, human_baseline_mera=mera, human_baseline={k: v for k, v in plurality.items() if k != "method"})
    del earlier["aggregated_baseline"]
    assert render_card_section(earlier) == section
    oldest = {key: value for key, value in earlier.items() if key != "human_baseline_mera"}
    old_section = render_card_section(oldest)
    assert "Human baseline (MERA's rule)" not in old_section and "plurality answer was compared" in old_section
    assert f"| **overall** | 2 | {1:.3f} |" in old_section
    with open(tmp_path / "report" / "answers_crowd_kit.csv", encoding="utf-8", newline="") as handle:
        long_form = list(csv.DictReader(handle))
    assert len(long_form) == len(rows) and set(long_form[0]) == {"task", "worker", "label"}
    assert {(int(r["task"]), r["worker"], r["label"]) for r in long_form} == {
        (item_id, annotator, text.lower()) for item_id, annotator, text in rows}
