"""``python -m dataset families validate [--realise N]``: every family checked by every stage that reads it and
realised before a run, problems located by file and line; ``python -m questions validate`` says where that moved."""

from __future__ import annotations

import re
from pathlib import Path

from helpers import run_stage_process

from questions.families import load_families
from questions.occlusion import uses_occlusion

SHIPPED = Path(__file__).resolve().parents[1] / "questions" / "families"
SHIPPED_COUNT = len(load_families())

RELATED_COUNT = """\
  - id: mine/count_related
    group: count
    params: {<Z>: size, <C>: color, <M>: material, <S>: shape, <R>: relation,
             <Z2>: size, <C2>: color, <M2>: material, <S2>: shape}
    program:
      - {function: scene}
      - {function: filter, inputs: [0], value_inputs: [<Z>, <C>, <M>, <S>]}
      - {function: unique, inputs: [1]}
      - {function: relate, inputs: [2], value_inputs: [<R>]}
      - {function: filter, inputs: [3], value_inputs: [<Z2>, <C2>, <M2>, <S2>]}
      - {function: count, inputs: [4]}
    text:
      en: ["How many <Z2> <C2> <M2> <S2>s are <R> the <Z> <C> <M> <S>?"]
      ru: ["Сколько [<Z2> <C2> <M2> <S2>|род,мн] находится [<R> <Z> <C> <M> <S>]?"]
"""

WITHOUT_OTHER = """\
  - id: mine/count_same_color
    group: count
    params: {<Z>: size, <C>: color, <M>: material, <S>: shape,
             <Z2>: size, <C2>: color, <M2>: material, <S2>: shape}
    program:
      - {function: scene}
      - {function: filter, inputs: [0], value_inputs: [<Z>, <C>, <M>, <S>]}
      - {function: unique, inputs: [1]}
      - {function: same_color, inputs: [2]}
      - {function: filter, inputs: [3], value_inputs: [<Z2>, <C2>, <M2>, <S2>]}
      - {function: count, inputs: [4]}
    constraints:
      empty: [<C2>]
    text:
      en: ["How many other <Z2> <C2> <M2> <S2>s have the same color as the <Z> <C> <M> <S>?",
           "How many <Z2> <C2> <M2> <S2>s have the same color as the <Z> <C> <M> <S>?"]
"""


def line_of(text: str, needle: str) -> int:
    return next(number for number, line in enumerate(text.splitlines(), 1) if needle in line)


def test_every_shipped_family_is_realised_without_a_problem():
    result = run_stage_process("dataset", "families", "validate", SHIPPED, "--realise", "20")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[-1].startswith(f"dataset families: ok: {SHIPPED_COUNT} families")
    reports = [line for line in lines if " questions on " in line]
    assert len(reports) == SHIPPED_COUNT
    assert all("ru: " in line and ", 0 rejected by the filter" in line for line in reports)
    # 20 of each family, but count/same_color: its count is never 0 but on one scene in ten (issue 25),
    # so the 200 scenes the check samples give it about a dozen
    made = {line.split(": ")[1]: int(line.split(": ")[2].split()[0]) for line in reports}
    # Occlusion families need a render's masks: sampled graphs ask them nothing (docs/questions.md#occlusion).
    by_masks = {name for name, family in load_families().items() if uses_occlusion(family.program)}
    assert by_masks and all(made[family] == 0 for family in by_masks), made
    assert all(n == 20 for family, n in made.items() if family not in by_masks | {"count/same_color"}), made
    assert made["count/same_color"] >= 8, made


def test_a_template_with_an_unsafe_reading_is_caught_with_file_and_line(tmp_path):
    text = "families:\n" + WITHOUT_OTHER
    path = tmp_path / "mine.yaml"
    path.write_text(text, encoding="utf-8")
    (tmp_path / "questions.json").write_text("{}", encoding="utf-8")  # an output in the folder: not a family file
    assert run_stage_process("dataset", "families", "validate", tmp_path).returncode == 0  # well formed ...

    result = run_stage_process("dataset", "families", "validate", tmp_path, "--realise", "20")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    # without "other", the anchor itself may be counted where it fits the description
    line = line_of(text, '"How many <Z2> <C2> <M2> <S2>s have')
    where = f"{path}:{line}: family mine/count_same_color text.en[1]"
    [unsafe] = [line for line in result.stderr.splitlines() if line.startswith(f"dataset families: {where}:")]
    # (about 17 of the 200 scenes tried ask it: «other cubes the color of the cube», the only cube, is
    # none by the words and not asked: questions/named_objects.py)
    found = re.search(r"admits another reading with another answer in (\d+) of (\d+) questions \(self:<S2>\)", unsafe)
    assert found and int(found[2]) >= 15 and int(found[1]) > int(found[2]) // 2, unsafe
    # the message quotes a text the template says and the other reading in words
    assert re.search(r"\), e\.g\. «How many \w[^»]* have the same color as the [^»]+\?», also read with the set of <S2> "
                     r"holding its anchor object too; rewrite it", unsafe), unsafe
    assert not any("text.en[0]" in line for line in result.stderr.splitlines())  # the safe template passes
    assert f"mine/count_same_color: {found[2]} questions" in result.stdout

    fixed = "families:\n" + WITHOUT_OTHER.replace(',\n           "How many <Z2> <C2> <M2> <S2>s have the same color as the <Z> <C> <M> <S>?"', "")
    assert fixed.count("have the same color") == 1
    path.write_text(fixed, encoding="utf-8")
    assert run_stage_process("dataset", "families", "validate", tmp_path, "--realise", "20").returncode == 0


def test_a_russian_refusal_quotes_the_text_and_the_other_reading(tmp_path):
    russian = ('      ru: ["Сколько [другой <Z2> <C2> <M2> <S2>|род,мн] такого же цвета, как [<Z> <C> <M> <S>]?",\n'
               '           "Сколько [<Z2> <C2> <M2> <S2>|род,мн] такого же цвета, как [<Z> <C> <M> <S>]?"]\n')
    text = "families:\n" + WITHOUT_OTHER + russian
    (tmp_path / "mine.yaml").write_text(text, encoding="utf-8")
    result = run_stage_process("dataset", "families", "validate", tmp_path, "--realise", "20")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    line = line_of(text, '           "Сколько [<Z2>')
    where = f"{tmp_path / 'mine.yaml'}:{line}: family mine/count_same_color text.ru[1]"
    [refused] = [line for line in result.stderr.splitlines() if line.startswith(f"dataset families: {where}:")]
    assert re.search(r"\(self:<S2>\), e\.g\. «Сколько [а-яё ]+ такого же цвета, как [а-яё ]+\?», also read with the set of <S2> "
                     r"holding its anchor object too; rewrite it \(docs/questions\.md, One reading per question\)$", refused), refused
    assert not any("text.ru[0]" in line for line in result.stderr.splitlines())  # «другой» keeps the anchor out


def test_questions_no_russian_template_can_say_are_a_problem_with_an_example(tmp_path):
    """translate fails on a question every Russian template refuses: validate --realise says how
    many of its sample, with one quoted and the reading the template admits."""
    russian = '      ru: ["Сколько [<Z2> <C2> <M2> <S2>|род,мн] такого же цвета, как [<Z> <C> <M> <S>]?"]\n'
    (tmp_path / "mine.yaml").write_text("families:\n" + WITHOUT_OTHER + russian, encoding="utf-8")
    result = run_stage_process("dataset", "families", "validate", tmp_path, "--realise", "20")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    # (questions/named_objects.py leaves out a few of the 20 tried: «things the color of the only cube» is none by the words)
    [summary] = [line for line in result.stdout.splitlines() if line.startswith("dataset families: mine/count_same_color: ")]
    asked = int(re.search(r"mine/count_same_color: (\d+) questions", summary).group(1))
    assert asked >= 15, summary
    unsaid = int(re.search(rf"ru: \d+ realised, \d+ refused, 0 rejected by the filter, (\d+) of {asked} questions said by no template", summary).group(1))
    assert unsaid >= asked // 2, summary
    [line] = [line for line in result.stderr.splitlines() if "no Russian template says" in line]
    assert re.search(rf"{re.escape(str(tmp_path / 'mine.yaml'))}: family mine/count_same_color: no Russian template says {unsaid} of {asked} "
                     r"questions with one reading \(self:<S2> in text\.ru\[0\]\), e\.g\. «Сколько [^»]+\?», also read with the set of "
                     r"<S2> holding its anchor object too; translate cannot realise such a question", line), line


def test_skolko_with_a_nominative_phrase_is_caught_with_file_and_line(tmp_path):
    text = "families:\n" + RELATED_COUNT.replace("|род,мн]", "]")  # «Сколько маленький предмет находится ...»
    path = tmp_path / "mine.yaml"
    path.write_text(text, encoding="utf-8")
    result = run_stage_process("dataset", "families", "validate", tmp_path, "--realise", "20")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    where = f"{path}:{line_of(text, 'Сколько [<Z2>')}: family mine/count_related "
    [found] = [line for line in result.stderr.splitlines() if line.startswith(f"dataset families: {where}")]
    assert "text.ru[0]" in found
    if run_stage_process("dataset", "families", "validate", tmp_path).returncode == 0:  # only saying it shows the case is wrong
        assert "the filter rejects 20 of 20 texts, e.g. «Сколько " in found and "should be in the genitive" in found
    path.write_text("families:\n" + RELATED_COUNT, encoding="utf-8")
    assert run_stage_process("dataset", "families", "validate", tmp_path, "--realise", "20").returncode == 0


def test_realise_on_given_scenes(tmp_path):
    import json

    from render import SceneOptions, sample_scene_graph

    scenes = [sample_scene_graph(5, index, SceneOptions(min_objects=4, max_objects=8)) for index in range(30)]
    scenes_file = tmp_path / "scenes.json"
    scenes_file.write_text(json.dumps({"info": {}, "scenes": scenes}), encoding="utf-8")
    folder = tmp_path / "families"
    folder.mkdir()
    (folder / "mine.yaml").write_text("families:\n" + RELATED_COUNT, encoding="utf-8")
    result = run_stage_process("dataset", "families", "validate", folder, "--realise", "3", "--scenes", scenes_file)
    assert result.returncode == 0, result.stderr
    assert "mine/count_related: 3 questions on " in result.stdout
    bad = run_stage_process("dataset", "families", "validate", folder, "--scenes", scenes_file)
    assert bad.returncode == 2 and "--scenes applies only with --realise" in bad.stderr


def test_questions_validate_says_in_one_line_where_the_cross_stage_check_lives(tmp_path):
    moved = run_stage_process("questions", "validate", SHIPPED, "--realise", "20")
    assert moved.returncode == 2 and moved.stdout == ""
    [line] = moved.stderr.splitlines()
    assert "python -m dataset families validate PATH... --realise N" in line
    assert run_stage_process("questions", "validate", SHIPPED).stdout.startswith(f"questions: ok: {SHIPPED_COUNT} families")


def test_realise_is_bounded(capsys):
    from dataset.cli import main

    assert main(["families", "validate", str(SHIPPED), "--realise", "1000000000"]) == 2
    assert "--realise 1000000000: at most 1000 questions a family" in capsys.readouterr().err
