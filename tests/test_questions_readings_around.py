"""Two sets located around one object and compared («Больше ли резиновых объектов слева от
цилиндра, чем объектов справа от него?») admit the reading the scene-wide comparison does: the
first set's adjectives reaching the second noun («резиновых … справа от него»). The engine
records it where it changes the answer and the realiser refuses a text that admits it; «чем
всего …» says the second set in full. Sets located around two different objects are said apart
by their own relations and are not paired (the shipped one_one_hop families), nor are two objects
around one object joined by «и» (each said with its own noun and relation).

Scenes, questions and realisers are the real ones (see tests/test_questions_readings.py).
"""

from __future__ import annotations

import re

from test_questions_readings import question_on, scene_of

from questions.families import load_families
from questions.readings import UNSAFE_FIELD, structure_of
from translate.native import NativeRealiser

FAMILY = """\
families:
  - id: mine/around/more
    group: mine
    params: {<Z>: size, <C>: color, <M>: material, <S>: shape, <R>: relation, <R2>: relation,
             <Z2>: size, <C2>: color, <M2>: material, <S2>: shape, <Z3>: size, <C3>: color, <M3>: material, <S3>: shape}
    program:
      - {function: scene}
      - {function: filter, inputs: [0], value_inputs: [<Z>, <C>, <M>, <S>]}
      - {function: unique, inputs: [1]}
      - {function: relate, inputs: [2], value_inputs: [<R>]}
      - {function: filter, inputs: [3], value_inputs: [<Z2>, <C2>, <M2>, <S2>]}
      - {function: count, inputs: [4]}
      - {function: relate, inputs: [2], value_inputs: [<R2>]}
      - {function: filter, inputs: [6], value_inputs: [<Z3>, <C3>, <M3>, <S3>]}
      - {function: count, inputs: [7]}
      - {function: greater_than, inputs: [5, 8]}
    text:
      en:
        - "Are there more <Z2> <C2> <M2> <S2>s <R> the <Z> <C> <M> <S> than <Z3> <C3> <M3> <S3>s <R2> it?"
      ru:
        - "Больше ли [<Z2> <C2> <M2> <S2>|род,мн] [<R> <Z> <C> <M> <S>], чем [<Z3> <C3> <M3> <S3>|род,мн] [<R2> он|<S>]?"
        - "Больше ли [<Z2> <C2> <M2> <S2>|род,мн] [<R> <Z> <C> <M> <S>], чем всего [<Z3> <C3> <M3> <S3>|род,мн] [<R2> он|<S>]?"
"""

# Two rubber things left of the one cylinder, three metal ones right of it: 2 > 3 is «нет»;
# read with «резиновых» reaching the right side, 2 > 0 is «да».
SCENE = scene_of(
    ("small", "red", "rubber", "cube", 0, 0),
    ("small", "blue", "rubber", "sphere", 1, 0),
    ("large", "gray", "metal", "cylinder", 2, 0),
    ("large", "green", "metal", "cube", 3, 0),
    ("small", "yellow", "metal", "sphere", 4, 0),
    ("large", "brown", "metal", "cube", 5, 0),
)


def test_two_sets_around_one_object_are_compared_as_one_pair_in_their_order(tmp_path):
    (tmp_path / "mine.yaml").write_text(FAMILY, encoding="utf-8")
    structure = structure_of(load_families(tmp_path)["mine/around/more"])
    assert structure.coordinated == structure.ordered == (("<S2>", "<S3>"),)
    assert {"distribute:<S2>:<S3>", "distribute:<S3>:<S2>"} <= set(structure.readings)
    shipped = load_families()
    for family_id in ("compare_integer/one_one_hop/greater", "compare/one_one_hop/color", "count/or/relate_relate"):
        assert structure_of(shipped[family_id]).coordinated == (), family_id  # around two objects: not paired


SAME_COLOR = (FAMILY.replace("mine/around/more", "mine/around/same_color")
              .replace("{function: count, inputs: [4]}", "{function: unique, inputs: [4]}")
              .replace("{function: count, inputs: [7]}", "{function: unique, inputs: [7]}")
              .replace("{function: greater_than, inputs: [5, 8]}",
                       "{function: query_color, inputs: [5]}\n      - {function: query_color, inputs: [8]}\n"
                       "      - {function: equal_color, inputs: [9, 10]}"))


def test_two_objects_around_one_object_joined_by_i_are_not_paired(tmp_path):
    """«Одинакового ли цвета матовый предмет левее цилиндра и куб за этим цилиндром?»: each object
    has its own noun and relation; «матовый» does not reach «куб»."""
    (tmp_path / "mine.yaml").write_text(SAME_COLOR, encoding="utf-8")
    family = load_families(tmp_path)["mine/around/same_color"]
    assert [node.function for node in family.program][-3:] == ["query_color", "query_color", "equal_color"]
    assert structure_of(family).coordinated == ()


def test_the_realiser_refuses_the_adjectives_reaching_the_second_set_and_says_it_in_full(tmp_path):
    (tmp_path / "mine.yaml").write_text(FAMILY, encoding="utf-8")
    families = load_families(tmp_path)
    family = families["mine/around/more"]
    question = question_on(family, SCENE, {"<S>": "cylinder", "<R>": "left", "<R2>": "right", "<M2>": "rubber"})
    assert question["answer"] == "no" and "distribute:<S2>:<S3>" in question[UNSAFE_FIELD]
    realiser = NativeRealiser(families=families.values())
    assert realiser.realise_with_template(question, 0) is None
    thing = "(?:предмет|объект)ов"  # the synonym drawn
    assert re.fullmatch(f"Больше ли резиновых {thing} слева от цилиндра, чем {thing} справа от него\\?",
                        realiser.realise_with_template(question, 0, check_readings=False))
    assert re.fullmatch(f"Больше ли резиновых {thing} слева от цилиндра, чем всего {thing} справа от него\\?",
                        realiser.realise_with_template(question, 1))
