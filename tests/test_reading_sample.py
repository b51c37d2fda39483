"""benchmarks/reading_sample.py: a blind reading sample drawn evenly over families, and the judgements read back."""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

import pytest
from helpers import module_from_file

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "reading_sample.py"


@pytest.fixture(scope="module")
def sample_module():
    return module_from_file(BENCH)


def questions_file(tmp_path: Path) -> Path:
    """Translated questions of three families, one family much larger than the others."""
    questions = []
    for family, count in (("count/or", 40), ("exist/or", 4), ("query/zero_hop/color", 4)):
        for i in range(count):
            questions.append({"family": family, "image_index": i, "question_index": 0, "question": f"English {family} {i}?",
                              "question_ru": f"Вопрос {family} {i}?", "answer": "yes", "answer_ru": "да"})
    path = tmp_path / "questions_ru.json"
    path.write_text(json.dumps({"info": {}, "questions": questions}, ensure_ascii=False), encoding="utf-8")
    return path


def read_tsv(path: Path) -> list[dict[str, str]]:
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if not line.startswith("#")]
    return list(csv.DictReader(lines, delimiter="\t"))


def test_the_reader_file_holds_only_the_russian_questions_drawn_evenly(tmp_path, sample_module):
    assert sample_module.main(["write", "--questions", str(questions_file(tmp_path)), "--n", "12", "--out", str(tmp_path / "s")]) == 0
    reader = read_tsv(tmp_path / "s" / "reading_sample.tsv")
    assert list(reader[0]) == ["k", "question", "grammar", "naturalness", "two_readings", "note"]
    assert [row["k"] for row in reader] == [str(k) for k in range(1, 13)]
    text = (tmp_path / "s" / "reading_sample.tsv").read_text(encoding="utf-8") + (tmp_path / "s" / "reading_sample.md").read_text(encoding="utf-8")
    assert "English" not in text and "count/or" not in text.replace("Вопрос count/or", "") and "да" not in text.split("\n", 3)[3]
    key = {row["k"]: row for row in read_tsv(tmp_path / "s" / "reading_key.tsv")}
    assert all(key[row["k"]]["question"] == row["question"] for row in reader)
    assert all(key[k]["english"].startswith("English") and key[k]["answer"] == "yes" for k in key)
    assert Counter(row["family"] for row in key.values()) == {"count/or": 4, "exist/or": 4, "query/zero_hop/color": 4}
    # The same input and seed give the same bytes; another seed another draw.
    first = (tmp_path / "s" / "reading_key.tsv").read_bytes()
    sample_module.main(["write", "--questions", str(questions_file(tmp_path)), "--n", "12", "--out", str(tmp_path / "t")])
    assert (tmp_path / "t" / "reading_key.tsv").read_bytes() == first
    sample_module.main(["write", "--questions", str(questions_file(tmp_path)), "--n", "12", "--seed", "1", "--out", str(tmp_path / "u")])
    assert (tmp_path / "u" / "reading_key.tsv").read_bytes() != first


def fill(path: Path, out: Path, judgements: dict[int, tuple[str, str, str, str]]) -> Path:
    rows = read_tsv(path)
    with out.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(["k", "question", "grammar", "naturalness", "two_readings", "note"])
        for row in rows:
            grammar, natural, two, note = judgements.get(int(row["k"]), ("0", "5", "0", ""))
            writer.writerow([row["k"], row["question"], grammar, natural, two, note])
    return out


def test_judgements_are_read_back_into_the_table(tmp_path, sample_module, capsys):
    sample_module.main(["write", "--questions", str(questions_file(tmp_path)), "--n", "10", "--out", str(tmp_path / "s")])
    capsys.readouterr()
    reader = tmp_path / "s" / "reading_sample.tsv"
    a = fill(reader, tmp_path / "reader_a.tsv", {1: ("1", "2", "1", "«предмет» twice"), 2: ("0", "3", "0", "")})
    b = fill(reader, tmp_path / "reader_b.tsv", {1: ("0", "4", "1", ""), 3: ("0", "4", "1", "")})
    assert sample_module.main(["read", "--key", str(tmp_path / "s" / "reading_key.tsv"), str(a), str(b), "--flagged"]) == 0
    out = capsys.readouterr().out
    # reader_a: 1 grammar error, 1 second reading, naturalness (2+3+5*8)/10 = 4.50, 2 of 10 rated ≤ 3.
    assert "| reader_a | 10 | 1 | 1 (10.0%) | 4.50 | 20% |" in out
    assert "| reader_b | 10 | 0 | 2 (20.0%) | 4.80 | 0% |" in out
    assert "second readings by both 1 (10.0%), by either 2 (20.0%); grammar errors by either 1" in out
    assert "«предмет» twice" in out


def test_a_bad_judgement_is_one_line_and_exit_2(tmp_path, sample_module, capsys):
    sample_module.main(["write", "--questions", str(questions_file(tmp_path)), "--n", "5", "--out", str(tmp_path / "s")])
    bad = fill(tmp_path / "s" / "reading_sample.tsv", tmp_path / "bad.tsv", {2: ("0", "7", "0", "")})
    assert sample_module.main(["read", "--key", str(tmp_path / "s" / "reading_key.tsv"), str(bad)]) == 2
    assert "naturalness must be 1 to 5, got '7'" in capsys.readouterr().err
    assert sample_module.main(["write", "--questions", str(tmp_path / "missing.json"), "--out", str(tmp_path / "x")]) == 2
    assert "does not exist" in capsys.readouterr().err
