"""1,000 sampled scenes: every answer re-executes, nothing ill-posed or repeated, answers balanced per family."""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest

from assets.vocabulary import ATTRIBUTES, load_vocabulary
from questions.executor import run_program
from questions.families import load_families
from questions.functions import format_answer
from questions.generate import Settings, generate
from questions.occlusion import uses_occlusion
from questions.plan import Plan, choices_of, expand_program_positions, run_plan
from questions.readings import unsafe_readings
from questions.scene_index import SceneIndex
from questions.scene_questions import program_key
from questions.text import normalise_text

SCENES = 1000


@pytest.fixture(scope="module")
def run(thousand_scenes):
    scenes = thousand_scenes[:SCENES]
    # Graph-only scenes record no occlusion: those families are asked on renders (tests/test_occlusion.py,
    # benchmarks/occlusion_bench.py), so here they would only ever be missing.
    families = {name: family for name, family in load_families().items() if not uses_occlusion(family.program)}
    questions = generate(scenes, families, Settings(seed=0), progress=False)
    return scenes, families, questions


@pytest.fixture(scope="module")
def by_family(run):
    answers: dict[str, Counter] = defaultdict(Counter)
    for question in run[2]:
        answers[question["family"]][question["answer"]] += 1
    return answers


def test_every_scene_gets_its_questions(run):
    scenes, _, questions = run
    per_image = Counter(q["image_index"] for q in questions)
    # 95 %, not 99 %, since issue 25 (counts rarely 0, answers balanced given the named values: 96.6 % here)
    # and issue 23 (relations read in the image, unclear pairs refused): 95.9 % with both;
    # 94 % since issue 35: the what-if and perspective families refuse most candidates (an edit that
    # changes nothing, a side within the angular margin) and spend the scenes' search budget: 94.5 %
    # with them, 95.5 % without the 4 what-if families, 95.7 % without the 3 perspective ones;
    # 93.6 % with hypothetical/swap/count (a swap that leaves the count as in the picture is refused)
    assert sum(1 for index in range(SCENES) if per_image[index] == 10) >= 0.93 * SCENES


def test_every_answer_is_its_program_run_on_its_scene(run):
    scenes, families, questions = run
    for question in questions:
        # run_program raises if any unique node sees no object or several: no ambiguous reference
        outputs = run_program(question["program"], SceneIndex.from_scene(scenes[question["image_index"]]))
        assert format_answer(outputs[-1]) == question["answer"]
        for position, node in enumerate(question["program"]):
            if node["function"].startswith("filter_"):
                assert outputs[position] != outputs[node["inputs"][0]], ("filter that changes nothing", question)


def test_no_question_names_its_answer(run):
    _, families, questions = run
    for question in questions:
        if families[question["family"]].answer_type in ATTRIBUTES:
            said = {value for node in question["program"] for value in node["value_inputs"]}
            assert question["answer"] not in said


def test_no_repeats_within_an_image_or_a_split(run):
    _, _, questions = run
    programs, texts = Counter(), Counter()
    for question in questions:
        programs[(question["split"], program_key(question["program"]))] += 1
        texts[(question["split"], normalise_text(question["question"]))] += 1
    assert max(programs.values()) == 1 and max(texts.values()) == 1


def test_records_follow_the_contract(run):
    _, families, questions = run
    vocabulary = load_vocabulary()
    for question in questions:
        family = families[question["family"]]
        assert question["question_type"] == family.question_type
        assert question["template_filename"] == family.source
        assert 0 <= question["template_index"] < len(family.text["en"])
        assert list(question["params"]) == list(family.params)
        for name, value in question["params"].items():
            if value and family.params[name] in ATTRIBUTES:
                words = vocabulary.value(family.params[name], value).en["synonyms"]
                assert any(word in question["question"].lower() for word in words), (name, value, question["question"])


def test_every_family_is_used(run, by_family):
    _, families, _ = run
    uses = {family_id: sum(by_family[family_id].values()) for family_id in families}
    # 8, not 30, since issue 25: a family whose count is mostly 0 (count/same_color: 9 here) may be
    # asked with 0 on one scene in ten only, and a query names no value of the attribute it asks
    # (query/same_color/shape describes its anchor without a shape: 17), so both find fewer questions;
    # 7 for count/same_color since issue 26's second reading (a phrase repeating all of its anchor's
    # attributes is not asked): at least 5 says no family is crowded out
    assert min(uses.values()) >= 5, sorted(uses.items(), key=lambda item: item[1])[:5]


def test_yes_no_families_are_balanced(run, by_family):
    _, families, _ = run
    shares = {
        family_id: by_family[family_id]["yes"] / sum(by_family[family_id].values())
        for family_id, family in families.items()
        if family.question_type == "binary"
    }
    assert len(shares) >= 20
    assert all(0.4 <= share <= 0.6 for share in shares.values()), shares


def test_no_count_family_piles_up_on_one_number(run, by_family):
    _, families, _ = run
    tops = {
        family_id: max(by_family[family_id].values()) / sum(by_family[family_id].values())
        for family_id, family in families.items()
        if family.question_type == "count" and sum(by_family[family_id].values()) >= 30  # count/same_color has 9 (issue 25)
    }
    assert len(tops) >= 8
    # A family asked fewer than 40 times (count/same_color/anything: 32) moves 3 points a question:
    # 13 of 32 (0.41) since the relations are read in the image and the templates of issue 26, 13 of 35 before.
    sizes = {family_id: sum(by_family[family_id].values()) for family_id in tops}
    assert all(top <= (0.4 if sizes[family_id] >= 40 else 0.45) for family_id, top in tops.items()), tops


def test_every_value_is_an_answer_of_each_query_family(run, by_family):
    _, families, _ = run
    vocabulary = load_vocabulary()
    query_families = [family for family in families.values() if family.answer_type in ATTRIBUTES]
    assert {family.answer_type for family in query_families} == set(ATTRIBUTES)
    for family in query_families:
        assert set(by_family[family.id]) == set(vocabulary.names(family.answer_type)), family.id


def test_each_template_node_gives_what_its_release_form_node_gives(run):
    """The reading check executes template nodes (``run_plan``); on every seventh question they
    give what the release-form executor gives at the matching nodes, and the check made afresh
    from the family and values finds the readings the engine wrote."""
    scenes, families, questions = run
    checked = 0
    for question in questions[::7]:
        family = families[question["family"]]
        plan = Plan.of(family)
        choices = choices_of(plan, question["params"])
        index = SceneIndex.from_scene(scenes[question["image_index"]])
        program, positions = expand_program_positions(plan, choices)
        assert program == question["program"]
        release = run_program(program, index)
        assert run_plan(plan, choices, index) == [release[position] for position in positions]
        assert unsafe_readings(family, question["params"], index) == question["unsafe_readings"]
        checked += bool(question["unsafe_readings"])
    assert checked > 20  # questions with unsafe readings are among them
