"""An object the only one of its description in the whole scene, said again with all its words, is no
other object (issue 36, user u2's u2/compare/two_sides/color): «Посмотри на резиновый цилиндр. Перед
ним стоит другой резиновый предмет, а справа от этого резинового цилиндра — металлический шар» has
one reading, so neither realiser refuses it. Where the object was found through a relation («цилиндр
левее шара»: another cylinder may be meant) or the repeat says fewer words than it was introduced
with, the other reading stays and the text is refused. Real engine loader, real realisers.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from assets.vocabulary import load_vocabulary
from questions.families import load_families
from questions.random_stream import RandomStream
from questions.readings import UNSAFE_FIELD, structure_of
from questions.text import realise_english
from translate.native import NativeRealiser

ROOT = Path(__file__).resolve().parents[1]
FILE = ROOT / "tests" / "data" / "heldout_families" / "two_sides.yaml"
FAMILY = "heldout/two_sides_color"
# X «резиновый цилиндр» (the only one in the scene), Y «резиновый предмет» in front of it, W a metal
# sphere right of it: read with <R2> taken from Y, the question has another answer.
PARAMS = {"<Z>": "", "<C>": "", "<M>": "rubber", "<S>": "cylinder", "<R>": "front",
          "<Z2>": "", "<C2>": "", "<M2>": "rubber", "<S2>": "", "<R2>": "right",
          "<Z3>": "", "<C3>": "", "<M3>": "metal", "<S3>": "sphere"}
UNSAFE = ["anchor:<R2>:<S2>"]
# The same question where X is found through a relation from a sphere (<S4>): «цилиндр» is then not
# the only one in the scene, and «этого резинового цилиндра» may be Y.
FOUND = """
families:
  - id: test/two_sides_found
    group: test
    params: {<Z4>: size, <C4>: color, <M4>: material, <S4>: shape, <R4>: relation,
             <Z>: size, <C>: color, <M>: material, <S>: shape, <R>: relation,
             <Z2>: size, <C2>: color, <M2>: material, <S2>: shape, <R2>: relation,
             <Z3>: size, <C3>: color, <M3>: material, <S3>: shape}
    program:
      - {function: scene}
      - {function: filter, inputs: [0], value_inputs: [<Z4>, <C4>, <M4>, <S4>]}
      - {function: unique, inputs: [1]}
      - {function: relate, inputs: [2], value_inputs: [<R4>]}
      - {function: filter, inputs: [3], value_inputs: [<Z>, <C>, <M>, <S>]}
      - {function: unique, inputs: [4]}
      - {function: relate, inputs: [5], value_inputs: [<R>]}
      - {function: filter, inputs: [6], value_inputs: [<Z2>, <C2>, <M2>, <S2>]}
      - {function: unique, inputs: [7]}
      - {function: relate, inputs: [5], value_inputs: [<R2>]}
      - {function: filter, inputs: [9], value_inputs: [<Z3>, <C3>, <M3>, <S3>]}
      - {function: unique, inputs: [10]}
      - {function: query_color, inputs: [8]}
      - {function: query_color, inputs: [11]}
      - {function: equal_color, inputs: [12, 13]}
    text:
      en:
        - "Look at the <Z> <C> <M> <S> <R4> the <Z4> <C4> <M4> <S4>. Does the <Z2> <C2> <M2> <S2> <R> it have the same color as the <Z3> <C3> <M3> <S3> <R2> it?"
      ru:
        - "Одинакового ли цвета [<Z2> <C2> <M2> <S2>] [<R> <Z> <C> <M> <S>] [<R4> <Z4> <C4> <M4> <S4>] и [<Z3> <C3> <M3> <S3>] [<R2> <Z> <C> <M> <S>]?"
"""
FOUND_PARAMS = {**PARAMS, "<Z4>": "", "<C4>": "", "<M4>": "", "<S4>": "cube", "<R4>": "left"}


def question(family: str, params: dict[str, str]) -> dict[str, object]:
    return {"family": family, "params": params, UNSAFE_FIELD: UNSAFE, "image_index": 3, "question_index": 1}


def test_the_users_family_validates_with_every_template_said(tmp_path):
    """`dataset families validate DIR --realise 20` (DIR holding the file alone, as the user ran it)
    refused all three Russian templates on main before."""
    shutil.copy(FILE, tmp_path / FILE.name)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-m", "dataset", "families", "validate", str(tmp_path), "--realise", "20"]
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    line = next(line for line in result.stdout.splitlines() if f"{FAMILY}:" in line)
    assert "ru: 60 realised, 0 refused" in line, line


def test_an_object_unique_in_the_scene_said_again_in_full_is_itself_in_every_russian_template():
    family = load_families(FILE.parent)[FAMILY]
    assert structure_of(family).scene_unique["<S>"] == ("<Z>", "<C>", "<M>", "<S>")
    realiser = NativeRealiser(families=[family])
    for index in range(3):
        text = realiser.realise_with_template(question(FAMILY, PARAMS), index)
        assert text is not None, index
        assert text == realiser.realise_with_template(question(FAMILY, PARAMS), index, check_readings=False)
        assert re.search(r" этого (?:резинового|матового) цилиндра — | этого (?:резинового|матового) цилиндра\?", text), text


def test_a_repeat_with_fewer_words_than_the_object_was_introduced_with_is_refused():
    """«Посмотри на цилиндр, который был матовым. … другой цилиндр впереди него и металлический шар
    правее цилиндра»: the material said apart, «цилиндра» fits Y (a cylinder) too."""
    family = load_families(FILE.parent)[FAMILY]
    apart = ("Посмотри на [<Z> <C> <S>|вин], [который|<S>] был [<M>|твор,<S>]. Одинакового ли цвета [<Z2> <C2> <M2> <S2>] "
             "[<R> он|<S>] и [<Z3> <C3> <M3> <S3>] [<R2> он|<S>]?")
    realiser = NativeRealiser(families=[replace(family, text={**family.text, "ru": (apart,)})])
    params = {**PARAMS, "<M2>": "", "<S2>": "cylinder"}
    assert "правее цилиндра?" in realiser.realise_with_template(question(FAMILY, params), 0, check_readings=False)
    assert realiser.realise_with_template(question(FAMILY, params), 0) is None


def test_an_object_found_by_a_relation_said_again_in_full_is_still_refused(tmp_path):
    (tmp_path / "found.yaml").write_text(FOUND, encoding="utf-8")
    family = load_families(tmp_path)["test/two_sides_found"]
    assert "<S>" not in structure_of(family).scene_unique
    realiser = NativeRealiser(families=[family])
    assert realiser.realise_with_template(question(family.id, FOUND_PARAMS), 0, check_readings=False) is not None
    assert realiser.realise_with_template(question(family.id, FOUND_PARAMS), 0) is None


def english_readings_of(family, params: dict[str, str], template: str) -> tuple[str, list[str]]:
    readings: list[str] = []
    stream = RandomStream.for_unit("questions.search", 0, 0)
    text = realise_english(template, params, family.params, load_vocabulary(), stream, structure_of(family), readings)
    return text, readings


def test_english_says_the_unique_object_again_without_the_other_reading(tmp_path):
    family = load_families(FILE.parent)[FAMILY]
    text, readings = english_readings_of(family, PARAMS, family.text["en"][1])
    assert "anchor:<R2>:<S2>" not in readings, text
    assert text.endswith("right of the rubber cylinder?") or text.endswith("right of the matte cylinder?"), text
    (tmp_path / "found.yaml").write_text(FOUND, encoding="utf-8")
    found = load_families(tmp_path)["test/two_sides_found"]
    text, readings = english_readings_of(found, FOUND_PARAMS, found.text["en"][0])
    assert "anchor:<R2>:<S2>" in readings, text
