"""The native Russian realiser: hand-written reference questions, seeded choices, bad input.

The shipped families (questions/families/) are realised as they are; tests/data/families_ru/
holds only what they cannot show: integer parameters (numerals/*) and a family without Russian
text (exist/english_only)."""

from __future__ import annotations

import functools
import itertools
import math
from collections import Counter
from pathlib import Path

import pytest
import yaml
from native_fixtures import FIXTURES
from native_fixtures import fixture_realiser as make_fixture_realiser

from translate.base import Backend
from translate.native import DEFAULT_FAMILIES_DIR, NativeRealiser, RealisationError
from translate.spelling import apply_yo_policy

DATA = Path(__file__).parent / "data"
REFERENCES = yaml.safe_load((DATA / "ru_reference.yaml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def realiser() -> NativeRealiser:
    """The realiser over the shipped families, as ``python -m translate`` runs it."""
    return NativeRealiser(seed=0)


@pytest.fixture(scope="module")
def fixture_realiser() -> NativeRealiser:
    return make_fixture_realiser(seed=0)


@pytest.fixture(scope="module")
def realiser_of(realiser, fixture_realiser):
    """The realiser that holds a family: the shipped one, else the fixtures'."""
    return lambda family: realiser if family in realiser.families else fixture_realiser


def question_record(family: dict, params: dict, image_index: int, question_index: int) -> dict:
    """A question as questions.json holds it: the family's program with the values filled in."""
    program = []
    for node in family["program"]:
        values = [params.get(v, v) for v in node.get("value_inputs", [])]
        program.append({"function": node["function"], "inputs": node.get("inputs", []), "value_inputs": [v for v in values if v]})
    return {
        "split": "new", "image_index": image_index, "image_filename": f"ruclevr_{image_index:06d}.png",
        "question_index": question_index, "question": "(English text)", "program": program, "answer": "yes",
        "family": family["id"], "question_type": "binary", "template_index": 0, "params": params,
    }


@functools.cache
def family_files() -> dict[str, dict]:
    """Every family of the shipped folder and of the fixtures, as the files hold it, by id."""
    families = {}
    for path in [*DEFAULT_FAMILIES_DIR.glob("*.yaml"), *FIXTURES.glob("*.yaml")]:
        for family in yaml.safe_load(path.read_text(encoding="utf-8"))["families"]:
            families[family["id"]] = family
    return families


def family_file(family_id: str) -> dict:
    return family_files()[family_id]


def test_references_cover_every_group_of_the_shipped_families(realiser):
    shipped = {family["group"] for family in family_files().values() if family["id"] in realiser.families}
    on_shipped = [ref for ref in REFERENCES if not ref["family"].startswith("numerals/")]
    assert len(on_shipped) >= 30
    assert {family_file(ref["family"])["group"] for ref in on_shipped} == shipped
    assert len({ref["family"] for ref in on_shipped}) >= 40


@pytest.mark.parametrize("reference", REFERENCES, ids=[ref["ru"][:60] for ref in REFERENCES])
def test_reproduces_hand_written_reference(realiser_of, reference):
    realiser = realiser_of(reference["family"])
    text = realiser.render(reference["family"], reference["params"], reference["template"], reference.get("words"))
    assert text == reference["ru"]


def all_renderings(realiser: NativeRealiser, family: str, params: dict) -> dict[str, tuple]:
    """Every text the realiser may choose for these values: each template × each word choice."""
    options = realiser.word_options(family, params)
    texts = {}
    for template in range(len(realiser.families[family].templates)):
        for choice in itertools.product(*options.values()):
            texts[realiser.render(family, params, template, dict(zip(options, choice, strict=True)))] = (template, *choice)
    return texts


def test_realise_picks_one_of_the_allowed_renderings_for_each_reference(realiser_of):
    checked = 0
    for i, ref in enumerate(REFERENCES):
        realiser = realiser_of(ref["family"])
        [text] = realiser.realise([question_record(family_file(ref["family"]), ref["params"], image_index=7, question_index=i)])
        options = realiser.word_options(ref["family"], ref["params"]).values()
        if math.prod(len(words) for words in options) <= 256:  # enumerating the longest families is slow
            assert text in all_renderings(realiser, ref["family"], ref["params"])
            checked += 1
    assert checked >= 40


def many_questions(count: int) -> list[dict]:
    family = family_file("count/one_hop")
    params = {"<Z>": "large", "<C>": "", "<M>": "metal", "<S>": "sphere", "<R>": "left",
              "<Z2>": "small", "<C2>": "", "<M2>": "rubber", "<S2>": ""}
    return [question_record(family, params, image_index=i // 5, question_index=i) for i in range(count)]


def test_choices_are_deterministic_and_do_not_depend_on_the_batch(realiser):
    questions = many_questions(200)
    texts = realiser.realise(questions)
    assert NativeRealiser(seed=0).realise(questions) == texts
    assert realiser.realise(questions[::-1]) == texts[::-1]
    assert [realiser.realise([q])[0] for q in questions[50:60]] == texts[50:60]


def test_choices_cover_every_template_and_synonym_evenly_and_change_with_the_seed(realiser):
    questions = many_questions(600)
    texts = realiser.realise(questions)
    renderings = all_renderings(realiser, "count/one_hop", questions[0]["params"])
    choices = [renderings[text] for text in texts]  # KeyError if a text is not an allowed rendering
    sizes = [len(realiser.families["count/one_hop"].templates)]
    sizes += [len(words) for words in realiser.word_options("count/one_hop", questions[0]["params"]).values()]
    # three templates; two Russian words for each value given and for an empty shape (предмет, объект)
    assert sizes == [3, 2, 1, 2, 2, 2, 2, 1, 2, 2]
    for position, size in enumerate(sizes):  # the template, then each placeholder's word
        counts = Counter(choice[position] for choice in choices)
        assert len(counts) == size
        assert min(counts.values()) > 0.8 * len(choices) / size
    other_seed = NativeRealiser(seed=1).realise(questions)
    assert sum(a != b for a, b in zip(texts, other_seed, strict=True)) > len(texts) // 2


def test_same_question_identity_gives_same_text_even_with_other_neighbours(realiser):
    first, second = many_questions(2)
    alone = realiser.realise([second])
    assert realiser.realise([first, second])[1] == alone[0]


def test_question_without_indices_is_identified_by_its_content(realiser):
    question = {k: v for k, v in many_questions(1)[0].items() if k not in ("image_index", "question_index")}
    text = realiser.realise([question])[0]
    assert realiser.realise([dict(question)]) == [text]
    assert text in all_renderings(realiser, "count/one_hop", question["params"])


def test_family_without_russian_text_gives_none_in_its_place(fixture_realiser):
    family = family_file("exist/english_only")
    params = {name: "" for name in family["params"]} | {"<R>": "left"}
    numerals = family_file("numerals/exactly")
    counted = {name: "" for name in numerals["params"]} | {"<N>": "3", "<S>": "cube"}
    questions = [question_record(numerals, counted, 0, 0), question_record(family, params, 0, 1),
                 question_record(numerals, counted, 0, 2)]
    texts = fixture_realiser.realise(questions)
    assert texts[1] is None
    assert texts[0] and texts[2]


def test_family_found_by_clevr_file_name_and_index(realiser):
    question = many_questions(1)[0]
    clevr_style = {k: v for k, v in question.items() if k != "family"}
    clevr_style |= {"template_filename": "count.yaml", "question_family_index": 1}
    assert realiser.realise([clevr_style]) == realiser.realise([question])


def test_output_keeps_yo_for_the_spelling_policy_to_apply(realiser):
    params = {"<Z>": "", "<C>": "yellow", "<M>": "", "<S>": "cube"}
    text = realiser.render("count/zero_hop", params, 0)
    assert text == "Сколько жёлтых кубов?"
    assert apply_yo_policy(text, "e") == "Сколько желтых кубов?"


def test_is_a_backend_named_native(realiser):
    backend: Backend = realiser
    assert backend.name == "native"


@pytest.mark.parametrize(
    "change, message",
    [
        ({"family": "no/such"}, "family 'no/such' is not among the family files"),
        ({"params": {"<Z>": "large"}}, "has no value for <C> in params"),
        ({"params": "large red"}, "has no params mapping"),
        ({"params_update": {"<C>": "pink"}}, "unknown color 'pink' for <C>; allowed: gray, red"),
        ({"params_update": {"<R>": "above"}}, "unknown relation 'above' for <R>; allowed: left, right, front, behind"),
        ({"params_update": {"<S2>": "cone"}}, "unknown shape 'cone' for <S2>"),
    ],
)
def test_bad_question_is_a_clear_error(realiser, change, message):
    question = many_questions(1)[0]
    if "params_update" in change:
        question["params"] = question["params"] | change["params_update"]
    else:
        question.update(change)
    with pytest.raises(RealisationError, match=message.replace("(", r"\(")):
        realiser.realise([question])


def test_render_refuses_a_word_that_is_not_a_synonym_of_the_value(realiser):
    params = {"<Z>": "", "<C>": "", "<M>": "", "<S>": "cube"}
    with pytest.raises(RealisationError, match="'шар' is not a Russian word for <S>='cube'; allowed: куб, кубик"):
        realiser.render("count/zero_hop", params, 0, {"<S>": "шар"})
    with pytest.raises(RealisationError, match="has 3 Russian templates, no index 3"):
        realiser.render("count/zero_hop", params, 3)


def test_numbers_may_be_integers_or_digit_strings(fixture_realiser):
    params = {"<N>": 2, "<Z>": "", "<C>": "", "<M>": "", "<S>": "cube"}
    assert fixture_realiser.render("numerals/exactly", params) == "Правда ли, что на изображении ровно 2 куба?"
    with pytest.raises(RealisationError, match="<N> must be a non-negative integer, got '-3'"):
        fixture_realiser.render("numerals/exactly", params | {"<N>": "-3"})


@pytest.mark.parametrize("seed", [-1, 1.5, True])
def test_seed_must_be_a_non_negative_integer(seed):
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        NativeRealiser(seed=seed)
