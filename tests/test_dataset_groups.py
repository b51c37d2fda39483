"""Groups of linked items (minimal pairs): the export keeps each group whole in one split, and
``dataset evaluate`` scores group exact match beside exact match, overall and per question type."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from helpers import run_stage
from sample_outputs import write_sample_stage_outputs

from dataset.evaluation.evaluate import evaluate, exact_match, read_predictions
from dataset.mera.document import read_export, stream_document
from dataset.mera.export import ExportSettings, export_dataset
from ruclevr.io import atomic_write_json, read_json


def grouped_outputs(folder: Path, ungrouped_scenes: int, n_scenes: int = 12) -> dict[str, Path]:
    """The sample stage outputs, with the questions of scenes 2k and 2k + 1 (from ``ungrouped_scenes`` on)
    linked in groups by question number, as ``dataset pairs`` links a question on a scene and its re-render."""
    paths = write_sample_stage_outputs(folder, n_scenes=n_scenes)
    document = read_json(paths["questions"])
    for question in document["questions"]:
        index = int(question["image_index"])
        if index >= ungrouped_scenes and question["question_index"] != 99:
            first = index - (index - ungrouped_scenes) % 2
            variant = "original" if index == first else "recolour"
            question["group"] = {"id": f"scene{first}#{question['question_index']}", "variant": variant}
    atomic_write_json(paths["questions"], document)
    return paths


def exported(paths: dict[str, Path], out: Path, shots: int) -> dict:
    export_dataset(paths["questions"], paths["scenes"], out, ExportSettings(shots=shots, seed=4))
    return read_export(out)


def input_group_sizes(paths: dict[str, Path]) -> Counter[str]:
    return Counter(q["group"]["id"] for q in read_json(paths["questions"])["questions"] if "group" in q)


@pytest.mark.parametrize("ungrouped_scenes", [4, 0], ids=["shots-from-ungrouped", "all-grouped"])
def test_every_group_lies_whole_in_one_split(tmp_path, ungrouped_scenes) -> None:
    paths = grouped_outputs(tmp_path / "in", ungrouped_scenes)
    document = exported(paths, tmp_path / "mera", shots=3)
    provenance = {record["id"]: record for record in document["provenance"]}
    splits_of: dict[int, set[str]] = {}
    test_sizes: Counter[int] = Counter()
    names: dict[int, str] = {}
    for split in ("shots", "test"):
        for item in document["data"][split]:
            group_id = item["meta"].get("group_id")
            if group_id is None:
                continue
            record = provenance[item["meta"]["id"]]
            assert item["meta"]["change"] == record["group"]["variant"]
            assert names.setdefault(group_id, record["group"]["id"]) == record["group"]["id"], "one number, one group"
            splits_of.setdefault(group_id, set()).add(split)
            test_sizes[group_id] += split == "test"
    assert splits_of and all(len(splits) == 1 for splits in splits_of.values())
    sizes = input_group_sizes(paths)
    for group_id, count in test_sizes.items():
        if count:
            assert count == sizes[names[group_id]], f"group {names[group_id]} is exported whole"
    shot_groups = [item["meta"].get("group_id") for item in document["data"]["shots"]]
    if ungrouped_scenes:
        assert shot_groups == [None] * 3, "shots come from ungrouped questions while they are enough"
    else:
        assert all(group is not None for group in shot_groups)
        assert document["info"]["counts"]["dropped_incomplete_groups"] > 0, "a shot's group-mates leave test"


def write_predictions(path: Path, answers: dict[int, str]) -> Path:
    path.write_text("".join(json.dumps({"id": i, "prediction": a}, ensure_ascii=False) + "\n" for i, a in answers.items()),
                    encoding="utf-8")
    return path


def test_group_exact_match_needs_every_item_of_a_group_right(tmp_path, capsys) -> None:
    paths = grouped_outputs(tmp_path / "in", ungrouped_scenes=2)
    out = tmp_path / "mera"
    document = exported(paths, out, shots=2)
    test = document["data"]["test"]
    gold = {item["meta"]["id"]: item["outputs"] for item in test}
    grouped = [item for item in test if "group_id" in item["meta"]]
    n_groups = len({item["meta"]["group_id"] for item in grouped})
    assert n_groups >= 4

    streamed = stream_document(out)
    perfect = evaluate(streamed, "test", read_predictions(write_predictions(tmp_path / "gold.jsonl", gold)))["groups"]
    assert perfect["overall"]["predictions"] == {"exact_match": 1.0, "group_exact_match": 1.0}
    assert perfect["overall"]["groups"] == n_groups and perfect["overall"]["items"] == len(grouped)

    wrong = grouped[0]
    one_off = {**gold, wrong["meta"]["id"]: "неверно"}
    scores = evaluate(streamed, "test", read_predictions(write_predictions(tmp_path / "one_off.jsonl", one_off)))["groups"]
    assert scores["overall"]["predictions"]["exact_match"] == pytest.approx((len(grouped) - 1) / len(grouped))
    assert scores["overall"]["predictions"]["group_exact_match"] == pytest.approx((n_groups - 1) / n_groups)
    row = scores["question_types"][wrong["meta"]["question_type"]]
    in_type = {item["meta"]["group_id"] for item in grouped if item["meta"]["question_type"] == wrong["meta"]["question_type"]}
    assert row["groups"] == len(in_type)
    assert row["predictions"]["group_exact_match"] == pytest.approx((len(in_type) - 1) / len(in_type))

    # The per-type majority answer set, made by hand from the split, scored as the column beside.
    per_type: dict[str, Counter[str]] = {}
    for item in test:
        per_type.setdefault(item["meta"]["question_type"], Counter())[item["outputs"]] += 1
    majority = {name: sorted(counts.items(), key=lambda pair: (-pair[1], pair[0]))[0][0] for name, counts in per_type.items()}
    answers = {item["meta"]["id"]: majority[item["meta"]["question_type"]] for item in test}
    by_group: dict[int, list[bool]] = {}
    for item in grouped:
        by_group.setdefault(item["meta"]["group_id"], []).append(exact_match(answers[item["meta"]["id"]], item["outputs"]))
    expected = sum(all(rights) for rights in by_group.values()) / n_groups
    result = evaluate(streamed, "test", read_predictions(write_predictions(tmp_path / "majority.jsonl", answers)))
    assert result["groups"]["overall"]["predictions"]["group_exact_match"] == pytest.approx(expected)
    assert result["groups"]["overall"]["majority_per_question_type"]["group_exact_match"] == pytest.approx(expected)

    assert run_stage("dataset", "evaluate", "--data", str(out), "--predictions", str(tmp_path / "one_off.jsonl")) == 0
    printed = capsys.readouterr().out
    assert "group EM" in printed and f"{(n_groups - 1) / n_groups:.4f}" in printed


def test_an_export_without_groups_reports_no_group_scores(tmp_path) -> None:
    paths = write_sample_stage_outputs(tmp_path / "in", n_scenes=6)
    out = tmp_path / "mera"
    document = exported(paths, out, shots=2)
    assert all("group_id" not in item["meta"] for split in ("shots", "test") for item in document["data"][split])
    assert "dropped_incomplete_groups" not in document["info"]["counts"]
    assert "groups" not in evaluate(stream_document(out), "test", None)


def test_the_hugging_face_copy_keeps_each_items_group_id(tmp_path) -> None:
    import pyarrow.parquet as pq

    from dataset.cli import main

    paths = grouped_outputs(tmp_path / "in", ungrouped_scenes=4)
    document = exported(paths, tmp_path / "mera", shots=2)
    assert main(["hf", "--mera", str(tmp_path / "mera"), "--out", str(tmp_path / "hf")]) == 0
    for split in ("shots", "test"):
        files = sorted((tmp_path / "hf" / "data").glob(f"{split}-*.parquet"))
        rows = [row for path in files for row in pq.read_table(path).to_pylist()]
        expected = [(item["meta"]["id"], item["meta"].get("group_id")) for item in document["data"][split]]
        assert [(row["meta"]["id"], row["meta"]["group_id"]) for row in rows] == expected
    test_groups = [item["meta"].get("group_id") for item in document["data"]["test"]]
    assert None in test_groups and any(group is not None for group in test_groups), "both kinds of item are checked"
    card = (tmp_path / "hf" / "README.md").read_text(encoding="utf-8")
    assert "`meta.group_id` (int32 or null" in card and "group exact match" in card


class CountedReads:
    """A streamed export that counts how often each split's items are read."""

    def __init__(self, document) -> None:
        self.document = document
        self.reads: Counter[str] = Counter()

    def records(self, split: str):
        self.reads[split] += 1
        return self.document.records(split)


def test_evaluate_reads_the_split_once_to_score_items_and_groups(tmp_path) -> None:
    paths = grouped_outputs(tmp_path / "in", ungrouped_scenes=2)
    out = tmp_path / "mera"
    document = exported(paths, out, shots=2)
    gold = {item["meta"]["id"]: item["outputs"] for item in document["data"]["test"]}
    counted = CountedReads(stream_document(out))
    assert evaluate(counted, "test", None)["groups"]["overall"]["groups"] >= 4
    assert counted.reads == {"test": 1}
    counted.reads.clear()
    result = evaluate(counted, "test", read_predictions(write_predictions(tmp_path / "gold.jsonl", gold)))
    assert result["groups"]["overall"]["predictions"] == {"exact_match": 1.0, "group_exact_match": 1.0}
    assert result["predictions"]["overall"]["exact_match"] == 1.0
    # Once more over every split, for ids the dataset does not have; the scoring pass is the second.
    assert counted.reads == {"shots": 1, "test": 2}


class EveryOtherItem:
    """A test-item selection (as ``dataset.releases.like.LikeSelection`` makes one) keeping every other
    test item: it splits groups, which the export then drops whole."""

    def apply(self, questions_path, columns, split, scene_sizes, seed):
        from dataset.mera.splits import SplitPositions

        return SplitPositions(split.shots, split.test[::2], split.dropped)

    def record(self) -> dict:
        return {"every_other_item": True}


def test_export_counts_the_items_of_groups_a_selection_left_incomplete(tmp_path) -> None:
    paths = grouped_outputs(tmp_path / "in", ungrouped_scenes=4)
    plain = export_dataset(paths["questions"], paths["scenes"], tmp_path / "plain", ExportSettings(shots=2, seed=4))
    info = export_dataset(paths["questions"], paths["scenes"], tmp_path / "mera",
                          ExportSettings(shots=2, seed=4, select=EveryOtherItem()))
    document = read_export(tmp_path / "mera")
    # Recomputed from the plain export's test items: what the selection kept, less the groups it split.
    plain_test = read_export(tmp_path / "plain")["data"]["test"]
    provenance = {record["id"]: record for record in read_export(tmp_path / "plain")["provenance"]}
    kept = plain_test[::2]
    sizes = Counter(provenance[item["meta"]["id"]]["group"]["id"] for item in plain_test if "group_id" in item["meta"])
    kept_sizes = Counter(provenance[item["meta"]["id"]]["group"]["id"] for item in kept if "group_id" in item["meta"])
    split_groups = [group for group, count in kept_sizes.items() if count < sizes[group]]
    assert split_groups, "the selection splits some groups"
    left_out = sum(kept_sizes[group] for group in split_groups)
    assert len(document["data"]["test"]) == len(kept) - left_out
    before = plain["counts"].get("dropped_incomplete_groups", 0)
    assert info["counts"]["dropped_incomplete_groups"] == before + left_out
    assert document["info"]["counts"]["dropped_incomplete_groups"] == before + left_out
