"""The card's answer words are the data's words (the same function as the gold, under the build's ё policy),
and the card has what MERA's and JGLUE's cards have."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import run_export
from sample_outputs import write_sample_stage_outputs

from assets.vocabulary import ATTRIBUTES, load_vocabulary
from dataset.annotate.tasks import answer_words
from dataset.cli import main
from dataset.mera.document import read_export
from questions.family import question_type_of
from ruclevr.io import atomic_write_json, read_json
from translate.answers import answer_to_russian, answer_vocabulary, recorded_yo_policy

WORD_TYPES = ("binary", "colors", "materials", "shapes", "size")


@pytest.fixture(scope="module", params=["e", "yo"])
def build(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """An export and its copy whose gold is spelt by a ё policy, recorded as the translate stage records it."""
    policy = request.param
    root = tmp_path_factory.mktemp(f"card_words_{policy}")
    stage = write_sample_stage_outputs(root / "in", n_scenes=60)
    kept = read_json(stage["questions"])
    kept["info"]["yo"] = policy
    for question in kept["questions"]:
        question["answer_ru"] = answer_to_russian(question["answer"], policy)
    atomic_write_json(stage["questions"], kept)
    assert run_export(stage, root / "mera", "--shots", "3") == 0
    assert main(["hf", "--data", str(root / "mera"), "--out", str(root / "hf")]) == 0
    return root, policy


def card_gold_words(card: str) -> dict[str, set[str]]:
    """The «gold answers» column of the card's answer-vocabulary table, per question type."""
    table = card.split("### Answer vocabulary per question type", 1)[1].split("###", 1)[0]
    rows = {}
    for line in table.splitlines():
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if len(cells) == 3 and cells[0] in WORD_TYPES:
            rows[cells[0]] = set(re.split(r",\s*", cells[1]))
    return rows


def test_card_answer_table_equals_the_gold_answers_of_the_build(build) -> None:
    root, policy = build
    card = (root / "hf" / "README.md").read_text(encoding="utf-8")
    document = read_export(root / "mera")
    golds: dict[str, set[str]] = {}
    for split in ("shots", "test"):
        for item in document["data"][split]:
            golds.setdefault(item["meta"]["question_type"], set()).add(item["outputs"])
    table = card_gold_words(card)
    assert set(table) == set(WORD_TYPES)
    vocabulary = answer_vocabulary(policy)
    for question_type in WORD_TYPES:
        # the column is every word the gold uses under the build's policy; this build uses every one
        assert golds[question_type] <= table[question_type] == set(vocabulary[question_type]["gold"]), question_type
        assert table[question_type] == golds[question_type], question_type
    assert recorded_yo_policy(document["info"]["sources"]) == policy
    yellow, has_yo = ("жёлтый", True) if policy == "yo" else ("желтый", False)
    assert yellow in table["colors"] and any("ё" in word for words in table.values() for word in words) == has_yo


@pytest.mark.parametrize("policy", ["e", "yo"])
def test_every_list_of_answer_words_comes_from_the_gold_function_under_the_policy(policy: str) -> None:
    vocabulary = load_vocabulary()
    table = answer_vocabulary(policy)
    for attribute in ATTRIBUTES:
        expected = {answer_to_russian(name, policy) for name in vocabulary.names(attribute)}
        assert set(table[question_type_of(attribute)]["gold"]) == expected
    assert set(table["binary"]["gold"]) == {answer_to_russian("yes", policy), answer_to_russian("no", policy)}
    words = answer_words(policy)
    assert ("жёлтый" in words) == (policy == "yo") and ("желтый" in words) == (policy == "e")
    assert not any("ё" in entry for row in table.values() for entry in row["others"]) or policy == "yo"


def docs_answer_table() -> dict[str, list[str]]:
    """docs/dataset.md's answer-word table: per question type, its cells after the type."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "dataset.md").read_text(encoding="utf-8")
    table = text.split("| question type | gold answers (ё policy `e`, the default) |", 1)[1].split("\n\n", 1)[0]
    rows = {}
    for line in table.splitlines()[2:]:
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        rows[cells[0]] = cells[1:]
    return rows


def test_the_docs_table_of_answer_words_is_the_gold_functions_under_both_policies() -> None:
    e, yo = answer_vocabulary("e"), answer_vocabulary("yo")
    assert docs_answer_table() == {kind: [", ".join(e[kind]["gold"]), ", ".join(yo[kind]["gold"]),
                                          ", ".join(e[kind]["others"]) or "—"] for kind in e}


def test_the_recorded_policy_is_read_from_the_translate_record() -> None:
    assert recorded_yo_policy({"translate": {"info": {"yo": "yo"}}}) == "yo"
    assert recorded_yo_policy({"translate": {"info": {}}}) == "e" == recorded_yo_policy(None)


def test_card_is_as_complete_as_meras(build) -> None:
    root, _ = build
    card = (root / "hf" / "README.md").read_text(encoding="utf-8")
    header = card.split("---", 2)[1]
    for field, value in (("annotations_creators", "machine-generated"), ("language_creators", "machine-generated"),
                         ("multilinguality", "monolingual"), ("source_datasets", "original"),
                         ("task_ids", "visual-question-answering")):
        assert f"{field}:\n- {value}" in header, field
    first = read_export(root / "mera")["data"]["test"][0]
    snippet = card.split("## Loading", 1)[1].split("## ", 1)[0]
    assert f'"path": "{first["inputs"]["image"]}"' in snippet
    assert f'item["inputs"]["question"]   # "{first["inputs"]["question"]}"' in snippet
    assert f'item["outputs"]              # "{first["outputs"]}"' in snippet
    assert "## Human validation\n\nNot measured" in card
    limitations = card.split("## Limitations", 1)[1].split("\n## ", 1)[0]
    assert "MERA's rules" in limitations and "Legibility" in limitations and "Degenerate" in limitations
    assert "## Version and contact" in card
    assert "@misc{ruclevr_generated_" in card and "title        = {{ruCLEVR} generated with ruclevr" in card
