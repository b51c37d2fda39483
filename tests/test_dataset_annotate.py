"""dataset annotate: normalisation, majority and ties, baseline, alpha, controls; export and the
three answer formats; bad input; the filtered export and its card section."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
from annotate_helpers import hand_alpha, hand_figures, load, planned_answers, read_dataset, small_export, write_dataset
from sample_outputs import mera_export_problems

from dataset.annotate.agreement import (
    Answer,
    Majority,
    aggregated_baseline,
    annotator_records,
    krippendorff_alpha,
    majority,
    normalise,
)
from dataset.mera.document import locate_document


@pytest.fixture()
def export(tmp_path: Path) -> Path:
    return small_export(tmp_path)


# -- unit: normalisation, majority, tie, baseline, alpha, controls --------------------------------


def test_normalisation_ignores_case_spaces_punctuation_and_yo_by_the_policy() -> None:
    assert normalise("  Зелёный.  ") == "зеленый"
    assert normalise("ДА") == "да" and normalise("\tнет\n") == "нет"
    assert normalise("три  предмета") == "три предмета"
    assert normalise("Зелёный", "yo") == "зелёный"
    assert normalise("«да»") == "«да»"  # non-ASCII punctuation is kept, as the exact-match scorer keeps it


def test_majority_and_the_tie_rule() -> None:
    assert majority(["да", "да", "нет"]) == Majority("да", 2, 3, ())
    assert majority(["да", "нет"]) == Majority(None, 1, 2, ("да", "нет"))
    assert majority(["3", "4", "5", "3", "4"]) == Majority(None, 2, 5, ("3", "4"))
    assert majority([]) == Majority(None, 0, 0, ())
    assert majority(["куб"]).agreement == 1.0 and majority(["да", "да", "нет"]).agreement == pytest.approx(2 / 3)


def test_human_baseline_per_type_counts_ties_as_wrong_and_skips_unanswered_items() -> None:
    def item(item_id: int, kind: str, gold: str) -> dict:
        return {"meta": {"id": item_id, "question_type": kind}, "outputs": gold}

    items = [item(1, "binary", "да"), item(2, "binary", "нет"), item(3, "count", "3"), item(4, "count", "2"),
             item(5, "colors", "синий")]
    winners = {1: majority(["да", "да", "нет"]), 2: majority(["да", "нет"]), 3: majority(["3"]),
               4: majority(["1", "1", "2"])}  # item 5: nobody answered
    result = aggregated_baseline(items, winners)
    assert result["overall"] == {"exact_match": 0.5, "correct": 2, "total": 4, "wrong_synonyms": 0}
    assert result["question_types"]["binary"] == {"exact_match": 0.5, "correct": 1, "total": 2, "wrong_synonyms": 0}
    assert result["question_types"]["count"] == {"exact_match": 0.5, "correct": 1, "total": 2, "wrong_synonyms": 0}
    assert "colors" not in result["question_types"] and result["ties"] == 1
    # A majority naming the value by another word («шар» for «сфера») stays wrong and is counted as a synonym.
    shapes = aggregated_baseline([item(6, "shapes", "сфера")], {6: majority(["шар", "шар", "сфера"])})
    assert shapes["overall"] == {"exact_match": 0.0, "correct": 0, "total": 1, "wrong_synonyms": 1}


def test_alpha_on_a_table_worked_by_hand() -> None:
    # Two coders, four items: (a, a), (a, b), (b, b), (b, b); a third coder answered one more item alone.
    # Coincidences: o_aa = 2, o_ab = o_ba = 1, o_bb = 4; n_a = 3, n_b = 5, n = 8.
    # alpha = 1 - (n - 1) * (o_ab + o_ba) / (2 * n_a * n_b) = 1 - 7 * 2 / 30 = 8 / 15.
    table = {1: {"x": "a", "y": "a"}, 2: {"x": "a", "y": "b"}, 3: {"x": "b", "y": "b"}, 4: {"x": "b", "y": "b"},
             5: {"z": "a"}}
    assert krippendorff_alpha(table, ["x", "y", "z"]) == pytest.approx(8 / 15)
    assert hand_alpha([list(row.values()) for row in table.values()]) == pytest.approx(8 / 15)
    # Perfect agreement is 1; a single value or no pairable item leaves alpha undefined.
    assert krippendorff_alpha({1: {"x": "a", "y": "a"}, 2: {"x": "b", "y": "b"}}, ["x", "y"]) == pytest.approx(1.0)
    assert krippendorff_alpha({1: {"x": "a", "y": "a"}}, ["x", "y"]) is None
    assert krippendorff_alpha({1: {"x": "a"}, 2: {"y": "b"}}, ["x", "y"]) is None


def test_an_annotator_with_a_wrong_control_answer_is_flagged() -> None:
    answers = [Answer("good", 1, "Куб", "f"), Answer("good", 2, "да", "f"), Answer("good", 9, "нет", "f"),
               Answer("bad", 1, "сфера", "f"), Answer("bad", 2, " Да ", "f")]
    records = annotator_records(answers, {1: "куб", 2: "да"})
    assert (records["good"].items, records["good"].controls, records["good"].control_accuracy) == (1, 2, 1.0)
    assert (records["bad"].items, records["bad"].controls, records["bad"].control_accuracy) == (0, 2, 0.5)
    assert records["bad"].below(0.8) and not records["good"].below(0.8)


# -- export ----------------------------------------------------------------------------------------


def test_export_hides_gold_mixes_controls_and_is_reproducible(export, tmp_path, run_captured) -> None:
    argv = ["annotate", "export", "--data", str(export), "--overlap", "2", "--annotators", "3", "--controls", "2",
            "--seed", "5"]
    assert run_captured("dataset", *argv, "--out", tmp_path / "a")[0] == 0
    assert run_captured("dataset", *argv, "--out", tmp_path / "b")[0] == 0
    document = read_dataset(export)
    test_ids = {item["meta"]["id"] for item in document["data"]["test"]}
    shot_gold = {item["meta"]["id"]: item["outputs"] for item in document["data"]["shots"]}
    a, b = tmp_path / "a", tmp_path / "b"
    for name in ("label_studio/tasks.json", "label_studio/config.xml", "crowd.tsv", "assignments.tsv", "annotate.html"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    tasks = load(a / "label_studio" / "tasks.json")
    assert {task["data"]["ruclevr_id"] for task in tasks} == test_ids | set(shot_gold)
    assert all(set(task["data"]) == {"image", "question", "ruclevr_id"} for task in tasks)
    assert all(task["data"]["image"].startswith("/data/local-files/?d=images/") for task in tasks)
    assert all((a / task["data"]["image"].split("?d=")[1]).is_file() for task in tasks)
    with open(a / "crowd.tsv", encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    for row in rows:
        known = row["known_answer"]
        assert (row["control"] == "1") == (int(row["task_id"]) in shot_gold)
        assert known == (shot_gold[int(row["task_id"])] if row["control"] == "1" else "")
    # Each item goes to exactly 2 of the 3 annotators; every annotator has both controls.
    with open(a / "assignments.tsv", encoding="utf-8", newline="") as handle:
        assignment = list(csv.DictReader(handle, delimiter="\t"))
    per_item: dict[int, set[str]] = {}
    for row in assignment:
        per_item.setdefault(int(row["task_id"]), set()).add(row["annotator"])
    assert all(len(per_item[i]) == 2 for i in test_ids) and all(len(per_item[i]) == 3 for i in shot_gold)
    # Gold answers of the test items appear nowhere in what annotators get (only in crowd.tsv for controls).
    page = (a / "annotate.html").read_text(encoding="utf-8")
    assert "outputs" not in page and "known_answer" not in page
    # One page per annotator holds exactly that annotator's tasks, in a single slot.
    assert run_captured("dataset", *argv, "--out", tmp_path / "p", "--page-per-annotator")[0] == 0
    for name in ("A01", "A02", "A03"):
        page = (tmp_path / "p" / "pages" / f"{name}.html").read_text(encoding="utf-8")
        assert {int(i) for i in re.findall(r'class="task" data-id="(\d+)"', page)} == \
            {int(row["task_id"]) for row in assignment if row["annotator"] == name}
        assert re.findall(r'<option value="(\w+)"', page) == [name]
    assert (tmp_path / "p" / "annotate.html").read_bytes() == (a / "annotate.html").read_bytes()
    # Another seed gives another order.
    assert run_captured("dataset", *argv[:-1], "6", "--out", tmp_path / "c")[0] == 0
    assert (tmp_path / "c" / "crowd.tsv").read_bytes() != (a / "crowd.tsv").read_bytes()


# -- the three formats round-trip to the figures worked out by hand ----------------------------------


def write_crowd_tsv(path: Path, plan: dict[str, dict[int, str]]) -> None:
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(["task_id", "image", "question", "annotator", "answer"])
        for annotator, answers in plan.items():
            for item_id, text in answers.items():
                writer.writerow([item_id, "images/x.png", "?", annotator, text])


def write_page_json(path: Path, annotator: str, answers: dict[int, str]) -> None:
    record = {"format": "ruclevr-annotate/1", "annotator": annotator, "slot": "A01",
              "answers": [{"id": item_id, "answer": text} for item_id, text in answers.items()]}
    path.write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")


def check_figures(report: dict, expected: dict) -> None:
    assert report["aggregated_baseline"]["overall"]["exact_match"] == pytest.approx(expected["exact_match"])
    assert {kind: row["exact_match"] for kind, row in report["aggregated_baseline"]["question_types"].items()} == \
        pytest.approx(expected["per_type"])
    assert report["agreement"]["krippendorff_alpha"]["overall"] == pytest.approx(expected["alpha"])
    assert [record["id"] for record in report["disputed"]] == expected["disputed"]


def test_crowd_tsv_and_page_json_give_the_figures_worked_out_by_hand(export, tmp_path, run_captured) -> None:
    document = read_dataset(export)
    plan = planned_answers(document)
    expected = hand_figures(document, plan)
    assert 0 < expected["exact_match"] < 1 and expected["disputed"]
    write_crowd_tsv(tmp_path / "crowd.tsv", plan)
    for name, answers in plan.items():
        write_page_json(tmp_path / f"{name}.json", name, answers)
    reports = {}
    for kind, files in (("tsv", [tmp_path / "crowd.tsv"]), ("page", [tmp_path / f"{n}.json" for n in plan])):
        status, out, err = run_captured("dataset", "annotate", "import", "--data", export, "--answers", *files,
                                        "--out", tmp_path / kind)
        assert status == 0, err
        assert "plurality exact match" in out
        reports[kind] = load(tmp_path / kind / "human.json")
        check_figures(reports[kind], expected)
    assert reports["tsv"]["aggregated_baseline"] == reports["page"]["aggregated_baseline"]
    report = reports["tsv"]
    assert report["flagged_annotators"] == ["ann3"]
    ann3 = next(a for a in report["annotators"] if a["annotator"] == "ann3")
    assert ann3["control_accuracy"] == 0.0 and ann3["controls"] == len(document["data"]["shots"])
    tie = report["disputed"][0]
    assert tie["majority"] is None and tie["reasons"][0].startswith("tie")
    assert tie["image"] == document["data"]["test"][0]["inputs"]["image"]
    assert {a["annotator"] for a in tie["answers"]} == {"ann1", "ann2", "ann3"}
    assert report["overlap"] == {"min": 3, "max": 3, "mean": 3.0}
    # Leaving out the flagged annotator changes the figures to those of the other two.
    status, _, _ = run_captured("dataset", "annotate", "import", "--data", export, "--answers", tmp_path / "crowd.tsv",
                                "--out", tmp_path / "excluded", "--exclude-flagged")
    assert status == 0
    two = {name: plan[name] for name in ("ann1", "ann2")}
    check_figures(load(tmp_path / "excluded" / "human.json"), hand_figures(document, two))


def test_disputed_page_escapes_text_and_shows_the_images(export, tmp_path, run_captured) -> None:
    document = read_dataset(export)
    item = document["data"]["test"][0]
    item["inputs"]["question"] = "Что это? <script>window.injected = 1</script>"
    write_dataset(export, document)
    write_page_json(tmp_path / "x.json", "x", {item["meta"]["id"]: "<b>куб</b>"})
    assert run_captured("dataset", "annotate", "import", "--data", export, "--answers", tmp_path / "x.json",
                        "--out", tmp_path / "r")[0] == 0
    page = (tmp_path / "r" / "disputed.html").read_text(encoding="utf-8")
    assert "<script>" not in page and "&lt;script&gt;" in page and "&lt;b&gt;куб&lt;/b&gt;" in page
    image = page.split('<img src="')[1].split('"')[0]
    assert (tmp_path / "r" / image).resolve() == (export / item["inputs"]["image"]).resolve()


def test_filtered_export_drops_disputed_items_or_follows_the_jglue_rule(export, tmp_path, run_captured) -> None:
    from dataset.publish.card import human_review_section

    document = read_dataset(export)
    plan = planned_answers(document)
    write_crowd_tsv(tmp_path / "crowd.tsv", plan)
    base = ["annotate", "import", "--data", str(export), "--answers", str(tmp_path / "crowd.tsv")]
    assert run_captured("dataset", *base, "--out", tmp_path / "r", "--write-filtered", tmp_path / "f")[0] == 0
    assert mera_export_problems(locate_document(tmp_path / "f")) == []
    kept = read_dataset(tmp_path / "f")
    disputed = hand_figures(document, plan)["disputed"]
    assert len(kept["data"]["test"]) == len(document["data"]["test"]) - len(disputed)
    assert kept["data"]["shots"] == document["data"]["shots"]
    assert disputed[0] not in {record["id_before_review"] for record in kept["provenance"]}
    section = human_review_section(kept["info"])
    assert section.startswith("## Human baseline") and f"{len(disputed)} of {len(document['data']['test'])} items removed" \
        in section and "tie: 1" in section
    assert (tmp_path / "r" / "human_baseline.md").read_text(encoding="utf-8") == section
    assert run_captured("dataset", "hf", "--mera", str(tmp_path / "f"), "--out", str(tmp_path / "hf"))[0] == 0
    card = (tmp_path / "hf" / "README.md").read_text(encoding="utf-8")
    assert section in card and card.index("## Human baseline") < card.index("## Licence")
    # JGLUE's rule with M = 2 of the 3 answers: item 0 (one correct) and items 1-3 (two correct) -> only item 0 goes.
    assert run_captured("dataset", *base, "--out", tmp_path / "r2", "--write-filtered", tmp_path / "g", "--jglue", "2")[0] == 0
    assert len(read_dataset(tmp_path / "g")["data"]["test"]) == len(document["data"]["test"]) - 1
    assert run_captured("dataset", *base, "--out", tmp_path / "r3", "--write-filtered", tmp_path / "h", "--jglue", "3")[0] == 0
    assert len(read_dataset(tmp_path / "h")["data"]["test"]) == len(document["data"]["test"]) - 4


# -- bad input -----------------------------------------------------------------------------------


def test_bad_answers_end_with_one_line_and_status_2(export, tmp_path, run_captured) -> None:
    write_page_json(tmp_path / "unknown.json", "x", {99999: "да"})
    write_page_json(tmp_path / "one.json", "same", {1: "да"})
    write_page_json(tmp_path / "two.json", "same", {2: "да"})
    write_crowd_tsv(tmp_path / "twice.tsv", {"w1": {1: "да"}})
    with open(tmp_path / "twice.tsv", "a", encoding="utf-8") as handle:
        handle.write("1\tx\t?\tw1\tнет\n")
    (tmp_path / "other.json").write_text(json.dumps({"data": {"shots": [], "test": []}}), encoding="utf-8")
    (tmp_path / "broken.json").write_text("{not json", encoding="utf-8")
    (tmp_path / "columns.tsv").write_text("id\tvalue\n1\tда\n", encoding="utf-8")
    cases = (
        ([str(tmp_path / "unknown.json")], "not in the dataset: 99999"),
        ([str(tmp_path / "one.json"), str(tmp_path / "two.json")], "annotator 'same' also saved"),
        ([str(tmp_path / "twice.tsv")], "answered task 1 twice"),
        ([str(locate_document(export) / "test.json")], "is not a Label Studio JSON export, the annotate page's JSON or a crowd TSV"),
        ([str(tmp_path / "other.json")], "is not a Label Studio JSON export"),
        ([str(tmp_path / "broken.json")], "is not valid JSON"),
        ([str(tmp_path / "columns.tsv")], "missing task_id, annotator, answer"),
        ([str(tmp_path / "missing.json")], "does not exist"),
    )
    for files, message in cases:
        status, _, err = run_captured("dataset", "annotate", "import", "--data", export, "--answers", *files,
                                      "--out", tmp_path / "r")
        assert status == 2 and message in err and err.count("\n") == 1 and "Traceback" not in err, (files, err)
    assert not (tmp_path / "r").exists()
    for argv, message in (
        (["export", "--data", str(export), "--out", str(tmp_path / "t"), "--overlap", "4", "--annotators", "2"],
         "needs at least as many --annotators"),
        (["export", "--data", str(export), "--out", str(tmp_path / "t"), "--controls", "50"], "only 2 items"),
        (["export", "--data", str(export), "--out", str(tmp_path / "t"), "--control-ids", "5"], "not items outside"),
        (["import", "--data", str(export), "--answers", str(tmp_path / "one.json"), "--out", str(tmp_path / "r"),
          "--jglue", "2"], "pass --write-filtered"),
        (["import", "--data", str(export), "--answers", str(tmp_path / "one.json"), "--out", str(tmp_path / "r"),
          "--write-filtered", str(export)], "is the dataset's own folder"),
        (["import", "--data", str(export), "--answers", str(tmp_path / "one.json"), "--out", str(tmp_path / "r"),
          "--write-filtered", str(tmp_path / "one.json" / "sub")], "cannot write to --write-filtered"),
    ):
        status, _, err = run_captured("dataset", "annotate", *argv)
        assert status == 2 and message in err and err.count("\n") == 1, (argv, err)
    assert not (tmp_path / "t").exists() and not (tmp_path / "r").exists()


def test_an_image_path_leading_outside_the_dataset_is_refused(export, tmp_path, run_captured) -> None:
    document = read_dataset(export)
    document["data"]["test"][0]["inputs"]["image"] = "../src/render/images/ruclevr_000000.png"
    write_dataset(export, document)
    status, _, err = run_captured("dataset", "annotate", "export", "--data", str(export), "--out", str(tmp_path / "t"))
    assert status == 2 and "leads out of its folder" in err and err.count("\n") == 1
    assert not (tmp_path / "t").exists()
    write_page_json(tmp_path / "a.json", "a", {document["data"]["test"][0]["meta"]["id"]: "999"})
    status, _, err = run_captured("dataset", "annotate", "import", "--data", export, "--answers", tmp_path / "a.json",
                                  "--out", tmp_path / "r")
    assert status == 2 and "leads out of its folder" in err and not (tmp_path / "r").exists()


def test_label_studio_export_reader_takes_users_by_id_or_email_and_skips_cancelled_and_blank(tmp_path) -> None:
    from dataset.annotate.answers import read_answers

    def annotation(user, text, cancelled=False):
        return {"id": 1, "completed_by": user, "was_cancelled": cancelled,
                "result": [{"from_name": "answer", "to_name": "image", "type": "textarea", "value": {"text": [text]}}]}

    export = [{"id": 1, "data": {"image": "/data/local-files/?d=images/a.png", "question": "?", "ruclevr_id": 7},
               "annotations": [annotation(3, "Нет"), annotation({"id": 4, "email": "w@example.org"}, "да"),
                               annotation(5, "куб", cancelled=True), annotation(6, "  ")]},
              {"id": 2, "data": {"image": "x", "question": "?", "ruclevr_id": "8"}, "annotations": []}]
    (tmp_path / "ls.json").write_text(json.dumps(export, ensure_ascii=False), encoding="utf-8")
    assert read_answers([tmp_path / "ls.json"]) == [Answer("label-studio:3", 7, "Нет", str(tmp_path / "ls.json")),
                                                   Answer("label-studio:w@example.org", 7, "да", str(tmp_path / "ls.json"))]
    (tmp_path / "bom.tsv").write_text("\ufefftask_id\tannotator\tanswer\n7\tw1\tда\n7\tw2\t\n", encoding="utf-8")
    assert read_answers([tmp_path / "bom.tsv"]) == [Answer("w1", 7, "да", str(tmp_path / "bom.tsv"))]


def test_min_agreement_disputes_items_with_a_split_vote(export, tmp_path, run_captured) -> None:
    document = read_dataset(export)
    write_crowd_tsv(tmp_path / "crowd.tsv", planned_answers(document))
    assert run_captured("dataset", "annotate", "import", "--data", export, "--answers", tmp_path / "crowd.tsv",
                        "--out", tmp_path / "r", "--min-agreement", "0.9")[0] == 0
    disputed = load(tmp_path / "r" / "human.json")["disputed"]
    test_ids = [item["meta"]["id"] for item in document["data"]["test"]]
    assert [record["id"] for record in disputed] == test_ids[:4]  # the tie, then three 2-of-3 majorities
    assert disputed[1]["reasons"] == ["low agreement: 0.67 < 0.9"] and disputed[1]["majority"] == \
        document["data"]["test"][1]["outputs"]
