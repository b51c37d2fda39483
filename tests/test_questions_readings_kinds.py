"""The kinds of second reading blind native readers found (issue 26), each planted on a hand-made
scene and refused or rewritten: a repeated phrase an earlier object also fits, adjectives reaching
a bare coordinated noun, a sum that could count one object once, and the wordings `questions
validate` refuses («такой же» with nothing to copy, «Превышает ли количество A количество B»); «является»
is kept out of the shipped templates (stilted) but not refused (grammatical, one reading: issue 36).

Scenes, questions and realisers are the real ones (see tests/test_questions_readings.py).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace

import pytest
import yaml
from test_questions_readings import english, family_folder, question_on, russian_texts, scene_of

from questions.families import FAMILIES_DIR, load_families
from questions.readings import UNSAFE_FIELD, structure_of
from questions.text import english_readings
from translate.native import NativeRealiser, RealisationError
from translate.templates import validate_template


@pytest.fixture(scope="module")
def families():
    return load_families()


# -- 1. a repeated phrase that an earlier object also fits (the unsafe-reading bug) -------------

# The new user's family: a statement, then a count of things both <R2> the object of that
# statement and <R3> a third one. Russian «[<R2> он|<S2>]» and English "it" have two masculine /
# singular antecedents, so the realisers repeat the phrase: «левее крупного предмета» fits the
# large gray thing said first, too.
CHAIN_FAMILY = {
    "id": "test/two_hop_and",
    "group": "test",
    "params": {
        "<Z>": "size", "<C>": "color", "<M>": "material", "<S>": "shape", "<R>": "relation",
        "<Z2>": "size", "<C2>": "color", "<M2>": "material", "<S2>": "shape", "<R2>": "relation",
        "<Z3>": "size", "<C3>": "color", "<M3>": "material", "<S3>": "shape", "<R3>": "relation",
        "<Z4>": "size", "<C4>": "color", "<M4>": "material", "<S4>": "shape",
    },
    "program": [
        {"function": "scene"},
        {"function": "filter", "inputs": [0], "value_inputs": ["<Z>", "<C>", "<M>", "<S>"]},
        {"function": "unique", "inputs": [1]},
        {"function": "relate", "inputs": [2], "value_inputs": ["<R>"]},
        {"function": "filter", "inputs": [3], "value_inputs": ["<Z2>", "<C2>", "<M2>", "<S2>"]},
        {"function": "unique", "inputs": [4]},
        {"function": "relate", "inputs": [5], "value_inputs": ["<R2>"]},
        {"function": "scene"},
        {"function": "filter", "inputs": [7], "value_inputs": ["<Z3>", "<C3>", "<M3>", "<S3>"]},
        {"function": "unique", "inputs": [8]},
        {"function": "relate", "inputs": [9], "value_inputs": ["<R3>"]},
        {"function": "intersect", "inputs": [6, 10]},
        {"function": "filter", "inputs": [11], "value_inputs": ["<Z4>", "<C4>", "<M4>", "<S4>"]},
        {"function": "count", "inputs": [12]},
    ],
    "text": {
        "en": ["There is a <Z2> <C2> <M2> <S2> <R> the <Z> <C> <M> <S>. "
               "How many <Z4> <C4> <M4> <S4>s are both <R2> it and <R3> the <Z3> <C3> <M3> <S3>?"],
        "ru": ["[<R> <Z> <C> <M> <S>] находится [<Z2> <C2> <M2> <S2>]. Сколько [<Z4> <C4> <M4> <S4>|род,мн] "
               "находится одновременно [<R2> он|<S2>] и [<R3> <Z3> <C3> <M3> <S3>]?"],
    },
}
# The large gray cube; the large cylinder left of it; a gray sphere far right; a small thing left
# of the cube but right of the cylinder, in front of the sphere: left of the cylinder and in front
# of the sphere there is nothing (0), left of the cube and in front of the sphere one thing (1).
CHAIN_SCENE = scene_of(
    ("large", "gray", "rubber", "cube", 0, 0),
    ("large", "red", "metal", "cylinder", -1, 0),
    ("small", "gray", "metal", "sphere", 5, 0),
    ("small", "blue", "rubber", "cube", -0.5, 1),
)
CHAIN_VALUES = {"<Z>": "large", "<C>": "gray", "<R>": "left", "<Z2>": "large", "<R2>": "left",
                "<C3>": "gray", "<S3>": "sphere", "<R3>": "front"}


def chain_family(tmp_path, russian: list[str] | None = None):
    entry = {**CHAIN_FAMILY, "text": {**CHAIN_FAMILY["text"], **({"ru": russian} if russian else {})}}
    (tmp_path / "family.yaml").write_text(yaml.safe_dump({"families": [entry]}, allow_unicode=True), encoding="utf-8")
    return tmp_path, load_families(tmp_path)[CHAIN_FAMILY["id"]]


def test_a_narrower_repeat_of_an_earlier_phrase_is_never_realised_where_it_changes_the_answer(tmp_path):
    folder, family = chain_family(tmp_path)
    question = question_on(family, CHAIN_SCENE, CHAIN_VALUES)
    assert question["answer"] == "0"
    assert "anchor:<R2>:<S>" in question[UNSAFE_FIELD]  # «левее крупного предмета» read as the gray cube: 1
    # The bug: the pronoun, repeated as «крупного предмета», was compared with «крупного серого
    # предмета» word for word, found different, and realised with the other reading open. Now the
    # phrase is the last said that fits, so it is said «этого другого крупного предмета» (the grey one,
    # its anchor, fits the words too) / "that large thing".
    for text in russian_texts(NativeRealiser(folder), question, 20):
        assert re.search(r"(левее|слева от) этого другого (крупного|большого) (предмета|объекта) и", text), text
    # English says the statement's object first ("There is a large thing left of the large gray
    # thing"): "the large thing" could be either, so that template is refused; where the object of
    # the statement is said last, "that large thing" is one of them.
    with pytest.raises(AssertionError):
        english(family, question, 0, Counter())
    last = ("Look at the <Z> <C> <M> <S>; there is a <Z2> <C2> <M2> <S2> <R> it. "
            "How many <Z4> <C4> <M4> <S4>s are both <R2> it and <R3> the <Z3> <C3> <M3> <S3>?")
    text = english(replace(family, text={"en": (last,)}), question, 0, Counter())[1]
    assert re.search(r"both left of that (large|big) (thing|object) and", text), text


def test_a_repeated_phrase_an_earlier_object_fits_is_refused_where_this_cannot_help(tmp_path):
    """«Посмотри на [Y] [<R> X]. … [<R2> он|<S2>]»: X is said last, «этого Y» could be X too."""
    look = ("Посмотри на [<Z2> <C2> <M2> <S2>|вин] [<R> <Z> <C> <M> <S>]. Сколько [<Z4> <C4> <M4> <S4>|род,мн] "
            "находится одновременно [<R2> он|<S2>] и [<R3> <Z3> <C3> <M3> <S3>]?")
    folder, family = chain_family(tmp_path, [look])
    question = question_on(family, CHAIN_SCENE, CHAIN_VALUES)
    realiser = NativeRealiser(folder)
    for i in range(10):
        with pytest.raises(RealisationError):
            realiser.realise_one({**question, "question_index": i})
    assert realiser.refusals[f"{family.id} ru all"] == 10
    # A phrase written out after a relation is checked the same way («…левее крупного предмета»).
    written = ("Посмотри на [<Z> <C> <M> <S>|вин]. Сколько [<Z4> <C4> <M4> <S4>|род,мн] находится одновременно "
               "[<R2> <Z2> <C2> <M2> <S2>] и [<R3> <Z3> <C3> <M3> <S3>], если [<R> он|<S>] [расположенный|<S2>,кратк] [<Z2> <C2> <M2> <S2>]?")
    with pytest.raises(RealisationError):
        NativeRealiser(chain_family(tmp_path, [written])[0]).realise_one(question)
    look_en = "Look at the <Z2> <C2> <M2> <S2> <R> the <Z> <C> <M> <S>. How many <Z4> <C4> <M4> <S4>s are both <R2> it and <R3> the <Z3> <C3> <M3> <S3>?"
    with pytest.raises(AssertionError):  # no English template without the other reading
        english(replace(family, text={"en": (look_en,)}), question, 0, Counter())
    # Where that reading gives the same answer the phrase is said as it is.
    assert any(re.search(r"(левее|слева от) (крупного|большого) (предмета|объекта) и", text)
               for text in russian_texts(realiser, {**question, UNSAFE_FIELD: []}, 10))


# -- 2. adjectives before coordinated nouns ------------------------------------------------------


def test_adjectives_never_stand_before_two_coordinated_nouns(families):
    family = families["count/or"]
    scene = scene_of(("large", "red", "metal", "sphere", 0, 0), ("small", "blue", "rubber", "cube", 2, 0),
                     ("small", "red", "rubber", "cube", 3, 0))
    values = {"<C>": "red", "<S2>": "cube"}
    question = question_on(family, scene, values)
    # «красных предметов или кубов» read as red cubes too: 2 instead of 3.
    assert "distribute:<S>:<S2>" in question[UNSAFE_FIELD]
    # The shipped templates say «все(х)» before each set («все красные предметы и все кубы»), or
    # the bare noun first before a bare «или» («кубов или красных предметов»).
    for text in russian_texts(NativeRealiser(), question):
        assert re.search(r"(кубов|кубиков) (и|или) красных (предметов|объектов)|(кубы|кубики) или красные (предметы|объекты)"
                         r"|всех красных (предметов|объектов) и всех (кубов|кубиков)|все красные (предметы|объекты),? (и|а потом) все (кубы|кубики)", text), text
    for seed in range(8):
        assert re.search(r"(cubes|blocks) or red (things|objects)", english(family, question, seed, Counter())[1])
    # A template that cannot say the bare noun first is refused where the reading changes the answer.
    either = "Сколько на изображении [<Z> <C> <M> <S>|род,мн] или [<Z2> <C2> <M2> <S2>|род,мн]?"
    shipped = structure_of(family)
    assert ("<S>", "<S2>") in shipped.coordinated
    assert "distribute:<S2>:<S>" in shipped.readings and "distribute:<S>:<S2>" in shipped.readings
    assert validate_template(either, family.params) == []


def test_two_compared_objects_say_the_bare_noun_first(families):
    """«Одинаковый ли цвет у резинового шара и куба?» reads as a rubber cube too: the cube first."""
    realiser = NativeRealiser()
    params = {"<Z>": "", "<C>": "", "<M>": "rubber", "<S>": "sphere", "<Z2>": "", "<C2>": "", "<M2>": "", "<S2>": "cube"}
    family = realiser.families["compare/zero_hop/color"]
    texts = [realiser.render(family.family, params, index) for index in range(len(family.templates))]
    # «что и», and «у X и у Y» (the preposition said again closes the first phrase), coordinate no nouns
    coordinated = [text for text in texts if " и " in text and "что и" not in text and " и у " not in text]
    assert coordinated and all(re.search(r"(куб|кубик)\w* и резинов", text) for text in coordinated), texts
    question = {"image_index": 0, "question_index": 0, "family": "compare/zero_hop/color", "params": params, UNSAFE_FIELD: []}
    index, text = english(families["compare/zero_hop/color"], question, 0, Counter())
    assert re.search(r"(cube|block) .*(rubber|matte) (sphere|ball)", text), text


def test_a_template_saying_all_before_each_set_admits_no_distribution(families):
    family = families["count/or/color"]
    realiser = NativeRealiser()
    sites = realiser.families[family.id].sites
    # «все A и все B»: no distribution
    assert not sites[0].coordinated and "все [" in family.text["ru"][0].split(" и ")[1]
    # «среди всех A и всех B, вместе взятых» read as a sum to both blind readers of round 5 (an object in
    # both sets counted twice): no union says it
    unions = [f for f in families.values() if f.id.startswith("count/or/")]
    assert unions and not [text for f in unions for text in f.text["ru"] if "вместе взят" in text]
    # «Сколько на изображении A или B?» read to blind readers of rounds 7 and 8 as counting an object of
    # both kinds once, twice or not at all: no count says «или»
    assert not [text for f in families.values() if f.id.startswith("count/") for text in f.text["ru"] if "] или [" in text]
    # «Есть ли A или B?» (exist/or): coordinated, so the bare noun is said first
    plain = families["exist/or"]
    said = [i for i, text in enumerate(plain.text["ru"]) if "] или [" in text]
    assert said and all(realiser.families[plain.id].sites[i].coordinated == (("<S>", "<S2>"),) for i in said)
    scene = scene_of(("large", "red", "rubber", "sphere", 0, 0), ("small", "blue", "metal", "cube", 2, 0),
                     ("small", "red", "rubber", "cube", 3, 0))
    texts = [text for text in russian_texts(realiser, question_on(plain, scene, {"<M>": "rubber", "<S2>": "cube"}))
             if " или " in text and "хотя бы" not in text]  # «хотя бы один A или хотя бы один B» coordinates no nouns
    assert texts and all(re.search(r"(куб|кубик)\w* или (резинов|матов)\w* (предмет|объект)", text) for text in texts), texts


# -- 3. sums that can count one object twice ------------------------------------------------------


def test_a_sum_said_as_a_total_is_refused_where_an_object_is_in_both_sets(tmp_path, families):
    family = families["arithmetic/sum"]
    scene = scene_of(("large", "green", "rubber", "sphere", 0, 0), ("large", "red", "metal", "cube", 1, 0),
                     ("small", "green", "rubber", "sphere", 2, 0))
    question = question_on(family, scene, {"<Z>": "large", "<C2>": "green", "<S2>": "sphere"})
    assert question["answer"] == "4"  # 2 large things + 2 green spheres; the large green sphere twice
    node = structure_of(family).sums[0]
    assert f"union:{node}" in question[UNSAFE_FIELD]  # counted once: 3
    together = "Сколько всего [<Z> <C> <M> <S>|род,мн] и [<Z2> <C2> <M2> <S2>|род,мн] вместе?"
    realiser = NativeRealiser(family_folder(tmp_path, family, [together, *family.text["ru"]]))
    texts = russian_texts(realiser, question)
    assert not any("вместе" in text for text in texts) and realiser.refusals[f"{family.id} ru 0"] > 0
    assert all(re.search(r"прибавить|сумма", text) for text in texts)
    in_total = "How many <Z> <C> <M> <S>s and <Z2> <C2> <M2> <S2>s are there in total?"
    assert f"union:{node}" in english_readings(in_total, family.params, structure_of(family))
    with_total = replace(family, text={"en": (in_total, *family.text["en"])})
    for seed in range(8):
        index, text = english(with_total, question, seed, Counter())
        assert index != 0 and "in total" not in text
    # Disjoint sets: no other answer, the total may be said.
    apart = question_on(family, scene, {"<Z>": "small", "<C2>": "red"})
    assert f"union:{node}" not in apart[UNSAFE_FIELD]


# -- 4/5. wordings refused by `questions validate` ----------------------------------------------


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("Какого цвета [<Z> <C> <M> <S>], [<R> который|<S>] нет других таких же предметов?", "«такой же» copies nothing"),
        ("Какого цвета [<Z> <C> <M> <S>], [<R> который|<S>] есть ровно один другой такой же предмет?", "«такой же» copies nothing"),
        ("Превышает ли количество [<Z> <C> <M> <S>|род,мн] количество [<S2>|род,мн]?", "which count is compared with which"),
        ("Равно ли общее количество [<Z> <C> <M> <S>|род,мн] количество [<S2>|род,мн]?", "«равно» governs the dative"),
        ("Больше ли всего на изображении [<Z> <C> <M> <S>|род,мн], чем [<S2>|род,мн]?", "reads as «больше всего»"),
    ],
)
def test_wordings_natives_read_two_ways_are_refused(text, problem):
    params = {"<Z>": "size", "<C>": "color", "<M>": "material", "<S>": "shape", "<R>": "relation", "<S2>": "shape"}
    used = {name: kind for name, kind in params.items() if name in text}
    assert any(problem in p for p in validate_template(text, used)), validate_template(text, used)


def test_named_attributes_after_takoy_zhe_are_fine_and_no_shipped_template_has_a_refused_wording(families):
    params = {"<Z>": "size", "<C>": "color", "<M>": "material", "<S>": "shape", "<Z2>": "size", "<C2>": "color",
              "<M2>": "material", "<S2>": "shape"}
    assert validate_template("Есть ли [другой <Z2> <C2> <M2> <S2>] такой же формы, как [<Z> <C> <M> <S>]?", params) == []
    assert validate_template("Такого же ли размера [<Z> <C> <M> <S>], как [<Z2> <C2> <M2> <S2>]?", params) == []
    shipped = "\n".join(path.read_text(encoding="utf-8") for path in FAMILIES_DIR.glob("*.yaml"))
    for wording in ("такой же предмет", "таких же предметов", "является", "являются", "представля", "Превышает ли", "such object"):
        assert wording not in shipped, wording
    assert len(families) == 132


def test_between_says_the_bare_noun_first_so_its_adjective_reaches_one_end(families):
    """«между маленькой сферой и цилиндром»: is the cylinder small too? The bare noun is said first."""
    scene = scene_of(("small", "blue", "rubber", "sphere", 0, 0), ("large", "red", "metal", "cube", 1, 0),
                     ("large", "gray", "rubber", "cylinder", 2, 0), ("small", "gray", "rubber", "cube", 3, 3))
    for obj in scene["objects"]:
        obj["3d_coords"] = [obj["x"], obj["y"], 0.5]  # between needs positions
    family = families["between/exist"]
    assert ("<S>", "<S2>") in structure_of(family).coordinated
    question = question_on(family, scene, {"<Z>": "small", "<S>": "sphere", "<S2>": "cylinder", "<S3>": "cube"})
    assert "distribute:<S>:<S2>" in question[UNSAFE_FIELD]  # no small cylinder: the other reading has no answer
    texts = russian_texts(NativeRealiser(), question)
    assert texts and all(re.search(r"между цилиндром и (маленьк|небольш)\w+ (сферой|шаром)", text) for text in texts), texts
    for seed in range(4):
        assert re.search(r"between the cylinder and the (small|tiny) (sphere|ball)", english(family, question, seed, Counter())[1])
