"""Export to MERA ruCLEVR items: format, ids, shots/test disjointness, prompts, bad input, resuming."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import run_export, run_stage_process
from sample_outputs import mera_export_problems, write_sample_stage_outputs

from dataset.mera import export as export_module
from dataset.mera.document import read_export
from dataset.mera.export import ExportSettings, export_dataset
from dataset.mera.prompt import CARD_PROMPT_PATH, InstructionTemplate
from dataset.mera.splits import split_shots_and_test
from ruclevr.cli import UsageError
from ruclevr.io import atomic_write_json, read_json

# The instruction of the example item in the ruCLEVR card (MERA), character for character.
CARD_INSTRUCTION = (
    "Изображение:\n<image>\nНа этом изображении показаны различные геометрические объекты со своей формой, "
    "цветом и расположением друг относительно друга.\nВопрос: {question}\nЭтот вопрос касается объектов на "
    "изображении. Ответь на вопрос одним словом, употребив начальную форму этого слова, или числом, используя "
    "цифры для его записи.\nОтвет:"
)
MERA_TYPES = {"binary", "colors", "count", "materials", "shapes", "size"}
EXPORT_FILES = ("shots.json", "test.json", "provenance.json")


def export_bytes(folder: Path) -> list[bytes]:
    return [(folder / name).read_bytes() for name in EXPORT_FILES]


@pytest.fixture()
def stage_outputs(tmp_path: Path) -> dict[str, Path]:
    return write_sample_stage_outputs(tmp_path / "in", n_scenes=8)


def test_card_prompt_is_the_ruclevr_card_instruction() -> None:
    template = InstructionTemplate.from_file(CARD_PROMPT_PATH)
    assert template.render(question_type="count", split="test") == CARD_INSTRUCTION


def test_export_writes_valid_mera_items_numbered_across_shots_then_test(stage_outputs, tmp_path) -> None:
    out = tmp_path / "mera"
    assert run_export(stage_outputs, out, "--shots", "3", "--prompt", str(CARD_PROMPT_PATH)) == 0
    document = read_export(out)
    assert mera_export_problems(out) == []
    shots, test = document["data"]["shots"], document["data"]["test"]
    assert len(shots) == 3 and len(test) > 0
    assert [item["meta"]["id"] for item in shots] == [1, 2, 3]
    source = read_json(stage_outputs["questions"])["questions"]
    by_text = {(q["image_filename"], q["question_ru"]): q for q in source}
    for item in shots + test:
        assert item["instruction"] == CARD_INSTRUCTION
        assert item["meta"]["image"] == {"synt_source": ["blender"], "type": ["generated"]}
        question = by_text[(Path(item["inputs"]["image"]).name, item["inputs"]["question"])]
        assert item["outputs"] == question["answer_ru"]
        assert item["meta"]["question_type"] == question["question_type"]
        assert item["inputs"]["image"] == f"samples/{question['image_filename']}"
    counts = document["info"]["counts"]
    assert counts["input_questions"] == len(source)
    assert counts["dropped_duplicates"] == 1  # the fixture repeats one question
    assert len(source) == sum(counts[key] for key in ("shots", "test", "dropped_duplicates",
                                                       "dropped_sharing_shot_image", "dropped_sharing_shot_question"))


def test_shots_cover_every_question_type_when_there_are_as_many_shots(stage_outputs, tmp_path) -> None:
    out = tmp_path / "mera"
    assert run_export(stage_outputs, out, "--shots", "6", "--seed", "5") == 0
    shots = read_export(out)["data"]["shots"]
    assert {item["meta"]["question_type"] for item in shots} == MERA_TYPES
    assert len({item["inputs"]["image"] for item in shots}) == 6


def test_same_seed_gives_same_bytes_and_another_seed_other_shots(stage_outputs, tmp_path) -> None:
    for name, seed in (("a", "1"), ("b", "1"), ("c", "2")):
        assert run_export(stage_outputs, tmp_path / name, "--shots", "3", "--seed", seed) == 0
    first = export_bytes(tmp_path / "a")
    assert export_bytes(tmp_path / "b") == first
    shot_images = {name: [i["inputs"]["image"] for i in read_export(tmp_path / name)["data"]["shots"]]
                   for name in ("a", "c")}
    assert shot_images["a"] != shot_images["c"]


def test_test_items_never_repeat_a_shot_question_text() -> None:
    def question(image: str, text: str) -> dict[str, str]:
        return {"image_filename": image, "question_ru": text, "question_type": "count", "answer_ru": "1",
                "family": "count/all"}

    shared = "Сколько всего предметов?"
    questions = [question(f"i{k}.png", shared) for k in range(4)]
    questions += [question(f"i{k}.png", f"Сколько кубов номер {k}?") for k in range(4, 6)]
    questions.append(question("i4.png", "сколько всего предметов"))  # the shared text, case and punctuation aside
    questions.append(question("i0.png", shared))  # a duplicate on one image
    shot_texts = set()
    for seed in range(12):
        split = split_shots_and_test(questions, n_shots=1, seed=seed)
        shot = split.shots[0]
        shot_texts.add(shot["question_ru"])
        assert split.dropped_duplicates == 1
        assert all(q["image_filename"] != shot["image_filename"] for q in split.test)
        if shot["question_ru"] == shared:
            # The three other images asking it, and i4's differently written copy, all leave test.
            assert split.dropped_sharing_shot_question == 4
            assert [q["question_ru"] for q in split.test] == ["Сколько кубов номер 4?", "Сколько кубов номер 5?"]
    assert shared in shot_texts and len(shot_texts) > 1  # both kinds of draw were exercised


def test_every_seed_keeps_shot_questions_out_of_test(stage_outputs, tmp_path) -> None:
    for seed in range(6):
        out = tmp_path / f"seed{seed}"
        assert run_export(stage_outputs, out, "--shots", "4", "--seed", str(seed)) == 0
        assert mera_export_problems(out) == []


def test_user_prompt_is_rendered_per_question_type_in_a_sandbox(stage_outputs, tmp_path) -> None:
    prompt = tmp_path / "prompt.j2"
    prompt.write_text("<image>\n{question}\n{% if question_type == 'count' %}Ответ числом:{% else %}Ответ:{% endif %}",
                      encoding="utf-8")
    out = tmp_path / "mera"
    assert run_export(stage_outputs, out, "--shots", "2", "--prompt", str(prompt)) == 0
    document = read_export(out)
    for item in document["data"]["shots"] + document["data"]["test"]:
        ending = "Ответ числом:" if item["meta"]["question_type"] == "count" else "Ответ:"
        assert item["instruction"] == "<image>\n{question}\n" + ending
    assert [t["source"] for t in document["info"]["settings"]["prompt"]["templates"]] == [prompt.read_text(encoding="utf-8")]


def _with_question_change(stage_outputs: dict[str, Path], **change: str) -> None:
    raw = read_json(stage_outputs["questions"])
    raw["questions"][3].update(change)
    atomic_write_json(stage_outputs["questions"], raw)


@pytest.mark.parametrize(
    "breakage, message",
    [
        (lambda p, t: p["questions"].unlink(), "does not exist"),
        (lambda p, t: p["questions"].write_text("{not json", encoding="utf-8"), "not valid JSON"),
        (lambda p, t: p["questions"].write_text('{"items": []}', encoding="utf-8"), "'questions' list"),
        (lambda p, t: _with_question_change(p, question_type="colour"), "unknown question_type 'colour'"),
        (lambda p, t: _with_question_change(p, answer_ru="розовый"), "answer 'розовый'"),
        (lambda p, t: _with_question_change(p, answer_ru="Да."), "answer 'Да.'"),
        (lambda p, t: _with_question_change(p, question_ru=""), "lacks question_ru"),
        (lambda p, t: (p["images"] / "ruclevr_000002.png").unlink(), "ruclevr_000002.png does not exist"),
        (lambda p, t: _with_question_change(p, image_filename="ruclevr_000777.png"), "no scene"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_nothing_written(stage_outputs, tmp_path, capsys, breakage, message) -> None:
    breakage(stage_outputs, tmp_path)
    out = tmp_path / "mera"
    assert run_export(stage_outputs, out, "--shots", "2") == 2
    error = capsys.readouterr().err
    assert message in error and error.count("\n") == 1 and "Traceback" not in error
    assert not any((out / name).exists() for name in EXPORT_FILES)


@pytest.mark.parametrize(
    "template, message",
    [
        ("<image> only", "missing {question}"),
        ("<image> {question} {% if %}", "line 1"),
        ("<image> {question} {{ ''.__class__.__mro__[1].__subclasses__() }}", "unsafe"),
        ("<image> {question} {{ colour }}", "'colour' is undefined"),
    ],
)
def test_bad_prompt_template_is_a_usage_error(stage_outputs, tmp_path, capsys, template, message) -> None:
    prompt = tmp_path / "prompt.j2"
    prompt.write_text(template, encoding="utf-8")
    assert run_export(stage_outputs, tmp_path / "mera", "--prompt", str(prompt), "--shots", "2") == 2
    error = capsys.readouterr().err
    assert message in error and error.count("\n") == 1
    assert not any((tmp_path / "mera" / name).exists() for name in EXPORT_FILES)


def test_more_shots_than_images_allow_is_a_usage_error(stage_outputs, tmp_path, capsys) -> None:
    assert run_export(stage_outputs, tmp_path / "mera", "--shots", "8") == 2
    assert "no test questions are left" in capsys.readouterr().err
    assert run_export(stage_outputs, tmp_path / "mera", "--shots", "9") == 2
    assert "--shots 9 needs" in capsys.readouterr().err


@pytest.mark.parametrize("shots", ["-3", "0", "two"])
def test_shots_must_be_a_positive_integer(stage_outputs, tmp_path, capsys, shots) -> None:
    assert run_export(stage_outputs, tmp_path / "mera", "--shots", shots) == 2
    error = capsys.readouterr().err
    assert f"argument --shots: must be a positive integer, got {shots}" in error or "got 'two'" in error
    assert error.count("\n") == 1


def test_interrupted_export_resumes_to_the_uninterrupted_result(stage_outputs, tmp_path, monkeypatch) -> None:
    assert run_export(stage_outputs, tmp_path / "whole", "--shots", "3") == 0
    real_place_image = export_module.place_image
    placed = []

    def place_then_die(source: Path, target: Path) -> None:
        if len(placed) == 3:
            raise KeyboardInterrupt
        real_place_image(source, target)
        placed.append(target)

    monkeypatch.setattr(export_module, "place_image", place_then_die)
    assert run_export(stage_outputs, tmp_path / "cut", "--shots", "3") == 130
    assert not any((tmp_path / "cut" / name).exists() for name in EXPORT_FILES)
    monkeypatch.setattr(export_module, "place_image", real_place_image)
    assert run_export(stage_outputs, tmp_path / "cut", "--shots", "3") == 0
    assert export_bytes(tmp_path / "cut") == export_bytes(tmp_path / "whole")
    assert sorted(p.name for p in (tmp_path / "cut" / "samples").iterdir()) == \
        sorted(p.name for p in (tmp_path / "whole" / "samples").iterdir())


def test_rerun_skips_and_overwrite_replaces_and_prunes_samples(stage_outputs, tmp_path, capsys) -> None:
    out = tmp_path / "mera"
    assert run_export(stage_outputs, out, "--shots", "2") == 0
    before = export_bytes(out)
    assert run_export(stage_outputs, out, "--shots", "5") == 0
    assert "nothing to do" in capsys.readouterr().err
    assert export_bytes(out) == before
    (out / "samples" / "stale.png").write_bytes(b"old")
    assert run_export(stage_outputs, out, "--shots", "5", "--overwrite") == 0
    document = read_export(out)
    assert len(document["data"]["shots"]) == 5
    used = {Path(i["inputs"]["image"]).name for s in ("shots", "test") for i in document["data"][s]}
    assert {p.name for p in (out / "samples").iterdir()} == used


def test_provenance_records_other_stage_info(stage_outputs, tmp_path) -> None:
    translated = tmp_path / "questions_ru.json"
    atomic_write_json(translated, {"info": {"stage": "translate", "backend": "native"}, "questions": []})
    out = tmp_path / "mera"
    assert run_export(stage_outputs, out, "--shots", "2", "--provenance", f"translate={translated}") == 0
    sources = read_export(out)["info"]["sources"]
    assert sources["translate"] == {"file": "questions_ru.json", "info": {"stage": "translate", "backend": "native"}}
    assert sources["scenes"]["info"]["settings"] == {"width": 8, "height": 6, "samples": 2}
    assert sources["input_questions"]["info"]["stage"] == "filter"
    assert run_export(stage_outputs, tmp_path / "m2", "--provenance", "translate") == 2
    assert run_export(stage_outputs, tmp_path / "m3", "--provenance", f"scenes={translated}") == 2


def test_export_function_checks_before_writing(stage_outputs, tmp_path) -> None:
    _with_question_change(stage_outputs, answer_ru="")
    with pytest.raises(UsageError):
        export_dataset(stage_outputs["questions"], stage_outputs["scenes"], tmp_path / "m", ExportSettings(shots=2))
    assert not (tmp_path / "m").exists()


def test_module_entry_point_reports_errors_in_one_line(tmp_path) -> None:
    result = run_stage_process("dataset", "export", "--questions", tmp_path / "none.json", "--scenes", tmp_path / "none.json",
                               "--out", tmp_path / "out")
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "does not exist" in result.stderr
    help_text = run_stage_process("dataset", "export", "--help")
    assert help_text.returncode == 0 and "--shots" in help_text.stdout and "--prompt" in help_text.stdout
