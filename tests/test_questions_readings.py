"""The reading check: each kind of other reading planted on a hand-made scene, refused or rewritten.

Scenes are written by hand (objects on a line: "left" means a smaller x, "behind" a smaller y),
questions are made by the engine's own functions (program, answer and ``unsafe_readings``), and
the English and Russian realisers are the real ones.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from assets.vocabulary import load_vocabulary
from questions.executor import execute_program
from questions.families import FAMILIES_DIR, load_families
from questions.plan import Plan, choices_of, expand_program
from questions.random_stream import RandomStream
from questions.readings import UNSAFE_FIELD, structure_of, unsafe_readings
from questions.scene_index import SceneIndex
from questions.scene_questions import readable_english
from questions.text import english_readings
from russian.morphology import analyzer
from translate.answers import answer_to_russian
from translate.native import NativeRealiser


def scene_of(*objects: tuple[str, str, str, str, float, float]) -> dict:
    """A scene graph from (size, color, material, shape, x, y) tuples."""
    listed = [{"size": z, "color": c, "material": m, "shape": s, "x": x, "y": y} for z, c, m, s, x, y in objects]
    n = len(listed)

    def related(test) -> list[list[int]]:
        return [[j for j in range(n) if j != i and test(listed[j], listed[i])] for i in range(n)]

    relationships = {
        "left": related(lambda other, me: other["x"] < me["x"]),
        "right": related(lambda other, me: other["x"] > me["x"]),
        "behind": related(lambda other, me: other["y"] < me["y"]),
        "front": related(lambda other, me: other["y"] > me["y"]),
    }
    return {"objects": listed, "relationships": relationships}


@pytest.fixture(scope="module")
def families():
    return load_families()


def question_on(family, scene: dict, values: dict, index: int = 0) -> dict:
    """A question record as the engine writes it (program, answer, unsafe readings)."""
    params = {name: values.get(name, "") for name in family.params}
    plan = Plan.of(family)
    program = expand_program(plan, choices_of(plan, params))
    return {
        "image_index": 0, "question_index": index, "family": family.id, "params": params, "program": program,
        "answer": execute_program(program, scene),
        UNSAFE_FIELD: unsafe_readings(family, params, SceneIndex.from_scene(scene)),
    }


def family_folder(tmp_path: Path, family, russian: list[str]) -> Path:
    """A families folder holding ``family`` (program and English as shipped) with other Russian texts."""
    source = yaml.safe_load((FAMILIES_DIR / family.source).read_text(encoding="utf-8"))
    entry = next(e for e in source["families"] if e["id"] == family.id)
    entry["text"]["ru"] = russian
    (tmp_path / "family.yaml").write_text(yaml.safe_dump({"families": [entry]}, allow_unicode=True), encoding="utf-8")
    return tmp_path


def english(family, question: dict, seed: int, refusals: Counter) -> tuple[int, str]:
    """The engine's English for ``question``: the first readable template from template 0."""
    chosen = readable_english(family, question["params"], question[UNSAFE_FIELD], load_vocabulary(), RandomStream.for_unit("questions.search", seed, 0), 0, refusals)
    assert chosen is not None
    return chosen


def russian_texts(realiser: NativeRealiser, question: dict, count: int = 40) -> list[str]:
    return [realiser.realise_one({**question, "question_index": i}) for i in range(count)]


# A large cylinder with one cube on each side, a sphere right of the right-hand cube, a small
# cylinder further right and one between the large cylinder and the cube: "the cube right of the
# cylinder" is one object, "the cube" is two; right of the cube is one cylinder, right of the large
# cylinder two.
CHAIN_SCENE = scene_of(
    ("large", "gray", "rubber", "cylinder", 0, 0),
    ("small", "purple", "metal", "cylinder", 0.5, 3),
    ("small", "red", "metal", "cube", 1, 0),
    ("small", "blue", "metal", "cube", -1, 0),
    ("large", "green", "rubber", "sphere", 2, 1),
    ("small", "yellow", "rubber", "cylinder", 3, 2),
)
CHAIN_VALUES = {"<S>": "cylinder", "<Z>": "large", "<R>": "right", "<S2>": "cube", "<R2>": "right", "<S3>": "cylinder"}


def test_a_relative_word_with_two_agreeing_antecedents_is_refused(tmp_path, families):
    family = families["query/two_hop/color"]
    question = question_on(family, CHAIN_SCENE, CHAIN_VALUES)
    assert question["answer"] == "yellow"
    # «который» read as the small cylinder: "the cube" alone is two objects, the question has no answer.
    assert "attach:<R>:<S3>" in question[UNSAFE_FIELD]
    ambiguous = "Какого цвета [<Z3> <C3> <M3> <S3>] [<R2> <Z2> <C2> <M2> <S2>], [который|<S2>] находится [<R> <Z> <C> <M> <S>]?"
    clear = "[<R> <Z> <C> <M> <S>] находится [<Z2> <C2> <M2> <S2>]. Какого цвета [<Z3> <C3> <M3> <S3>] [<R2> он|<S2>]?"
    realiser = NativeRealiser(family_folder(tmp_path, family, [ambiguous, clear]))
    texts = russian_texts(realiser, question)
    assert not any("котор" in text for text in texts)  # цилиндр, куб/кубик: all masculine
    assert realiser.refusals[f"{family.id} ru 0"] > 0 and not realiser.refusals[f"{family.id} ru 1"]
    # Where the engine found no other answer, the same template is used.
    safe = {**question, UNSAFE_FIELD: []}
    assert any("котор" in text for text in russian_texts(realiser, safe))


def test_a_pronoun_with_two_agreeing_antecedents_is_replaced_by_its_phrase(tmp_path, families):
    family = families["query/two_hop/color"]
    question = question_on(family, CHAIN_SCENE, CHAIN_VALUES)
    # «него» read as the large cylinder: two cylinders are right of it, the question has no answer.
    assert "anchor:<R2>:<S>" in question[UNSAFE_FIELD]
    template = "Посмотри на [<Z2> <C2> <M2> <S2>|вин] [<R> <Z> <C> <M> <S>]. Какого цвета [<Z3> <C3> <M3> <S3>] [<R2> он|<S2>]?"
    realiser = NativeRealiser(family_folder(tmp_path, family, [template]))
    for text in russian_texts(realiser, question):
        assert not re.search(r"\b(него|нём|ним|неё|ней)\b", text), text
        assert re.search(r"(справа от|правее) этого (куба|кубика)\?$", text), text
    # A feminine phrase among masculine ones is the only one that agrees: the pronoun stays.
    sphere_scene = scene_of(
        ("large", "gray", "rubber", "cylinder", 0, 0), ("small", "red", "metal", "sphere", 1, 0),
        ("small", "yellow", "rubber", "cylinder", 3, 2),
    )
    values = {**CHAIN_VALUES, "<S2>": "sphere"}
    texts = russian_texts(realiser, question_on(family, sphere_scene, values))
    assert any(text.endswith(("от неё?", "правее неё?")) for text in texts if "сфер" in text.split(".")[0])


def test_an_overlapping_or_is_never_read_exclusively(tmp_path, families):
    family = families["count/or"]
    overlapping = scene_of(("large", "red", "metal", "cube", 0, 0), ("small", "red", "rubber", "sphere", 1, 0),
                           ("small", "blue", "rubber", "cube", 2, 0))
    values = {"<C>": "red", "<S2>": "cube"}
    question = question_on(family, overlapping, values)
    assert question["answer"] == "3"  # red things or cubes; read exclusively it would be 2
    union = structure_of(family).unions[0]
    assert f"exclusive:{union}" in question[UNSAFE_FIELD]
    either = "Сколько на картинке либо [<Z> <C> <M> <S>|род,мн], либо [<Z2> <C2> <M2> <S2>|род,мн]?"
    inclusive = "Сколько на изображении [<Z> <C> <M> <S>|род,мн] или [<Z2> <C2> <M2> <S2>|род,мн]?"
    realiser = NativeRealiser(family_folder(tmp_path, family, [either, inclusive]))
    assert not any("либо" in text for text in russian_texts(realiser, question))
    apart = scene_of(("large", "red", "metal", "sphere", 0, 0), ("small", "blue", "rubber", "cube", 2, 0))
    disjoint = question_on(family, apart, values)
    assert f"exclusive:{union}" not in disjoint[UNSAFE_FIELD]
    assert any("либо" in text for text in russian_texts(realiser, disjoint))
    # English: "either ... or" admits the exclusive reading; the engine skips such a template here.
    either_en = "How many things are either <Z> <C> <M> <S>s or <Z2> <C2> <M2> <S2>s?"
    assert f"exclusive:{union}" in english_readings(either_en, family.params, structure_of(family))
    with_either = replace(family, text={"en": (either_en, *family.text["en"])})
    refusals: Counter[str] = Counter()
    for seed in range(12):
        index, text = english(with_either, question, seed, refusals)
        assert index != 0 and "either" not in text
    assert refusals[f"{family.id} en 0"] > 0
    assert all("either" not in template for template in family.text["en"])  # the shipped templates say "or" only


def test_other_is_said_only_where_the_object_could_be_the_anchor(families):
    family = families["exist/same_shape"]
    realiser = NativeRealiser()
    scene = scene_of(("large", "purple", "rubber", "cube", 0, 0), ("small", "red", "metal", "cube", 1, 0))
    # "another red thing of the same shape as the purple thing": the purple thing is not red.
    cannot = question_on(family, scene, {"<C>": "purple", "<C2>": "red"})
    assert "self:<S2>" not in cannot[UNSAFE_FIELD]
    for text in russian_texts(realiser, cannot):
        assert not re.search(r"\b(друг|ещё)", text), text
    # "another large thing of the same shape as the purple thing": the purple cube is large.
    could = question_on(family, scene, {"<C>": "purple", "<Z2>": "large"})
    assert "self:<S2>" in could[UNSAFE_FIELD]
    for text in russian_texts(realiser, could):
        assert re.search(r"\b(друг|ещё|кроме)", text), text
    for seed in range(12):
        assert not re.search(r"\b(an)?other\b", english(family, cannot, seed, Counter())[1])
        assert re.search(r"\b(an)?other\b", english(family, could, seed, Counter())[1])


def test_an_english_relation_chain_that_could_attach_elsewhere_is_refused(families):
    shipped = families["query/two_hop/color"]
    chain = "What color is the <Z3> <C3> <M3> <S3> [that is] <R2> the <Z2> <C2> <M2> <S2> [that is] <R> the <Z> <C> <M> <S>?"
    family = replace(shipped, text={"en": (chain, *shipped.text["en"])})
    question = question_on(family, CHAIN_SCENE, CHAIN_VALUES)
    assert "attach:<R>:<S3>" in english_readings(chain, family.params, structure_of(family))
    refusals: Counter[str] = Counter()
    for seed in range(12):
        index, text = english(family, question, seed, refusals)
        assert index != 0
        # "it" stands for the cube, but the cylinder was said first: the cube is named again.
        assert " it" not in text and re.search(r"(right of|behind) the (cube|block)\?$", text), text
    assert refusals[f"{family.id} en 0"] > 0


def test_no_template_says_posmotrite_and_a_sphere_is_a_sfera():
    for path in FAMILIES_DIR.glob("*.yaml"):
        assert "Посмотрите" not in path.read_text(encoding="utf-8"), path
    assert answer_to_russian("sphere") == "сфера"
    assert NativeRealiser().word_options("query/zero_hop/color", {"<Z>": "", "<C>": "", "<M>": "", "<S>": "sphere"})["<S>"][0] == "сфера"


_PRONOUN_GENDER = {"он": "masc", "его": "masc", "него": "masc", "ему": "masc", "нему": "masc", "им": "masc", "ним": "masc",
                   "нём": "masc", "она": "femn", "её": "femn", "неё": "femn", "ей": "femn", "ней": "femn", "ею": "femn",
                   "нею": "femn"}


_RELATION_WORDS = frozenset({"слева", "справа", "левее", "правее", "за", "перед", "впереди", "позади"})


def test_no_russian_pronoun_has_two_agreeing_antecedents(families):
    """Every template with a pronoun, every choice of shape words: read the text back with pymorphy3
    and count the earlier nouns of the pronoun's gender (singular nouns only in these families)."""
    realiser = NativeRealiser()
    morph = analyzer()
    nouns = {"куб": "masc", "кубик": "masc", "шар": "masc", "сфера": "femn", "цилиндр": "masc", "предмет": "masc", "объект": "masc"}
    checked = 0
    for family_id, russian in realiser.families.items():
        shapes = [slot for slot, kind in russian.kinds.items() if kind == "shape"]
        for index, template in enumerate(russian.templates):
            if " он|" not in template.text and "[он|" not in template.text:
                continue
            for word_set in (["куб", "цилиндр", "кубик", "шар"], ["сфера", "шар", "сфера", "куб"], ["предмет", "объект", "предмет", "объект"]):
                params = {slot: "" for slot in russian.kinds}
                params.update({slot: "left" for slot, kind in russian.kinds.items() if kind == "relation"})
                words = dict(zip(shapes, word_set, strict=False))
                params.update({slot: {"куб": "cube", "кубик": "cube", "шар": "sphere", "сфера": "sphere", "цилиндр": "cylinder"}.get(w, "")
                               for slot, w in words.items()})
                if any(params[slot] == "" and words[slot] in ("куб", "кубик", "шар", "сфера", "цилиндр") for slot in shapes):
                    continue
                try:
                    text = realiser.render(family_id, params, index, words)
                except Exception:
                    continue  # a repeated phrase reading like another: refused, not written
                tokens = re.findall(r"[а-яё]+|[.,:;—]", text.lower())
                for position, token in enumerate(tokens):
                    gender = _PRONOUN_GENDER.get(token)
                    if gender is None or token in ("им", "его", "её", "ей") and position == 0:
                        continue
                    # «цилиндр слева от него»: the noun the pronoun's relation phrase follows is what
                    # that phrase describes, never what the pronoun stands for.
                    start = position - 1 - (tokens[position - 1] == "от" and tokens[position - 2] in ("слева", "справа"))
                    described = start - 1 if tokens[start] in _RELATION_WORDS else None
                    earlier = [morph.parse(t)[0] for i, t in enumerate(tokens[:position]) if i != described and t.isalpha()]
                    agreeing = [p.word for p in earlier if nouns.get(p.normal_form) == gender and "sing" in p.tag]
                    assert len(agreeing) == 1, (family_id, index, text)
                    checked += 1
    assert checked > 20


def test_an_edited_reading_keeps_its_constraints_on_the_same_nodes(families):
    """Another reading's program is renumbered; the family's ``different_outputs`` pairs must follow
    their nodes (same function and values), or go where the edit left a node out."""
    from questions.readings import ReadingCheck

    followed = 0
    for family in families.values():
        if not family.different_outputs:
            continue
        for plan in ReadingCheck(family).edited.values():
            if plan is None:
                continue
            edited = plan.family
            assert len(edited.different_outputs) <= len(family.different_outputs)
            originals = {tuple((family.program[k].function, family.program[k].value_inputs) for k in pair)
                         for pair in family.different_outputs}
            for pair in edited.different_outputs:
                assert tuple((edited.program[k].function, edited.program[k].value_inputs) for k in pair) in originals, family.id
                followed += 1
    assert followed > 50
