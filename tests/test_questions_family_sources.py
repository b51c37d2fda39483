"""``--families DIR`` adds to the shipped families (repeatable, ``--families-only`` replaces them);
the choice is recorded in ``info.families`` and the later stages take it from there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import run_stage_process

from dataset.augment.run import chosen_families
from questions.families import FAMILIES_DIR, families_digest, load_families
from questions.family_sources import FamilySources, recorded_sources
from ruclevr.cli import UsageError

FAMILY = """\
families:
  - id: {id}
    group: mine
    params: {{<C>: color, <S>: shape}}
    program:
      - {{function: scene}}
      - {{function: filter, inputs: [0], value_inputs: [<C>, <S>]}}
      - {{function: count, inputs: [1]}}
    text:
      en: ["How many <C> <S>s are there?"]
      ru: ["Сколько [<C> <S>|род,мн] на картинке?"]
"""


def folder_with(tmp_path: Path, name: str, *ids: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "mine.yaml").write_text("".join(FAMILY.format(id=i) if n == 0 else FAMILY.format(id=i).split("\n", 1)[1]
                                              for n, i in enumerate(ids)), encoding="utf-8")
    return folder


def scenes_file(tmp_path: Path, count: int = 6) -> Path:
    from render import SceneOptions, sample_scene_graph

    scenes = [sample_scene_graph(1, index, SceneOptions(min_objects=4, max_objects=8)) for index in range(count)]
    path = tmp_path / "scenes.json"
    path.write_text(json.dumps({"info": {}, "scenes": scenes}), encoding="utf-8")
    return path


def test_sources_are_the_shipped_ones_then_each_folder_once(tmp_path):
    one, two = folder_with(tmp_path, "one", "mine/a"), folder_with(tmp_path, "two", "mine/b")
    both = FamilySources(folders=(one, two, one))
    families = load_families(both)
    assert list(families)[-2:] == ["mine/a", "mine/b"] and len(families) == len(load_families()) + 2
    assert list(load_families(FamilySources(shipped=False, folders=(one,)))) == ["mine/a"]
    assert list(load_families(one)) == ["mine/a"]  # a folder alone, as before
    assert families_digest() == families_digest(FamilySources()) == families_digest(FAMILIES_DIR)
    assert families_digest(both) != families_digest()
    assert FamilySources().record() == "builtin"
    assert both.record() == ["builtin", str(one.resolve()), str(two.resolve()), str(one.resolve())]
    for sources in (FamilySources(), both, FamilySources(shipped=False, folders=(two,))):
        assert FamilySources.from_record(sources.record()) == FamilySources(sources.shipped, tuple(
            Path(str(folder.resolve())) for folder in sources.folders))
    assert FamilySources.from_record(str(one)) == FamilySources.only(one)  # an older output's single folder


def test_questions_with_own_families_beside_the_shipped_ones(tmp_path):
    one, two = folder_with(tmp_path, "one", "mine/a"), folder_with(tmp_path, "two", "mine/b")
    scenes = scenes_file(tmp_path)
    out = tmp_path / "questions.json"
    result = run_stage_process("questions", "--in", scenes, "--out", out, "--families", one, "--families", two,
                               "--mix-by", "group", "--mix", "mine=0.5,count=0.5")
    assert result.returncode == 0, result.stderr
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["info"]["families"] == ["builtin", str(one.resolve()), str(two.resolve())]
    assert document["info"]["family_count"] == len(load_families()) + 2
    asked = {q["family"] for q in document["questions"]}
    assert {"mine/a", "mine/b"} <= asked and any(f.startswith("count/") for f in asked)

    only = tmp_path / "only.json"
    result = run_stage_process("questions", "--in", scenes, "--out", only, "--families", one, "--families-only")
    assert result.returncode == 0, result.stderr
    document = json.loads(only.read_text(encoding="utf-8"))
    assert document["info"]["families"] == [str(one.resolve())] and {q["family"] for q in document["questions"]} == {"mine/a"}

    translated = tmp_path / "questions_ru.json"
    result = run_stage_process("translate", "--in", only, "--out", translated)  # no --families: from info.families
    assert result.returncode == 0, result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith(f"translate: wrote {len(document['questions'])} questions to ")
    assert all(q["question_ru"].startswith("Сколько") for q in json.loads(translated.read_text())["questions"])

    (one / "mine.yaml").write_text((one / "mine.yaml").read_text().replace("на картинке", "на изображении"), encoding="utf-8")
    result = run_stage_process("translate", "--in", only, "--out", tmp_path / "again.json")
    assert result.returncode == 0 and f"the family files of {one.resolve()} changed since {only} was made" in result.stderr

    shipped_only = tmp_path / "shipped_only.json"
    result = run_stage_process("translate", "--in", only, "--out", shipped_only, "--families-only")
    assert result.returncode == 2 and "--families-only needs at least one --families DIR" in result.stderr


def test_an_id_used_by_a_shipped_family_is_one_line_naming_both_files(tmp_path):
    folder = folder_with(tmp_path, "mine", "count/zero_hop")
    result = run_stage_process("questions", "--in", scenes_file(tmp_path), "--out", tmp_path / "q.json", "--families", folder)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    [line] = result.stderr.splitlines()
    assert f"{folder / 'mine.yaml'}: family count/zero_hop: id already used in {FAMILIES_DIR / 'count.yaml'}" in line


def test_a_recorded_folder_that_is_gone_is_one_line_naming_families(tmp_path):
    gone = tmp_path / "gone"
    questions = tmp_path / "questions.json"
    questions.write_text(json.dumps({"info": {"families": ["builtin", str(gone)]}, "questions": []}), encoding="utf-8")
    result = run_stage_process("translate", "--in", questions, "--out", tmp_path / "ru.json")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    [line] = result.stderr.splitlines()
    assert f"info.families names {gone}, which is not a folder; pass --families DIR" in line
    assert not (tmp_path / "ru.json").exists()
    with pytest.raises(UsageError, match="not a folder"):
        recorded_sources({"families": [str(gone)]}, "--in x")


def test_augment_takes_the_recorded_families_unless_given(tmp_path):
    folder = folder_with(tmp_path, "mine", "mine/a")
    info = {"families": ["builtin", str(folder.resolve())]}
    sources, families = chosen_families(None, tmp_path / "q.json", info)
    assert sources == FamilySources(folders=(folder.resolve(),)) and "mine/a" in families and "count/zero_hop" in families
    sources, families = chosen_families(FamilySources(), tmp_path / "q.json", info)
    assert "mine/a" not in families
    assert "mine/a" not in chosen_families(None, tmp_path / "q.json", {"families": "builtin"})[1]
