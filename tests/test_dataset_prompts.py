"""The shipped instruction prompts, their even spread over question types, and MERA's str.format check."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from helpers import run_export
from sample_outputs import write_sample_stage_outputs

from dataset.mera.document import read_export
from dataset.mera.export import question_types
from dataset.mera.prompt import SINGLE_STYLE_DIR, PromptSet, instruction_format_problem
from dataset.mera.prompt_blocks import BLOCK_ORDER, reasoning_layouts, used_blocks

TYPES = ("binary", "colors", "count", "materials", "shapes", "size")


@pytest.fixture(scope="module")
def stage_outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_sample_stage_outputs(tmp_path_factory.mktemp("prompts"), n_scenes=60)


ZERO_PROMPT = "Изображение: <image>\nВопрос:\n{question}"


def rendered(prompts: PromptSet) -> list[dict[str, str]]:
    """Each template's instruction per question type, checked as MERA fills it."""
    per_type_texts = []
    for template in prompts.templates:
        texts = {t: template.render(question_type=t, split="test") for t in TYPES}
        for text in texts.values():
            assert "<image>" in text and "{question}" in text and instruction_format_problem(text) is None
            assert text.format(question="ВОПРОС", image="samples/x.png").count("ВОПРОС") == 1
        per_type_texts.append(texts)
    return per_type_texts


def test_block_scheme_has_reasoning_layouts_and_a_zero_prompt() -> None:
    prompts = PromptSet.from_paths(["mera-blocks-all"])
    assert len(prompts.templates) == 15
    assert set(question_types()) == set(TYPES)
    assert list(used_blocks()) == list(BLOCK_ORDER)  # all 13 blocks appear in some layout
    per_type_texts = rendered(prompts)
    zero = [texts for texts in per_type_texts if texts["binary"] == ZERO_PROMPT]
    assert len(zero) == 1 and set(zero[0].values()) == {ZERO_PROMPT}
    reasoning = set(reasoning_layouts())
    assert len(reasoning) == 5
    for template, texts in zip(prompts.templates, per_type_texts, strict=True):
        asks = all("РАССУЖДЕНИЕ:" in text and "ОТВЕТ:" in text for text in texts.values())
        assert asks == (template.name in reasoning), template.name
        assert not any("РАССУЖДЕНИЕ" in text for text in texts.values()) or asks
        if texts["binary"] != ZERO_PROMPT:  # the answer-format block is written per question type
            assert len(set(texts.values())) == len(TYPES), template.name
            assert "да" in texts["binary"] and "нет" in texts["binary"] and "цифр" in texts["count"]
    for question_type in TYPES:
        assert len({texts[question_type] for texts in per_type_texts}) == len(prompts.templates)
    registers = {template.name.split("_", 1)[1].split("_")[0] for template in prompts.templates}
    assert {"formal", "informal", "impersonal", "technical"} <= registers


def test_default_set_asks_only_for_replies_meras_task_scores() -> None:
    default = PromptSet.from_paths()
    assert PromptSet.from_paths(["mera-blocks"]).sha256 == default.sha256
    everything = [template.name for template in PromptSet.from_paths(["mera-blocks-all"]).templates]
    asked_to_reason = [template.name for template in PromptSet.from_paths(["mera-blocks-reasoning"]).templates]
    assert sorted(asked_to_reason) == sorted(reasoning_layouts()) and len(asked_to_reason) == 5
    assert [template.name for template in default.templates] == [n for n in everything if n not in asked_to_reason]
    assert len(default.templates) == 10  # MERA asks for at least ten prompts per task
    for texts in rendered(default):
        assert not any("РАССУЖДЕНИЕ" in text or "ОТВЕТ" in text for text in texts.values())
    assert ZERO_PROMPT in {texts["binary"] for texts in rendered(default)}


def test_single_style_set_stays_available_by_name() -> None:
    prompts = PromptSet.from_paths(["single-style"])
    assert [t.name for t in prompts.templates] == sorted(p.name for p in SINGLE_STYLE_DIR.glob("*.j2"))
    assert len(prompts.templates) == 10
    for texts in rendered(prompts):
        assert len(set(texts.values())) == len(TYPES)
        assert not any("РАССУЖДЕНИЕ" in text for text in texts.values())


def test_export_spreads_every_question_type_evenly_over_the_prompts(stage_outputs, tmp_path) -> None:
    out = tmp_path / "mera"
    assert run_export(stage_outputs, out, "--shots", "10", "--seed", "4") == 0
    document = read_export(out)
    prompt_names = [template.name for template in PromptSet.from_paths().templates]
    by_id = {record["id"]: record for record in document["provenance"]}
    items = document["data"]["test"] + document["data"]["shots"]
    assert len({item["instruction"] for item in items}) == 9 * len(TYPES) + 1  # the zero prompt is one text
    test_layouts = {by_id[i["meta"]["id"]]["prompt"] for i in document["data"]["test"]}
    assert test_layouts == set(prompt_names) and len(test_layouts) == 10
    assert not test_layouts & set(reasoning_layouts())
    for scope in (document["data"]["test"], items):
        for question_type in TYPES:
            counts = Counter(by_id[i["meta"]["id"]]["prompt"] for i in scope if i["meta"]["question_type"] == question_type)
            shares = [counts.get(name, 0) for name in prompt_names]
            assert sum(shares) > len(prompt_names) and max(shares) - min(shares) <= 1, (question_type, shares)
    for item in items:
        filled = item["instruction"].format(**item["inputs"])
        assert filled == item["instruction"].replace("{question}", item["inputs"]["question"])


def test_prompt_assignment_is_seeded(stage_outputs, tmp_path) -> None:
    runs = {}
    for name, seed in (("a", "1"), ("b", "1"), ("c", "2")):
        assert run_export(stage_outputs, tmp_path / name, "--shots", "3", "--seed", seed) == 0
        runs[name] = [record["prompt"] for record in read_export(tmp_path / name)["provenance"]]
    assert runs["a"] == runs["b"] and runs["a"] != runs["c"]


def test_prompt_may_be_repeated_or_a_folder(stage_outputs, tmp_path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    for name in ("a.j2", "b.j2"):
        (folder / name).write_text(f"<image>\n{{question}}\n{name}: {{{{ question_type }}}}", encoding="utf-8")
    (folder / "notes.txt").write_text("not a template", encoding="utf-8")
    single = tmp_path / "c.j2"
    single.write_text("<image> {question} c", encoding="utf-8")
    out = tmp_path / "mera"
    assert run_export(stage_outputs, out, "--shots", "2", "--prompt", str(folder), "--prompt", str(single)) == 0
    document = read_export(out)
    assert [t["file"] for t in document["info"]["settings"]["prompt"]["templates"]] == ["a.j2", "b.j2", "c.j2"]
    assert {record["prompt"] for record in document["provenance"]} == {"a.j2", "b.j2", "c.j2"}
    endings = {item["instruction"].rsplit("\n", 1)[-1] for item in document["data"]["test"]}
    assert "a.j2: count" in endings and "<image> {question} c" in endings


@pytest.mark.parametrize(
    "template, message",
    [
        ('<image> {question} Ответ в JSON: {"answer": "..."}', "is a str.format field"),
        ("<image> {question} {}", "{} is a str.format field"),
        ("<image> {question} {image}", "{image} is a str.format field"),
        ("<image> {question} {question!r}", "{question!r} is a str.format field"),
        ("<image> {question} {question:>10}", "{question:>10} is a str.format field"),
        ("<image> {question} } ", "str.format cannot read it"),
        ("<image> {question} {0}", "{0} is a str.format field"),
    ],
)
def test_instruction_that_str_format_would_break_or_overfill_is_refused(stage_outputs, tmp_path, capsys,
                                                                         template, message) -> None:
    prompt = tmp_path / "bad.j2"
    prompt.write_text(template, encoding="utf-8")
    out = tmp_path / "mera"
    assert run_export(stage_outputs, out, "--shots", "2", "--prompt", str(SINGLE_STYLE_DIR), "--prompt", str(prompt)) == 2
    error = capsys.readouterr().err
    assert message in error and "bad.j2" in error and error.count("\n") == 1 and "Traceback" not in error
    assert not out.exists() or not any(out.iterdir())


def test_escaped_braces_are_literal_braces_after_format(stage_outputs, tmp_path) -> None:
    prompt = tmp_path / "json.j2"
    prompt.write_text('<image> {question} Ответ: {{ \'{{"answer": "..."}}\' }}', encoding="utf-8")
    out = tmp_path / "mera"
    assert run_export(stage_outputs, out, "--shots", "2", "--prompt", str(prompt)) == 0
    item = read_export(out)["data"]["test"][0]
    assert item["instruction"].format(**item["inputs"]).endswith('Ответ: {"answer": "..."}')


def test_empty_prompt_folder_and_repeated_names_are_usage_errors(stage_outputs, tmp_path, capsys) -> None:
    (tmp_path / "empty").mkdir()
    assert run_export(stage_outputs, tmp_path / "m1", "--prompt", str(tmp_path / "empty")) == 2
    assert "holds no *.j2 templates" in capsys.readouterr().err
    assert run_export(stage_outputs, tmp_path / "m2", "--prompt", str(SINGLE_STYLE_DIR),
                      "--prompt", str(SINGLE_STYLE_DIR)) == 2
    assert "share the file name" in capsys.readouterr().err


def test_stats_prints_the_instruction_count_per_question_type(stage_outputs, tmp_path, capsys) -> None:
    from dataset.cli import main
    from ruclevr.io import read_json

    out = tmp_path / "mera"
    assert run_export(stage_outputs, out, "--shots", "10", "--seed", "4") == 0
    capsys.readouterr()
    assert main(["stats", "--data", str(out), "--out", str(tmp_path / "stats.json")]) == 0
    printed = capsys.readouterr().out
    counts = read_json(tmp_path / "stats.json")["statistics"]["splits"]["test"]["instructions_per_question_type"]
    document = read_export(out)
    for question_type in TYPES:
        texts = {i["instruction"] for i in document["data"]["test"] if i["meta"]["question_type"] == question_type}
        assert counts[question_type] == len(texts) == len(PromptSet.from_paths().templates)
    assert "distinct instructions per question type (test): " + ", ".join(f"{t} {counts[t]}" for t in TYPES) in printed


def test_card_says_how_many_prompts_ask_for_reasoning_and_what_meras_task_does_with_them(stage_outputs, tmp_path) -> None:
    from dataset.cli import main

    cards = {}
    for name, prompt in (("default", []), ("all", ["--prompt", "mera-blocks-all"])):
        out = tmp_path / name / "mera"
        assert run_export(stage_outputs, out, "--shots", "3", *prompt) == 0
        assert main(["hf", "--data", str(out), "--out", str(tmp_path / name / "hf")]) == 0
        cards[name] = (tmp_path / name / "hf" / "README.md").read_text(encoding="utf-8")
    assert "5 of them ask the model to reason after «РАССУЖДЕНИЕ:» and answer after «ОТВЕТ:»" in cards["all"]
    assert "scores such a reply 0" in cards["all"]
    assert "None asks for reasoning before the answer" in cards["default"]
    for card in cards.values():
        assert "`mera-blocks/01_zero`" in card and "text after its last «ОТВЕТ»" in card
        assert "MERA_MULTIMODAL at 0f32158" in card and "compute_exact" in card
