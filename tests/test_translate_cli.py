"""python -m translate: output contract, resume after a kill, failure reports, bad input.

The google backend is driven end to end against a local fake of Google's page (tests/fake_google.py);
the native backend's test runs once translate/native.py exists.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from deep_translator.constants import BASE_URLS
from fake_google import FakeGoogle
from helpers import run_stage, run_stage_process

from translate import cli
from translate.google import GoogleBackend
from translate.spelling import apply_yo_policy

REPO = Path(__file__).resolve().parents[1]

# (English question, answer, Google's Russian, the answer in MERA's convention with е)
ITEMS = [
    ("Is there a red cube?", "yes", "Есть ли красный куб?", "да"),
    ("How many other things are there?", "3", "Сколько ещё других предметов?", "3"),
    ("What color is the small cylinder?", "green", "Какого цвета маленький цилиндр?", "зеленый"),
    ("What material is the large sphere made of?", "metal", "Из какого материала сделан большой шар?", "металл"),
    ("What shape is the yellow thing?", "cube", "Какой формы жёлтый предмет?", "куб"),
]


@pytest.fixture
def google(monkeypatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    fake = FakeGoogle().start()
    fake.translations.update({english: russian for english, _, russian, _ in ITEMS})
    monkeypatch.setitem(BASE_URLS, "GOOGLE_TRANSLATE", fake.url)
    yield fake
    fake.stop()


def question_record(index: int, english: str, answer: str) -> dict:
    return {
        "split": "new",
        "image_index": index // 2,
        "image_filename": f"ruclevr_{index // 2:06d}.png",
        "question_index": index,
        "question": english,
        "program": [{"function": "scene", "inputs": [], "value_inputs": []}],
        "answer": answer,
        "template_filename": "test.yaml",
        "question_family_index": 0,
        "family": "test/family",
        "question_type": "binary" if answer == "yes" else "count",
        "template_index": 0,
        "params": {"<C>": "red"},
    }


@pytest.fixture
def questions_file(tmp_path) -> Path:
    path = tmp_path / "questions.json"
    records = [question_record(i, english, answer) for i, (english, answer, _, _) in enumerate(ITEMS)]
    path.write_text(json.dumps({"info": {"seed": 7, "version": "0.1.0"}, "questions": records}), encoding="utf-8")
    return path


def google_args(questions: Path, out: Path, *extra: str) -> list[str]:
    return ["--questions", questions, "--out", out, "--backend", "google", "--backoff", "0", *extra]


def read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_google_run_keeps_every_input_key_and_adds_the_russian(google, questions_file, tmp_path):
    out = tmp_path / "run" / "questions_ru.json"
    assert run_stage("translate", *google_args(questions_file, out, "--batch-size", "2")) == 0
    document = read(out)
    source = read(questions_file)
    assert len(document["questions"]) == len(ITEMS)
    for item, original, (_, _, russian, answer_ru) in zip(document["questions"], source["questions"], ITEMS, strict=True):
        assert {key: item[key] for key in original} == original
        assert item["question_ru"] == apply_yo_policy(russian, "e")
        assert item["answer_ru"] == answer_ru
        assert item["translator"] == "google"
    assert document["questions"][1]["question_ru"] == "Сколько еще других предметов?"
    info = document["info"]
    assert info["seed"] == 7  # the input's record is kept
    run_record = info["translate"]
    assert run_record["backend"] == "google" and run_record["yo"] == "e" and run_record["complete"] is True
    assert run_record["failed"] == [] and run_record["batch_size"] == 2 and run_record["version"]
    assert run_record["backend_settings"]["timeout_s"] == 10.0
    assert (out.parent / cli.CACHE_FILENAME).exists()
    assert not (out.parent / "questions_ru.json.parts").exists()


def test_yo_policy_applies_to_questions_and_answers(google, questions_file, tmp_path):
    out = tmp_path / "questions_ru.json"
    assert run_stage("translate", *google_args(questions_file, out, "--yo", "yo")) == 0
    items = read(out)["questions"]
    assert items[1]["question_ru"] == "Сколько ещё других предметов?"
    assert items[2]["answer_ru"] == "зелёный"


def test_a_killed_run_resumes_and_ends_with_what_an_uninterrupted_run_makes(
    google, questions_file, tmp_path, monkeypatch
):
    uninterrupted = tmp_path / "a" / "questions_ru.json"
    assert run_stage("translate", *google_args(questions_file, uninterrupted, "--batch-size", "2")) == 0

    out = tmp_path / "b" / "questions_ru.json"
    cache = tmp_path / "b" / "cache.sqlite"
    args = google_args(questions_file, out, "--batch-size", "2", "--cache", cache)
    real_realise = GoogleBackend.realise
    calls = []

    def killed_on_the_second_chunk(self, questions):
        calls.append(len(questions))
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real_realise(self, questions)

    monkeypatch.setattr(GoogleBackend, "realise", killed_on_the_second_chunk)
    assert run_stage("translate", *args) == 130
    assert not out.exists()
    [progress] = (out.parent / "questions_ru.json.parts").glob("pass_*.jsonl")
    assert len(progress.read_text(encoding="utf-8").splitlines()) == 2  # the run's fingerprint, then the one finished chunk
    monkeypatch.setattr(GoogleBackend, "realise", real_realise)

    cache.unlink()  # so that only the saved progress, not the cache, can spare the first chunk
    requests_before = len(google.requests)
    assert run_stage("translate", *args) == 0
    assert google.requests[requests_before:] == [english for english, *_ in ITEMS[2:]]
    resumed, reference = read(out), read(uninterrupted)
    assert resumed["questions"] == reference["questions"]
    for record in (resumed["info"]["translate"], reference["info"]["translate"]):
        record.pop("backend_settings")
    assert resumed["info"] == reference["info"]
    assert not (out.parent / "questions_ru.json.parts").exists()


def test_failures_are_reported_by_index_and_a_rerun_retries_only_them(google, questions_file, tmp_path, capsys):
    google.script(ITEMS[2][0], *["429"] * 2)
    google.script(ITEMS[4][0], "echo")
    out = tmp_path / "questions_ru.json"
    args = google_args(questions_file, out, "--retries", "1")
    assert run_stage("translate", *args) == cli.EXIT_FAILURES
    stderr = capsys.readouterr().err
    assert "question 2 failed: HTTP 429 Too Many Requests (gave up after 2 attempts)" in stderr
    assert "question 4 failed: echo: the translator returned the English text unchanged" in stderr
    assert "2 of 5 questions failed" in stderr
    partial = read(out)
    assert [item["question_index"] for item in partial["questions"]] == [0, 1, 3]
    assert partial["info"]["translate"]["complete"] is False
    assert [failure["index"] for failure in partial["info"]["translate"]["failed"]] == [2, 4]

    requests_before = len(google.requests)
    assert run_stage("translate", *args) == 0
    assert sorted(google.requests[requests_before:]) == sorted([ITEMS[2][0], ITEMS[4][0]])
    final = read(out)
    assert [item["question_index"] for item in final["questions"]] == [0, 1, 2, 3, 4]
    assert final["info"]["translate"]["complete"] is True


def test_a_finished_run_is_not_redone(google, questions_file, tmp_path, capsys):
    out = tmp_path / "questions_ru.json"
    assert run_stage("translate", *google_args(questions_file, out)) == 0
    before, requests_before = out.read_bytes(), len(google.requests)
    assert run_stage("translate", *google_args(questions_file, out)) == 0
    assert "is up to date" in capsys.readouterr().err
    assert out.read_bytes() == before and len(google.requests) == requests_before


def test_an_output_made_from_other_input_is_replaced_only_with_overwrite(google, questions_file, tmp_path, capsys):
    out = tmp_path / "questions_ru.json"
    assert run_stage("translate", *google_args(questions_file, out)) == 0
    document = read(questions_file)
    document["questions"] = document["questions"][:2]
    questions_file.write_text(json.dumps(document), encoding="utf-8")
    capsys.readouterr()
    assert run_stage("translate", *google_args(questions_file, out)) == 2
    assert "pass --overwrite" in capsys.readouterr().err
    assert len(read(out)["questions"]) == 5
    assert run_stage("translate", *google_args(questions_file, out, "--overwrite")) == 0
    assert len(read(out)["questions"]) == 2


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


BAD_INPUTS = {
    "missing file": (lambda d: d / "nope.json", [], "no such file"),
    "malformed JSON": (lambda d: write(d / "q.json", '{"questions": [}'), [], "not valid JSON"),
    "no questions list": (lambda d: write(d / "q.json", '{"scenes": []}'), [], 'a "questions" list'),
    "question without text": (
        lambda d: write(d / "q.json", '{"questions": [{"answer": "yes"}]}'), ["--backend", "google"], "question 0 has no 'question'"
    ),
    "unknown answer": (
        lambda d: write(d / "q.json", '{"questions": [{"question": "Q?", "answer": "magenta"}]}'),
        ["--backend", "google"],
        "question 0: answer 'magenta'",
    ),
    "negative batch size": (lambda d: write(d / "q.json", '{"questions": []}'), ["--batch-size", "-3"], "positive integer"),
    "zero timeout": (lambda d: write(d / "q.json", '{"questions": []}'), ["--timeout", "0"], "positive number"),
    "negative retries": (lambda d: write(d / "q.json", '{"questions": []}'), ["--retries", "-1"], "non-negative"),
    "unknown backend": (lambda d: write(d / "q.json", '{"questions": []}'), ["--backend", "yandex"], "invalid choice"),
    "unknown yo policy": (lambda d: write(d / "q.json", '{"questions": []}'), ["--yo", "ё"], "invalid choice"),
    "model without marian": (lambda d: write(d / "q.json", '{"questions": []}'), ["--backend", "google", "--model", "m"], "--model applies only"),
    "cache with native": (lambda d: write(d / "q.json", '{"questions": []}'), ["--cache", "c.sqlite"], "--cache applies only"),
    "missing families": (lambda d: write(d / "q.json", '{"questions": []}'), ["--families", "/nonexistent/families"], "no such folder"),
}


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_bad_input_is_one_line_exit_2_and_nothing_written(case, tmp_path, capsys):
    make_input, extra, message = BAD_INPUTS[case]
    out = tmp_path / "out" / "questions_ru.json"
    assert run_stage("translate", "--questions", make_input(tmp_path), "--out", out, *extra) == 2
    stderr = capsys.readouterr().err
    assert stderr.count("\n") == 1 and message in stderr, stderr
    assert not (tmp_path / "out").exists()


def test_as_a_process_bad_input_is_one_line_without_traceback(tmp_path):
    result = run_stage_process("translate", "--questions", tmp_path / "nope.json", "--out", tmp_path / "o.json", timeout=60)
    assert result.returncode == 2
    assert result.stderr == f"python -m translate: error: --in {tmp_path / 'nope.json'}: no such file\n"


def test_help_explains_every_flag():
    result = run_stage_process("translate", "--help", timeout=60)
    assert result.returncode == 0
    for flag in ("--in", "--out", "--backend", "--model", "--cache", "--batch-size", "--yo", "--timeout",
                 "--retries", "--backoff", "--seed", "--families", "--overwrite"):
        assert flag in result.stdout


class RaisesOnOneQuestion:
    """A backend that breaks on one question, to check the CLI isolates it from its chunk."""

    name = "breaks-on-cylinders"

    def realise(self, questions):
        if any("cylinder" in question["question"] for question in questions):
            raise ValueError("cannot realise cylinders")
        return [question["question"].upper() for question in questions]


def test_an_exception_on_one_question_does_not_take_its_chunk_with_it():
    questions = [{"question": english} for english, *_ in ITEMS[:4]]
    texts, reasons = cli.realise_chunk(RaisesOnOneQuestion(), questions)
    assert texts == [ITEMS[0][0].upper(), ITEMS[1][0].upper(), None, ITEMS[3][0].upper()]
    assert reasons == {2: "ValueError: cannot realise cylinders"}


def native_questions(native, families_dir):
    """One question per family with Russian text (first attribute values), plus one without its params."""
    from assets.vocabulary import ATTRIBUTES, load_vocabulary

    vocabulary = load_vocabulary()
    families = [f for f in native.NativeRealiser(families_dir=families_dir).families.values() if f.templates]
    assert families, f"no family with Russian text in {families_dir}"
    records = []
    for index, family in enumerate(families[:4]):
        params = {}
        for slot, kind in family.kinds.items():
            if kind in ATTRIBUTES:
                params[slot] = vocabulary.names(kind)[index % len(vocabulary.names(kind))]
            elif kind == "relation":
                params[slot] = next(iter(vocabulary.relations))
            else:
                params[slot] = "2"
        record = question_record(index, "(English text not used by native)", "yes")
        records.append({**record, "family": family.family, "params": params})
    unknown = question_record(len(records), "?", "no")
    records.append({**unknown, "family": families[0].family, "params": {}})
    return records


def test_native_backend_through_the_cli(tmp_path):
    from translate import native
    records = native_questions(native, families_dir=None)
    questions = write(tmp_path / "questions.json", json.dumps({"info": {}, "questions": records}))
    realiser = native.NativeRealiser(seed=3)
    expected = [realiser.realise([record])[0] for record in records[:-1]]
    assert all(expected), expected

    out = tmp_path / "questions_ru.json"
    result = run_stage_process("translate", "--questions", questions, "--out", out, "--seed", "3")
    assert result.returncode == cli.EXIT_FAILURES
    assert "fails on them again on a rerun" in result.stderr and "rerun the same command" not in result.stderr
    document = read(out)
    assert [item["question_ru"] for item in document["questions"]] == [apply_yo_policy(t, "e") for t in expected]
    assert {item["translator"] for item in document["questions"]} == {"native"}
    [failure] = document["info"]["translate"]["failed"]
    assert failure["index"] == len(records) - 1 and "has no value for" in failure["reason"]
    assert document["info"]["translate"]["seed"] == 3


def test_a_question_of_a_family_not_given_stops_the_run_with_one_line_naming_families(tmp_path):
    from translate import native
    records = native_questions(native, families_dir=None)
    records[2] = {**records[2], "family": "no/such_family"}
    questions = write(tmp_path / "questions.json", json.dumps({"info": {"families": "builtin"}, "questions": records}))
    out = tmp_path / "questions_ru.json"
    result = run_stage_process("translate", "--in", questions, "--out", out)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    [line] = result.stderr.splitlines()
    assert "question 2 is of family 'no/such_family'" in line and "the shipped families" in line and "--families DIR" in line
    assert "rerun" not in line and not out.exists()


def test_programs_are_passed_on_unread_only_in_their_exact_form(tmp_path):
    from ruclevr.jsonstream import JsonDocument, encode_extended

    def node(function, inputs, values):
        return {"function": function, "inputs": inputs, "value_inputs": values}

    programs = {
        "plain": [node("scene", [], []), node("filter_color", [0], ["red"]), node("count", [1], [])],
        "big input": [node("scene", [], []), node("unique", [2**70], [])],
        "extra key": [{"function": "scene", "inputs": [], "value_inputs": [], "side_inputs": []}],
        "keys in another order": [{"inputs": [], "function": "scene", "value_inputs": []}],
        "a float": [node("scene", [1.5], [])],
        "a quote": [node("scene", [], ['a"b'])],
        "not ascii": [node("scene", [], ["красный"])],
        "empty": [],
    }
    unread = {"plain", "big input"}
    for name, program in programs.items():
        item = {"split": "new", "image_index": 0, "question": "q?", "program": program, "answer": "2"}
        layout = json.dumps({"info": {}, "questions": [item]}, ensure_ascii=False, indent=2)
        (tmp_path / "q.json").write_text(layout, encoding="utf-8")
        [(value, text)] = JsonDocument(tmp_path / "q.json", "questions").items_with_text(unread=cli.PROGRAM)
        assert ("program" not in value) == (name in unread), name
        assert value == ({k: v for k, v in item.items() if k != "program"} if name in unread else item)
        for extra in ({"question_ru": "в?", "answer_ru": "2", "translator": "native"}, {"answer": "3"}):
            expected = json.dumps({**item, **extra}, ensure_ascii=False, indent=2).replace("\n", "\n    ").encode()
            assert encode_extended(value, text, extra) == expected, name
