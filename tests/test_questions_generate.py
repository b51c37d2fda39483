"""Runs over sampled scenes: seeded, resumable, bounded, and the CLI's contract (files, info, errors)."""

from __future__ import annotations

import json
from collections import Counter

import pytest

import questions.generate as generation
from questions.cli import main
from questions.executor import execute_program
from questions.families import load_families
from questions.generate import Settings, generate
from questions.scene_questions import program_key
from render import sample_scene_graph
from ruclevr.cli import UsageError

SCENE_COUNT = 60


@pytest.fixture(scope="module")
def scenes():
    return [sample_scene_graph(11, index) for index in range(SCENE_COUNT)]


@pytest.fixture(scope="module")
def families():
    return load_families()


@pytest.fixture(scope="module")
def reference(scenes, families):
    return generate(scenes, families, Settings(seed=5), progress=False)


def test_same_seed_same_questions_other_seed_other_questions(scenes, families, reference):
    assert generate(scenes, families, Settings(seed=5), progress=False) == reference
    other = generate(scenes, families, Settings(seed=6), progress=False)
    assert [q["question"] for q in other] != [q["question"] for q in reference]


def test_questions_are_answered_by_their_programs(scenes, reference):
    assert len(reference) == 10 * SCENE_COUNT
    for question in reference:
        assert execute_program(question["program"], scenes[question["image_index"]]) == question["answer"]
    assert [q["question_index"] for q in reference] == list(range(len(reference)))


def test_interrupted_run_resumes_to_the_same_questions(tmp_path, scenes, families, reference):
    record = {"seed": 5}

    def stop_after_first_chunk(done):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        generate(scenes, families, Settings(seed=5), run_record=record, checkpoint_dir=tmp_path,
                 chunk_scenes=25, on_chunk=stop_after_first_chunk, progress=False)
    assert [path.name for path in sorted(tmp_path.glob("scenes_*.json"))] == ["scenes_00000000_00000025.json"]
    resumed = []
    result = generate(scenes, families, Settings(seed=5), run_record=record, checkpoint_dir=tmp_path,
                      chunk_scenes=25, on_scene=lambda position, made: resumed.append(position), progress=False)
    assert resumed[0] == 25  # the first chunk was not made again
    assert result == reference
    with pytest.raises(UsageError, match="holds a stopped run made with other settings"):
        generate(scenes, families, Settings(seed=5), run_record={"seed": 6}, checkpoint_dir=tmp_path, progress=False)


def test_budget_bounds_each_scene(scenes, families):
    tight = generate(scenes[:20], families, Settings(seed=5, budget=60), progress=False)
    per_image = Counter(q["image_index"] for q in tight)
    assert 0 < len(tight) < 10 * 20
    assert max(per_image.values()) < 10
    for question in tight:
        assert execute_program(question["program"], scenes[question["image_index"]]) == question["answer"]


def test_per_image_and_split_repeats(scenes, families):
    few = generate(scenes, families, Settings(seed=5, per_image=3), progress=False)
    assert Counter(q["image_index"] for q in few) == {index: 3 for index in range(SCENE_COUNT)}
    loose = generate(scenes, families, Settings(seed=5, split_repeats=2), progress=False)
    assert max(Counter(program_key(q["program"]) for q in loose).values()) <= 2


# -- the command line -------------------------------------------------------------------------------


@pytest.fixture()
def scenes_file(tmp_path, scenes):
    path = tmp_path / "scenes.json"
    path.write_text(json.dumps({"info": {"seed": 11}, "scenes": scenes[:30]}))
    return path


def test_cli_writes_questions_with_info(tmp_path, scenes_file, run_captured):
    out = tmp_path / "out" / "questions.json"
    code, _, err = run_captured("questions", "--scenes", scenes_file, "--out", out, "--seed", 3, "--per-image", 4)
    assert code == 0 and "wrote 120 questions for 30 scenes" in err
    data = json.loads(out.read_text())
    info = data["info"]
    assert info["seed"] == 3 and info["per_image"] == 4 and info["version"] and info["family_count"] >= 40
    assert info["question_count"] == len(data["questions"]) == 120 and info["scenes_info"] == {"seed": 11}
    question = data["questions"][0]
    assert list(question) == ["split", "image_index", "image_filename", "question_index", "question", "program", "answer",
                              "template_filename", "question_family_index", "family", "question_type", "template_index", "params",
                              "unsafe_readings"]
    assert not (tmp_path / "out" / "questions.json.partial").exists()
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["questions.json"]

    before = out.read_bytes()
    code, _, err = run_captured("questions", "--scenes", scenes_file, "--out", out, "--seed", 3, "--per-image", 4)
    assert code == 0 and "up to date" in err and out.read_bytes() == before
    code, _, err = run_captured("questions", "--scenes", scenes_file, "--out", out, "--seed", 4, "--per-image", 4)
    assert code == 2 and "pass --overwrite" in err and out.read_bytes() == before
    code, _, err = run_captured("questions", "--scenes", scenes_file, "--out", out, "--seed", 4, "--per-image", 4, "--overwrite")
    assert code == 0 and json.loads(out.read_text())["info"]["seed"] == 4


def test_cli_resumes_a_stopped_run_to_the_same_file(tmp_path, scenes_file, run_captured, monkeypatch):
    whole = tmp_path / "whole.json"
    assert run_captured("questions", "--scenes", scenes_file, "--out", whole)[0] == 0

    stopped = tmp_path / "stopped.json"
    save_chunk = generation._save_chunk

    def save_then_stop(*args, **kwargs):
        save_chunk(*args, **kwargs)
        raise KeyboardInterrupt  # as if the run were killed right after its first checkpoint

    monkeypatch.setattr(generation, "_save_chunk", save_then_stop)
    code, _, err = run_captured("questions", "--scenes", scenes_file, "--out", stopped, "--checkpoint-every", 10)
    assert code == 130 and "rerun the same command to resume" in err
    assert not stopped.exists() and (tmp_path / "stopped.json.partial" / "scenes_00000000_00000010.json").exists()
    monkeypatch.setattr(generation, "_save_chunk", save_chunk)
    assert run_captured("questions", "--scenes", scenes_file, "--out", stopped, "--checkpoint-every", 10)[0] == 0
    assert json.loads(stopped.read_text())["questions"] == json.loads(whole.read_text())["questions"]
    assert not (tmp_path / "stopped.json.partial").exists()


@pytest.mark.parametrize(
    "change, argv, message",
    [
        (None, ["--per-image", "-3"], "--per-image: must be a positive integer, got -3"),
        (None, ["--seed", "x"], "--seed: must be an integer, got 'x'"),
        ("missing", [], "--in: no such file"),
        ("not json", [], "is not valid JSON"),
        ("pink", [], "scene 1: object 0 has unknown color 'pink'; allowed: gray, red"),
        ("no relations", [], "scene 0: relationships['left'] must list one entry per object"),
        ("twice", [], "image_index 0 appears twice in split 'new'"),
    ],
)
def test_cli_bad_input_is_one_line_and_exit_2(tmp_path, scenes_file, run_captured, change, argv, message):
    data = json.loads(scenes_file.read_text())
    if change == "missing":
        scenes_file.unlink()
    elif change == "not json":
        scenes_file.write_text('{"scenes": [')
    elif change == "pink":
        data["scenes"][1]["objects"][0]["color"] = "pink"
    elif change == "no relations":
        data["scenes"][0]["relationships"] = {}
    elif change == "twice":
        data["scenes"][1]["image_index"] = 0
    if change in ("pink", "no relations", "twice"):
        scenes_file.write_text(json.dumps(data))
    out = tmp_path / "q.json"
    code, _, err = run_captured("questions", "--scenes", scenes_file, "--out", out, *argv)
    assert code == 2
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert not out.exists()


def test_cli_help_explains_every_flag(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    text = capsys.readouterr().out
    for flag in ("--in", "--out", "--per-image", "--seed", "--families", "--budget", "--split-repeats",
                 "--checkpoint-every", "--overwrite", "validate"):
        assert flag in text


def test_an_unexpected_failure_names_the_scene_and_keeps_finished_chunks(tmp_path, scenes_file, run_captured, monkeypatch):
    calls = []
    make = generation.QuestionMaker.questions_for_scene

    def fail_on_the_fifteenth(self, scene, state):
        calls.append(scene["image_index"])
        if len(calls) == 15:
            raise ValueError("boom")
        return make(self, scene, state)

    monkeypatch.setattr(generation.QuestionMaker, "questions_for_scene", fail_on_the_fifteenth)
    out = tmp_path / "q.json"
    code, _, err = run_captured("questions", "--scenes", scenes_file, "--out", out, "--checkpoint-every", 10)
    assert code == 1 and "failed on scene ruclevr_000014.png: ValueError: boom" in err and "finished chunks are kept" in err
    assert not out.exists() and (tmp_path / "q.json.partial" / "scenes_00000000_00000010.json").exists()
