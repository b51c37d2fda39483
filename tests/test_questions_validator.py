"""Family files: every problem reported with its file, line and place; bad files stop the CLI with exit 2."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

import pytest
from helpers import run_stage_process

from dataset.families.cli import language_checkers
from questions.cli import main
from questions.families import FAMILIES_DIR, load_families
from questions.validator import FamilyError, TemplateCheck, validate_file, validate_files

GOOD = """\
families:
  - id: test/count_color
    group: count
    params: {<C>: color, <S>: shape}
    program:
      - {function: scene}
      - {function: filter, inputs: [0], value_inputs: [<C>, <S>]}
      - {function: count, inputs: [1]}
    text:
      en: ["How many <C> <S>s are there?", "What number of [the] <C> <S>s are there?"]
      de: ["Wie viele [<C>|gent,plur] <S|gent> hier?", "Wie viele {<C>:ablt} <S> da?"]
"""


def write(tmp_path: Path, text: str, name: str = "family.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def line_of(text: str, marker: str) -> int:
    return next(number for number, line in enumerate(text.splitlines(), 1) if marker in line)


def problems_of(path: Path, checkers: Mapping[str, TemplateCheck] = MappingProxyType({})) -> list[str]:
    return [str(problem) for problem in validate_file(path, checkers)[1]]


def test_good_file_with_other_language_syntax_is_valid(tmp_path):
    families, problems = validate_file(write(tmp_path, GOOD))
    assert problems == []
    (family,) = families
    assert family.id == "test/count_color" and family.question_type == "count"
    assert family.text["de"][0] == "Wie viele [<C>|gent,plur] <S|gent> hier?"  # kept as written


def test_russian_templates_are_checked_by_the_realisers_rules_with_file_and_line(tmp_path):
    text = GOOD.replace("      de:", "      ru:").replace(
        '["Wie viele [<C>|gent,plur] <S|gent> hier?", "Wie viele {<C>:ablt} <S> da?"]',
        '\n        - "Сколько [<C> <S>|род,мн,звательный]?"'
        '\n        - "Сколько [<C> <S>|род,мн] у [блямбы|<S>]?"'
        '\n        - "Где [<C> <S>|им,ед] находятся?"'
        '\n        - "Сколько [<C> <S>|род,мн] на изображении?"',
    )
    path = write(tmp_path, text)
    problems = problems_of(path, language_checkers())  # the realiser's rules, as python -m dataset families validate gives them
    assert len(problems) == 3, problems
    feature, word, verb = problems
    assert feature.startswith(f"{path}:{line_of(text, 'звательный')}:") and "unknown feature 'звательный'" in feature
    assert word.startswith(f"{path}:{line_of(text, 'блямбы')}:") and "'блямбы'" in word
    assert verb.startswith(f"{path}:{line_of(text, 'находятся')}:") and "'находятся' is plural but its subject" in verb
    completed = run_stage_process("dataset", "families", "validate", path)
    assert completed.returncode == 2 and completed.stderr.count(str(path)) == 3 and "Traceback" not in completed.stderr
    assert validate_file(path)[1] == []  # the question engine alone checks their placeholders only
    assert run_stage_process("questions", "validate", path).returncode == 0


def test_invalid_yaml_names_file_and_line(tmp_path):
    text = GOOD.replace("      - {function: count, inputs: [1]}", "      - {function: count, inputs: [1}")
    path = write(tmp_path, text)
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:{line_of(text, 'function: count')}: invalid YAML")


def test_invalid_json_names_file_and_line(tmp_path):
    text = '{\n  "id": "test/x",\n  "group": "count",,\n}\n'
    path = write(tmp_path, text, "family.json")
    (problem,) = problems_of(path)
    assert problem.startswith(f"{path}:3: invalid JSON")


def test_json_family_file_is_read_like_yaml(tmp_path):
    import yaml

    path = write(tmp_path, json.dumps(yaml.safe_load(GOOD), ensure_ascii=False, indent=1), "family.json")
    assert problems_of(path) == []


@pytest.mark.parametrize(
    "old, new, marker, message",
    [
        ("function: count,", "function: counts,", "function: counts", "unknown function 'counts'"),
        ("{function: count, inputs: [1]}", "{function: count, inputs: [1, 0]}", "function: count", "count takes 1 inputs, got 2"),
        ("{function: filter, inputs: [0], value_inputs: [<C>, <S>]}", "{function: filter, inputs: [0], value_inputs: [<C>, <S>, <M>]}",
         "function: filter", "<M> names no declared parameter"),
        ('"How many <C> <S>s are there?"', '"How many <C> <Z> <S>s are there?"', "How many", "placeholder <Z> names no declared parameter"),
        ('hier?"', 'hier, <X>?"', "Wie viele", "placeholder <X> names no declared parameter"),
        ("{<C>: color, <S>: shape}", "{<C>: colour, <S>: shape}", "params:", "parameter <C> has unknown type 'colour'"),
        ("{function: count, inputs: [1]}", "{function: query_color, inputs: [1]}", "function: query_color", "query_color needs object here"),
        ("{function: count, inputs: [1]}", "{function: count, inputs: [2]}", "function: count", "input 2 is not an earlier node"),
        ("{function: scene}", "{function: scene, side_inputs: []}", "function: scene", "side_inputs are called value_inputs"),
        ('"How many <C> <S>s are there?"', '"How many <S>s are there?"', "How many", "parameter <C> is never said in this text"),
        ('"How many <C> <S>s are there?"', '"How many <C>s <S> are there?"', "How many", "only shape parameters have a plural"),
        ('"How many <C> <S>s are there?"', '"How many [<C>] <S>s are there?"', "How many", "optional part [<C>] holds a placeholder"),
        ("    group: count\n", "    group: count\n    constraints: {empty: [<Q>]}\n", "constraints", "'<Q>' names no declared parameter"),
        ("    group: count\n", "    group: count\n    colour: red\n", "colour", "unknown key 'colour'"),
        ("id: test/count_color", "id: Test Count", "id:", "id must look like 'group/name'"),
    ],
)
def test_each_problem_is_located(tmp_path, old, new, marker, message):
    assert old in GOOD
    text = GOOD.replace(old, new)
    path = write(tmp_path, text)
    problems = problems_of(path)
    assert any(message in problem for problem in problems), problems
    located = [problem for problem in problems if message in problem][0]
    assert located.startswith(f"{path}:{line_of(text, marker)}: family ")


def test_every_problem_of_a_file_is_reported(tmp_path):
    text = GOOD.replace("function: count,", "function: counts,").replace("<C>: color", "<C>: colour")
    text += GOOD.replace("families:\n", "").replace("test/count_color", "test/second").replace('"How many <C>', '"How many <X> <C>')
    problems = problems_of(write(tmp_path, text))
    messages = " | ".join(problems)
    assert "unknown function 'counts'" in messages
    assert "unknown type 'colour'" in messages
    assert "placeholder <X> names no declared parameter" in messages and "family test/second" in messages


def test_ids_must_be_unique_across_files(tmp_path):
    first, second = write(tmp_path, GOOD, "a.yaml"), write(tmp_path, GOOD, "b.yaml")
    families, problems = validate_files([first, second])
    assert len(families) == 1
    assert [str(p) for p in problems] == [f"{second}: family test/count_color: id already used in {first}"]


def test_a_key_given_twice_is_a_problem(tmp_path):
    text = GOOD.replace("    group: count\n", "    group: count\n    group: exist\n")
    (problem,) = problems_of(write(tmp_path, text))
    assert "key 'group' given twice" in problem and f":{line_of(text, 'group: exist')}:" in problem


def test_load_families_raises_with_all_problems(tmp_path):
    write(tmp_path, GOOD.replace("function: count,", "function: counts,").replace("<C>: color", "<C>: colour"))
    with pytest.raises(FamilyError) as raised:
        load_families(tmp_path)
    problems = raised.value.problems
    assert len(problems) >= 2
    assert str(raised.value) == f"{problems[0]} (and {len(problems) - 1} more; run `python -m questions validate` to see all)"


def test_skill_and_difficulty_given_or_from_the_program(tmp_path):
    (family,) = validate_file(write(tmp_path, GOOD))[0]
    assert (family.skill, family.difficulty) == ("static counting", 1)
    given = GOOD.replace("    group: count\n", "    group: count\n    skill: hypothetical reasoning\n    difficulty: 3\n")
    (family,) = validate_file(write(tmp_path, given))[0]
    assert (family.skill, family.difficulty) == ("hypothetical reasoning", 3)
    wrong = GOOD.replace("    group: count\n", "    group: count\n    skill: guessing\n    difficulty: 11\n")
    problems = problems_of(write(tmp_path, wrong))
    assert any("skill must be one of" in problem and "'guessing'" in problem for problem in problems)
    assert any("difficulty must be a whole number from 1 to 10; got 11" in problem for problem in problems)


def test_a_family_without_a_skill_gets_the_one_its_program_tests():
    """A user's what-if, perspective or occlusion family that names no skill is not filed as counting."""
    from questions.families import load_families
    from questions.skills import default_skill

    shipped = load_families()
    for family_id, skill in (("hypothetical/remove/count", "hypothetical reasoning"),
                             ("hypothetical/swap/count", "hypothetical reasoning"),
                             ("perspective/count/left", "spatial perspective"),
                             ("occlusion/count_hidden", "overlapping object differentiation"),
                             ("occlusion/is_hidden", "overlapping object differentiation"),
                             ("count/zero_hop", "static counting")):
        family = shipped[family_id]
        assert default_skill([node.function for node in family.program], family.answer_type) == skill, family_id


def test_shipped_families(capsys):
    families = load_families()
    assert len(families) >= 110
    assert {family.question_type for family in families.values()} == {"binary", "colors", "count", "materials", "shapes", "size"}
    groups = {family.group for family in families.values()}
    assert groups == {"query_attribute", "compare_attribute", "exist", "count", "compare_integer",
                      "superlative", "between", "ordinal", "arithmetic", "quantifier", "occlusion", "hypothetical",
                      "perspective"}
    assert main(["validate", str(FAMILIES_DIR)]) == 0
    assert f"ok: {len(families)} families" in capsys.readouterr().out


def test_validate_command_lists_problems_and_exits_2(tmp_path, capsys):
    text = GOOD.replace("function: count,", "function: counts,").replace("<C>: color", "<C>: colour")
    path = write(tmp_path, text)
    assert main(["validate", str(path)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert any(line.startswith(f"questions: {path}:{line_of(text, 'counts')}:") and "unknown function 'counts'" in line for line in lines)
    assert any(f"{path}:{line_of(text, 'colour')}:" in line and "unknown type 'colour'" in line for line in lines)
    assert lines[-1].startswith("questions: ") and "problem(s) in 1 file(s)" in lines[-1]


def test_validate_command_on_a_missing_file(tmp_path, capsys):
    assert main(["validate", str(tmp_path / "nope.yaml")]) == 2
    assert "nope.yaml: no such file" in capsys.readouterr().err


def test_generation_with_bad_families_exits_2_with_one_line(tmp_path):
    families = tmp_path / "families"
    families.mkdir()
    write(families, GOOD.replace("function: count,", "function: counts,"))
    scenes = tmp_path / "scenes.json"
    scenes.write_text(json.dumps({"info": {}, "scenes": []}))
    out = tmp_path / "questions.json"
    result = run_stage_process("questions", "--scenes", scenes, "--out", out, "--families", families)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert "unknown function 'counts'" in result.stderr and "family.yaml:" in result.stderr
    assert not out.exists()


def test_the_documented_worked_example_is_a_valid_family_with_its_hand_answer(tmp_path):
    import re

    from questions.plan import Plan
    from questions.random_stream import RandomStream
    from questions.scene_index import SceneIndex
    from questions.search import SceneSearch

    guide = (Path(__file__).resolve().parents[1] / "docs" / "questions.md").read_text(encoding="utf-8")
    section = guide[guide.index("## Adding a question family"):]
    example = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
    path = write(tmp_path, "families:\n" + example)
    (family,), problems = validate_file(path)
    assert problems == [] and family.id == "query/and_relate/color"
    scene = json.loads((Path(__file__).parent / "data" / "questions" / "scene_row.json").read_text())
    search = SceneSearch(SceneIndex.from_scene(scene), RandomStream.for_unit("questions.search", 0, 0))
    params = {"<M>": "metal", "<S>": "sphere", "<R>": "front", "<Z2>": "large", "<S2>": "cube", "<R2>": "behind"}
    assert search.instantiate(Plan.of(family), params).answer == "blue"


def test_misspelt_names_get_the_closest_known_name(tmp_path):
    text = (GOOD.replace("{<C>: color, <S>: shape}", "{<C>: colour, <S>: shape, <S2>: shape, <Z>: size}")
            .replace("      - {function: count, inputs: [1]}",
                     "      - {function: scene}\n"
                     "      - {function: filter_shape, inputs: [2], value_inputs: [<S3>]}\n"
                     "      - {function: filter_size, inputs: [3], value_inputs: [larg]}\n"
                     "      - {function: intersection, inputs: [1, 4]}\n"
                     "      - {functoin: count, inputs: [5]}"))
    problems = problems_of(write(tmp_path, text))
    assert any("unknown type 'colour' (did you mean 'color'?)" in p for p in problems)
    assert any("<S3> names no declared parameter (did you mean '<S2>'?)" in p for p in problems)
    assert any("unknown size 'larg' (did you mean 'large'?)" in p for p in problems)
    assert any(f":{line_of(text, 'intersection')}:" in p and "'intersection' (did you mean 'intersect'?)" in p for p in problems)
    assert any("unknown key 'functoin' (did you mean 'function'?)" in p for p in problems)
    assert not any("did you mean '<S>'" in p or "did you mean '<Z>'" in p for p in problems)  # only the same letter


def test_a_json_file_in_a_folder_is_not_a_family_file(tmp_path):
    write(tmp_path, GOOD)
    write(tmp_path, '{"info": {}, "questions": []}', name="questions.json")
    assert list(load_families(tmp_path)) == ["test/count_color"]
    assert main(["validate", str(tmp_path)]) == 0
