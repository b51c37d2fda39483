"""``--mix``: families are drawn so that a run reaches the asked mix of question types, groups or hops."""

from __future__ import annotations

import json
from collections import Counter
from functools import partial

import pytest
from helpers import run_stage_process

from questions.families import load_families
from questions.generate import Settings, generate
from questions.scene_questions import mix_class

TYPE_MIX = (("binary", 0.3), ("count", 0.2), ("colors", 0.2), ("shapes", 0.1), ("materials", 0.1), ("size", 0.1))


@pytest.fixture(scope="module")
def scenes(thousand_scenes):
    return thousand_scenes


@pytest.fixture(scope="module")
def families():
    return load_families()


def reached(questions, families, axis):
    counts = Counter(mix_class(families[q["family"]], axis) for q in questions)
    return {name: count / len(questions) for name, count in counts.items()}


def test_a_mix_of_question_types_is_reached_within_2_points_on_1000_scenes(scenes, families):
    questions = generate(scenes, families, Settings(seed=0, mix=TYPE_MIX), progress=False)
    # 97.5 %, not 99 %, since issue 25: counts rarely 0 and answers balanced given the named values
    # leave fewer questions to a mix that asks 20 % colours and 20 % counts (98.0 % on these scenes)
    # 97.4 % with issue 25's balance and issue 23's image relations; 96.7 % with issue 35's families (the
    # occlusion ones ask nothing on graph-only scenes, the what-if ones balance per named attribute); 96.1 %
    # since issue 36 (a count whose set holds an object the question names is not asked: questions/named_objects.py)
    assert len(questions) >= 0.955 * 10 * len(scenes)
    shares = reached(questions, families, "type")
    assert set(shares) == {name for name, _ in TYPE_MIX}
    for name, share in TYPE_MIX:
        assert abs(shares[name] - share) <= 0.02, (name, shares[name], share)


@pytest.mark.parametrize("axis, mix", [
    ("hops", (("0", 0.4), ("1", 0.3), ("2", 0.2), ("3", 0.1))),
    ("group", (("query_attribute", 0.4), ("count", 0.3), ("exist", 0.2), ("superlative", 0.1))),
    ("skill", (("hypothetical reasoning", 0.2), ("spatial perspective", 0.2), ("spatial object relationship", 0.6))),
])
def test_a_mix_of_hops_or_groups(scenes, families, axis, mix):
    questions = generate(scenes[:300], families, Settings(seed=0, mix=mix, mix_by=axis), progress=False)
    shares = reached(questions, families, axis)
    assert set(shares) == {name for name, _ in mix}
    for name, share in mix:
        assert abs(shares[name] - share) <= 0.02, (name, shares[name], share)


def test_without_a_mix_every_type_keeps_its_families_turn(scenes, families):
    questions = generate(scenes[:100], families, Settings(seed=0), progress=False)
    assert generate(scenes[:100], families, Settings(seed=0, mix=()), progress=False) == questions
    assert {q["question_type"] for q in questions} == {name for name, _ in TYPE_MIX}


run_questions = partial(run_stage_process, "questions")


def test_the_cli_records_the_mix(tmp_path, scenes):
    scenes_file = tmp_path / "scenes.json"
    scenes_file.write_text(json.dumps({"info": {}, "scenes": scenes[:20]}))
    out = tmp_path / "questions.json"
    result = run_questions("--scenes", str(scenes_file), "--out", str(out), "--quiet", "--mix", "binary=0.5,count=0.5")
    assert result.returncode == 0, result.stderr
    written = json.loads(out.read_text())
    assert written["info"]["mix"] == {"by": "type", "shares": {"binary": 0.5, "count": 0.5}}
    assert Counter(q["question_type"] for q in written["questions"]) == {"binary": 100, "count": 100}


@pytest.mark.parametrize("args, message", [
    (["--mix", "binary=0.5,count=0.6"], "the shares sum to 1.1, not 1"),
    (["--mix", "yesno=1"], "unknown type 'yesno'"),
    (["--mix", "binary"], "'binary' is not CLASS=SHARE"),
    (["--mix", "7=1", "--mix-by", "hops"], "unknown hops '7'"),
])
def test_a_bad_mix_is_one_line_exit_2_and_nothing_written(tmp_path, scenes, args, message):
    scenes_file = tmp_path / "scenes.json"
    scenes_file.write_text(json.dumps({"info": {}, "scenes": scenes[:2]}))
    out = tmp_path / "questions.json"
    result = run_questions("--scenes", str(scenes_file), "--out", str(out), *args)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1 and message in lines[0] and "Traceback" not in result.stderr
    assert not out.exists()
