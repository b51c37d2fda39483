"""The tools around the occlusion checks: per-annotator task lists for the crowd, and the blind bench's folds."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from helpers import benchmark_script

annotator_tasks = benchmark_script("crowd/annotator_tasks.py")
blind_bench = benchmark_script("blind_bench.py")


def write_tsv(path: Path, header: list[str], rows: list[list[str]]) -> None:
    path.write_text("\n".join("\t".join(row) for row in [header, *rows]) + "\n", encoding="utf-8")


def export_folder(tmp_path: Path) -> Path:
    tasks = tmp_path / "tasks"
    (tasks / "images").mkdir(parents=True)
    for name in ("a.png", "b.png"):
        (tasks / "images" / name).write_bytes(b"png")
    write_tsv(tasks / "crowd.tsv", ["task_id", "image", "question", "control", "known_answer"], [
        ["1", "images/a.png", "Закрыт ли «красный» куб частично?", "0", ""],
        ["2", "images/b.png", "Сколько сфер?", "1", "2"],
    ])
    write_tsv(tasks / "assignments.tsv", ["annotator", "position", "task_id"], [
        ["A01", "1", "2"], ["A01", "2", "1"], ["A02", "1", "1"],
    ])
    return tasks


def test_each_annotator_gets_its_tasks_in_order_with_absolute_images_and_no_gold(tmp_path, capsys):
    tasks = export_folder(tmp_path)
    assert annotator_tasks.main([str(tasks)]) == 0
    with (tasks / "annotators" / "A01" / "tasks.tsv").open(encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))
    assert rows == [
        ["position", "task_id", "image", "question"],
        ["1", "2", str((tasks / "images" / "b.png").resolve()), "Сколько сфер?"],
        ["2", "1", str((tasks / "images" / "a.png").resolve()), "Закрыт ли «красный» куб частично?"],
    ]
    assert (tasks / "annotators" / "A02" / "tasks.tsv").read_text(encoding="utf-8").count("\n") == 2
    assert "A01: 2 tasks" in capsys.readouterr().out


def test_an_image_outside_the_folder_or_no_export_is_refused_with_status_2(tmp_path, capsys):
    tasks = export_folder(tmp_path)
    crowd = (tasks / "crowd.tsv").read_text(encoding="utf-8").replace("images/a.png", "../../etc/passwd")
    (tasks / "crowd.tsv").write_text(crowd, encoding="utf-8")
    assert annotator_tasks.main([str(tasks)]) == 2
    assert not (tasks / "annotators").exists()
    assert annotator_tasks.main([str(tmp_path / "nothing")]) == 2
    assert "usage" in capsys.readouterr().err


def test_folds_score_every_question_once():
    pytest.importorskip("sklearn")
    questions = []
    for scene in range(40):
        for word, answer in (("красный", "да"), ("синий", "нет")):
            questions.append({"image_index": scene, "question_type": "binary", "family": "f",
                              "question_ru": f"Есть ли {word} куб?", "answer": answer})
    rows = blind_bench.folded_table(questions, 4)
    assert rows["all"]["test"] == len(questions)  # every question scored once
    assert rows["binary"]["text"] == 1.0 and rows["binary"]["majority"] == 0.5  # the text tells it, the majority cannot
    assert rows["binary"]["train"] == 60  # three folds of ten scenes, two questions each


def test_questions_of_several_files_keep_their_scenes_apart(tmp_path):
    import json

    paths = [tmp_path / "a.json", tmp_path / "b.json"]
    for path in paths:
        path.write_text(json.dumps({"questions": [{"image_index": 3, "answer": "да"}]}), encoding="utf-8")
    assert [q["image_index"] for q in blind_bench.read_questions(paths)] == [3, 1_000_003]
    assert blind_bench.read_questions(paths[:1]) == [{"image_index": 3, "answer": "да"}]
