"""Published text is escaped for its medium (issue 24): annotator names in the card's Markdown
and cells of the crowd TSV that a spreadsheet would run as a formula."""

from __future__ import annotations

import csv
import json

from helpers import run_export, run_stage
from sample_outputs import write_sample_stage_outputs

from dataset.annotate.tasks import spreadsheet_cell
from dataset.mera.document import load_document
from dataset.publish.markdown import markdown_text

HOSTILE_NAMES = ["<script>alert(1)</script>", "x\n## Injected heading", "[click](javascript:alert(1))"]


def test_a_card_from_answers_with_hostile_annotator_names_shows_them_as_text(tmp_path, capsys) -> None:
    stage_outputs = write_sample_stage_outputs(tmp_path / "in", n_scenes=6)
    export = tmp_path / "mera"
    assert run_export(stage_outputs, export, "--shots", "1") == 0
    document = load_document(export)
    shot, test = document.items("shots")[0], document.items("test")[0]
    answers = []
    for number, name in enumerate(HOSTILE_NAMES):
        path = tmp_path / f"answers{number}.json"
        path.write_text(json.dumps({"format": "ruclevr-annotate/1", "annotator": name, "answers": [
            {"id": shot["meta"]["id"], "answer": "wrong"}, {"id": test["meta"]["id"], "answer": test["outputs"]}]}),
            encoding="utf-8")
        answers.append(str(path))
    assert run_stage("dataset", "annotate", "import", "--data", export, "--answers", *answers,
                     "--out", tmp_path / "report") == 0, capsys.readouterr().err
    card = (tmp_path / "report" / "human_baseline.md").read_text(encoding="utf-8")
    report = json.loads((tmp_path / "report" / "human.json").read_text(encoding="utf-8"))
    assert sorted(report["flagged_annotators"]) == sorted(name.strip() for name in HOSTILE_NAMES)  # all three shown
    assert "<script>" not in card and "&lt;script&gt;alert\\(1\\)&lt;/script&gt;" in card
    assert not any(line.lstrip().startswith("## Injected") for line in card.splitlines())
    assert "x \\#\\# Injected heading" in card
    assert "](javascript:" not in card and "\\[click\\]\\(javascript:alert\\(1\\)\\)" in card
    assert card.startswith("## Human baseline\n")  # the template's own Markdown is untouched


def test_markdown_text_leaves_plain_words_and_numbers_alone() -> None:
    assert markdown_text("0.833") == "0.833"
    assert markdown_text("куб") == "куб"
    assert markdown_text("compare_integer") == "compare\\_integer"
    assert markdown_text("a | b") == "a \\| b"


def test_crowd_tsv_cells_that_start_a_formula_are_prefixed(tmp_path) -> None:
    for formula in ("=HYPERLINK(\"http://x\")", "+1", "-2+3", "@SUM(A1)"):
        assert spreadsheet_cell(formula) == "'" + formula
    assert spreadsheet_cell("куб") == "куб" and spreadsheet_cell("12") == "12"
    from dataset.annotate.tasks import tsv_text

    text = tsv_text(iter([["task_id", "question"], ["1", "=cmd|' /C calc'!A0"]]))
    rows = list(csv.reader(text.splitlines(), delimiter="\t"))
    assert rows[1] == ["1", "'=cmd|' /C calc'!A0"]
