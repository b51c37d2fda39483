"""docs/questions.md's worked example of a family of one's own, run as the page writes it.

The family file and the commands (with the output lines they print) are read from the page and
run in a temporary folder: validate, validate --realise, and a tiny real ``dataset build
--families DIR`` (real bpy at 48×32, 2 samples) to MERA items. The build's items are then
checked: shipped and own families both present, translate given no family option, and every
answer right by executing its program on the scene graph again (questions/executor.py).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from dataset.mera.document import load_document
from questions.executor import execute_program
from questions.families import load_families
from translate.answers import answer_to_russian

ROOT = Path(__file__).resolve().parents[1]
SECTION = "## A family of your own"


def documented_example() -> tuple[str, str, list[tuple[str, list[str]]]]:
    """The family file's path and text, and each command with the output lines the page shows for it."""
    guide = (ROOT / "docs" / "questions.md").read_text(encoding="utf-8")
    section = guide[guide.index(SECTION):]
    section = section[: section.index("\n## ", 1)]
    family = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
    path = re.match(r"# (\S+\.yaml)\n", family).group(1)
    commands: list[tuple[str, list[str]]] = []
    for line in re.search(r"```bash\n(.*?)```", section, re.S).group(1).splitlines():
        if line.startswith("python -m "):
            commands.append((line, []))
        elif line.startswith("# "):
            commands[-1][1].append(line[2:])
    return path, family, commands


def run(command: str, folder: Path) -> subprocess.CompletedProcess[str]:
    words = shlex.split(command)
    assert words[:2] == ["python", "-m"], command
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, *words[1:]], cwd=folder, capture_output=True, text=True, timeout=900, env=env)


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    folder = tmp_path_factory.mktemp("example")
    path, family, commands = documented_example()
    (folder / path).parent.mkdir(parents=True)
    (folder / path).write_text(family, encoding="utf-8")
    return folder, path, family, [(command, shown, run(command, folder)) for command, shown in commands]


def test_the_page_has_the_three_steps():
    _, _, commands = documented_example()
    assert [command.split()[3:6] for command, _ in commands] == [
        ["families", "validate", "my_families"], ["families", "validate", "my_families"], ["build", "--families", "my_families"]]
    assert "--realise 20" in commands[1][0] and "--translate-args" not in commands[2][0]


@pytest.mark.blender
def test_every_documented_command_runs_and_prints_what_the_page_shows(example):
    _, _, _, results = example
    for command, shown, result in results:
        assert result.returncode == 0, f"{command}\n{result.stderr[-3000:]}"
        for line in shown:
            assert line in result.stdout.splitlines(), f"{command}: {line!r} not in\n{result.stdout[-2000:]}"


@pytest.mark.blender
def test_the_build_has_shipped_and_own_families_and_every_answer_is_right(example):
    folder, path, _, results = example
    assert all(result.returncode == 0 for _, _, result in results)
    build = folder / "my_build"
    own = set(load_families((folder / path).parent))
    assert own == {"my/compare_sides"}
    questions = json.loads((build / "questions.json").read_text(encoding="utf-8"))
    assert questions["info"]["families"] == ["builtin", str((folder / path).parent.resolve())]
    translated = json.loads((build / "questions_ru.json").read_text(encoding="utf-8"))
    assert translated["info"]["translate"]["complete"] and translated["info"]["translate"]["failed"] == []
    record = json.loads((build / "build.json").read_text(encoding="utf-8"))["info"]
    assert record["settings"]["translate"]["args"] == []  # translate took the families from questions.json
    assert record["settings"]["questions"]["families"] == [str((folder / path).parent.resolve())]

    scenes = {scene["image_index"]: scene for scene in json.loads((build / "render" / "scenes.json").read_text())["scenes"]}
    asked = {(q["image_index"], q["question_index"]): q for q in questions["questions"]}
    document = load_document(build / "mera")
    families = set()
    items = 0
    for split in ("shots", "test"):
        for item, provenance in document.records(split):
            question = asked[(provenance["image_index"], provenance["question_index"])]
            answer = execute_program(question["program"], scenes[question["image_index"]])
            assert answer == question["answer"] == provenance["answer_en"], question
            assert item["outputs"] == answer_to_russian(answer, "e"), (item, question)
            families.add(provenance["family"])
            items += 1
    assert items >= 8
    assert "my/compare_sides" in families and families - own, families  # the user's family and shipped ones


def test_the_documented_mistake_is_caught_as_the_page_says(tmp_path):
    path, family, _ = documented_example()
    guide = (ROOT / "docs" / "questions.md").read_text(encoding="utf-8")
    shown = re.search(r"`(dataset families: my_families/sides\.yaml:\d+: [^`]*)`", guide).group(1)
    before = "«…, чем\n   правее [он|<S>]?»"
    assert before in guide
    wrong = family.replace(", чем правее?", ", чем правее [он|<S>]?")
    assert wrong != family
    (tmp_path / path).parent.mkdir(parents=True)
    (tmp_path / path).write_text(wrong, encoding="utf-8")
    result = run("python -m dataset families validate my_families --realise 20", tmp_path)
    assert result.returncode == 2
    [line] = [line for line in result.stderr.splitlines() if line.startswith(shown)]
    assert "«она» after «правее» should be in the genitive" in line
