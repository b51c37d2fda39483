"""Questions whose own words decide the answer are not asked (questions/named_objects.py), nor
those where whether a named object counts changes the answer. Real families on hand-made scenes."""

from __future__ import annotations

import pytest
from helpers import benchmark_script
from test_questions_readings import scene_of

from questions.families import load_families
from questions.named_objects import DECIDED, MAY_COUNT, OTHER_OPEN, text_refusal
from questions.plan import Plan, choices_of, run_plan
from questions.random_stream import RandomStream
from questions.scene_index import SceneIndex
from questions.search import SceneSearch

# Left to right: a small blue sphere, a large red cube, a small gray cylinder; a brown sphere behind.
ROW = scene_of(
    ("small", "blue", "rubber", "sphere", 0, 0),
    ("large", "red", "metal", "cube", 1, 0),
    ("small", "gray", "rubber", "cylinder", 2, 0),
    ("small", "brown", "rubber", "sphere", 3, -1),
)


@pytest.fixture(scope="module")
def families():
    return load_families()


def refusal(family, scene: dict, values: dict) -> str | None:
    plan = Plan.of(family)
    choices = choices_of(plan, {name: values.get(name, "") for name in family.params})
    index = SceneIndex.from_scene(scene)
    return text_refusal(plan, choices, run_plan(plan, choices, index), index)


def test_an_exist_whose_set_holds_the_first_object_by_the_text_is_decided(families):
    # «Справа от синего предмета находится большой предмет. Есть ли предметы левее этого большого предмета?»
    values = {"<C>": "blue", "<R>": "right", "<Z2>": "large", "<R2>": "left"}
    assert refusal(families["exist/two_hop"], ROW, values) == DECIDED
    # «… Есть ли предметы правее этого большого предмета?»: the text places the blue one left of it.
    assert refusal(families["exist/two_hop"], ROW, {**values, "<R2>": "right"}) is None


def test_a_chain_read_both_ways_and_chained_is_decided(families):
    # blue; right of it the gray cylinder; left of that a large thing; anything right of the large
    # thing? the gray cylinder is, by the words (left of the gray one is the large one).
    values = {"<C>": "blue", "<R>": "right", "<C2>": "gray", "<R2>": "left", "<Z3>": "large", "<R3>": "right"}
    assert refusal(families["exist/three_hop"], ROW, values) == DECIDED
    # … and left of the large thing: the blue sphere is, on the scene, but the text does not say so
    # (left of gray, right of blue … the large one could be either side of blue): it alone makes «да».
    assert refusal(families["exist/three_hop"], ROW, {**values, "<R3>": "left"}) == MAY_COUNT


def test_a_count_compared_with_a_set_whose_anchor_it_counts_is_decided(families):
    # «Верно ли, что металлических кубов больше, чем предметов справа от металлического куба?»: one metal cube.
    family = families["compare_integer/zero_one_hop/greater"]
    values = {"<M>": "metal", "<S>": "cube", "<M2>": "metal", "<S2>": "cube", "<R>": "right"}
    assert refusal(family, ROW, values) == DECIDED
    # spheres against things right of the metal cube: nothing named is counted by the words.
    assert refusal(family, ROW, {**values, "<M>": "", "<S>": "sphere"}) is None


def test_a_named_object_that_may_count_is_refused_only_where_it_changes_the_answer(families):
    family = families["exist/two_hop"]
    # gray cylinder; left of it the red cube; is there a sphere behind the cube? only the brown one
    # (not named): asked. Is there a thing left of the cube? only the blue sphere: not named, asked.
    assert refusal(family, ROW, {"<C>": "gray", "<R>": "left", "<S2>": "cube", "<R2>": "behind", "<S3>": "sphere"}) is None
    # blue sphere; right of it the gray cylinder; any sphere right of the gray cylinder? the brown one,
    # and no named one: asked. Any rubber thing left of the red cube right of the blue rubber sphere?
    # decided: the blue sphere is left of the cube by the words, and rubber; without «rubber» said of
    # it, it is rubber on the scene only, and the only rubber thing there: whether it counts decides.
    assert refusal(family, ROW, {"<C>": "blue", "<R>": "right", "<C2>": "gray", "<R2>": "right", "<S3>": "sphere"}) is None
    values = {"<C>": "blue", "<M>": "rubber", "<R>": "right", "<C2>": "red", "<R2>": "left", "<M3>": "rubber"}
    assert refusal(family, ROW, values) == DECIDED
    assert refusal(family, ROW, {**values, "<M>": ""}) == MAY_COUNT
    count = families["count/two_hop"]
    # red cube; right of it the brown sphere; how many rubber things left of the brown sphere? the blue
    # sphere and the gray cylinder, and the text says nothing of them: asked.
    assert refusal(count, ROW, {"<C>": "red", "<R>": "right", "<C2>": "brown", "<R2>": "left", "<M3>": "rubber"}) is None
    # brown sphere; in front of it the red cube; how many things left of the red cube? the blue sphere
    # (not named): asked; how many things right of the red cube? gray and brown: brown is named and
    # its place is not said: it changes the count.
    assert refusal(count, ROW, {"<C>": "brown", "<R>": "front", "<C2>": "red", "<R2>": "left"}) is None
    assert refusal(count, ROW, {"<C>": "brown", "<R>": "front", "<C2>": "red", "<R2>": "right"}) == MAY_COUNT
    # … how many rubber things right of the red cube? gray and brown: the text says neither that the
    # brown sphere is rubber nor that it is right of the cube: it counts as the picture shows, asked.
    assert refusal(count, ROW, {"<C>": "brown", "<R>": "front", "<C2>": "red", "<R2>": "right", "<M3>": "rubber"}) is None


def test_the_search_finds_no_refused_candidate(families):
    index = SceneIndex.from_scene(ROW)
    for family_id in ("exist/two_hop", "exist/three_hop", "count/two_hop", "compare_integer/zero_one_hop/greater"):
        plan = Plan.of(families[family_id])
        search = SceneSearch(index, RandomStream.for_unit("questions.search", 7, 0))
        for _ in range(6):
            candidate = search.find(plan, search.steps + 3000)
            if candidate is not None:
                assert text_refusal(plan, candidate.choices, candidate.outputs, index) is None


def test_the_caches_are_bounded_least_recently_used_ones_that_change_no_answer(families):
    from questions import named_objects

    caches = (named_objects._early_checks, named_objects._named_facts)
    assert [cache.cache_info().maxsize for cache in caches] == [named_objects.EARLY_CHECKS_CACHED,
                                                               named_objects.FACTS_CACHED]
    index = SceneIndex.from_scene(ROW)
    plans = [Plan.of(families[family_id]) for family_id in ("exist/two_hop", "count/two_hop")]

    def found() -> list:
        """The search's candidates (it asks early_checks and the named objects' facts) and their refusals."""
        results = []
        for plan in plans:
            search = SceneSearch(index, RandomStream.for_unit("questions.search", 7, 0))
            for _ in range(4):
                candidate = search.find(plan, search.steps + 3000)
                if candidate is not None:
                    results.append((candidate.choices, text_refusal(plan, candidate.choices, candidate.outputs, index)))
        return results

    for cache in caches:
        cache.cache_clear()
    cold = found()
    assert cold and all(0 < cache.cache_info().currsize <= cache.cache_info().maxsize for cache in caches)
    assert found() == cold, "answered again from the caches, the same candidates and refusals"
    assert named_objects._early_checks.cache_info().hits > 0


# Left to right: a small blue sphere (the only sphere), a large red cube, a small gray cylinder; a brown cube behind.
ONE_SPHERE = scene_of(
    ("small", "blue", "rubber", "sphere", 0, 0),
    ("large", "red", "metal", "cube", 1, 0),
    ("small", "gray", "rubber", "cylinder", 2, 0),
    ("small", "brown", "rubber", "cube", 3, -1),
)


def test_a_set_only_a_named_object_could_be_in_and_the_words_keep_it_out_is_decided(families):
    # «Есть ли сферы, которые находятся позади красного предмета и при этом справа от сферы?»: «сфера»
    # is the only sphere, and nothing is right of itself: «нет» whatever the picture (round 10, k120).
    family = families["exist/and_relate"]
    values = {"<C>": "red", "<R>": "behind", "<S2>": "sphere", "<R2>": "right", "<S3>": "sphere"}
    assert refusal(family, ONE_SPHERE, values) == DECIDED
    # … cubes behind the red one and right of the sphere: the brown cube may be, the picture says.
    assert refusal(family, ONE_SPHERE, {**values, "<S3>": "cube"}) is None


def test_a_swapped_object_the_words_fit_to_the_counted_set_may_count(families):
    family = families["hypothetical/swap/count"]
    # «Если поменять местами красный предмет и синий шар, сколько шаров окажется правее красного
    # предмета?»: the blue sphere would be, and is a sphere by the words: counted, or another one?
    values = {"<C>": "red", "<C2>": "blue", "<S2>": "sphere", "<R>": "right", "<S3>": "sphere"}
    assert refusal(family, ONE_SPHERE, values) == MAY_COUNT
    # … a rubber thing: the text does not say the blue sphere is rubber: it counts as the picture shows.
    assert refusal(family, ONE_SPHERE, {**values, "<S3>": "", "<M3>": "rubber"}) is None


def test_an_edited_object_counts_by_its_new_value_unless_the_words_settle_the_whole_set(families):
    family = families["hypothetical/material/count"]
    # «Если бы синий шар был металлическим, сколько было бы металлических предметов?»: the sphere counts
    # by the words, the other metal things by the picture: asked.
    values = {"<C>": "blue", "<S>": "sphere", "<M2>": "metal", "<M3>": "metal"}
    assert refusal(family, ONE_SPHERE, values) is None
    # «… сколько было бы синих металлических шаров?»: only the blue sphere can be one: 1 by the words.
    assert refusal(family, ONE_SPHERE, {**values, "<C3>": "blue", "<S3>": "sphere"}) == DECIDED
    # «Если перекрасить красный куб в синий цвет, сколько станет синих кубов?»: the red cube, and the
    # picture's blue cubes (none here, but the words do not say so): asked.
    recolor = families["hypothetical/recolor/count"]
    assert refusal(recolor, ONE_SPHERE, {"<C>": "red", "<S>": "cube", "<C2>": "blue", "<C3>": "blue", "<S3>": "cube"}) is None
    # «… сколько станет красных кубов?»: the only red cube is blue now: none, whatever the picture.
    assert refusal(recolor, ONE_SPHERE, {"<C>": "red", "<S>": "cube", "<C2>": "blue", "<C3>": "red", "<S3>": "cube"}) == DECIDED


def test_other_said_of_an_object_two_earlier_ones_fit_is_refused(families):
    # «Совпадает ли цвет небольшого резинового предмета с цветом другого резинового предмета за голубым
    # резиновым предметом?» (round 10, k81): other than the small one, or than the cyan one?
    scene = scene_of(
        ("small", "red", "rubber", "cube", 0, 0),
        ("large", "cyan", "rubber", "sphere", 2, 0),
        ("large", "green", "rubber", "cylinder", 2, -1),
        ("large", "blue", "metal", "cube", 4, 1),
    )
    family = families["compare/zero_one_hop/color"]
    values = {"<Z>": "small", "<M>": "rubber", "<C2>": "cyan", "<M2>": "rubber", "<R>": "behind", "<M3>": "rubber"}
    assert refusal(family, scene, values) == OTHER_OPEN
    # … «за голубым шаром»: only the small rubber one fits the rubber thing behind it: one «другой».
    assert refusal(family, scene, {**values, "<M2>": "", "<S2>": "sphere"}) is None
    # … «с цветом цилиндра за голубым резиновым предметом»: no earlier object fits, no «другой».
    assert refusal(family, scene, {**values, "<M3>": "", "<S3>": "cylinder"}) is None


def test_other_said_again_after_an_earlier_other_is_refused(families):
    # «Левее жёлтого объекта расположен другой объект. За этим другим объектом расположен крупный серый
    # объект. Из чего сделан другой крупный объект правее этого крупного серого объекта?» (round 10, k294):
    # other than the gray one, or than the first «другой» one too?
    scene = scene_of(
        ("small", "yellow", "metal", "cube", 1, 0),
        ("small", "gray", "metal", "sphere", 0, 0),
        ("large", "gray", "rubber", "cylinder", 3, -1),
        ("large", "blue", "rubber", "cube", 4, 1),
    )
    family = families["query/three_hop/material"]
    values = {"<C>": "yellow", "<R>": "left", "<R2>": "behind", "<Z3>": "large", "<C3>": "gray", "<R3>": "right", "<Z4>": "large"}
    assert refusal(family, scene, values) == OTHER_OPEN
    # … «Из чего сделан кубик правее этого крупного серого объекта?»: the cube fits no earlier object.
    assert refusal(family, scene, {**values, "<Z4>": "", "<S4>": "cube"}) is None


def test_a_bare_other_said_again_is_refused_but_a_single_one_is_asked(families):
    # «За блестящим кубиком стоит другой предмет, справа от которого стоит другой предмет. Какого размера
    # зелёный предмет слева от этого предмета?» (round 11, k24): other than which, and «этого» is which?
    scene = scene_of(
        ("small", "blue", "metal", "cube", 0, 0),
        ("large", "gray", "rubber", "sphere", 1, -1),
        ("small", "red", "rubber", "cylinder", 2, 1),
        ("large", "green", "rubber", "cube", -1, 1),
    )
    family = families["query/three_hop/size"]
    values = {"<M>": "metal", "<S>": "cube", "<R>": "behind", "<R2>": "right", "<R3>": "left", "<C4>": "green"}
    assert refusal(family, scene, values) == OTHER_OPEN
    # «За блестящим кубиком стоит шар, справа от которого стоит другой предмет»: one «другой», asked.
    assert refusal(family, scene, {**values, "<S2>": "sphere"}) is None


def bench_script():
    """benchmarks/named_objects_bench.py loaded as a module (benchmarks/ is no package)."""
    return benchmark_script("named_objects_bench.py")


#: The reviewer's questions that the independent audit found still asked (seed 0, 1,000 scenes), and
#: the families' words each decides by: transitivity through the only object found, or a
#: two-valued attribute (size, material) of the only object so described.
DECIDED_BY_WORDS = [
    # «Behind the red thing there is a thing. Are there any things behind that thing?» (no)
    ("exist/two_hop", {"<C>": "red", "<R>": "behind", "<R2>": "behind"}),
    # «Right of the blue object is an object. What number of objects are right of that object?» (0)
    ("count/two_hop", {"<C>": "blue", "<R>": "right", "<R2>": "right"}),
    # «In front of the matte cube is a thing. Left of that thing is a shiny cube. Is there a thing in
    # front of the shiny cube?» (yes: the matte cube)
    ("exist/three_hop", {"<M>": "rubber", "<S>": "cube", "<R>": "front", "<R2>": "left", "<M3>": "metal", "<S3>": "cube",
                         "<R3>": "front"}),
    # «Is the number of large things less than the number of things behind the tiny thing?» (no)
    ("compare_integer/zero_one_hop/less", {"<Z>": "large", "<Z2>": "small", "<R>": "behind"}),
    # «How many rubber objects are both left of the big object and left of the small rubber object?» (0)
    ("count/and_relate", {"<Z>": "large", "<R>": "left", "<Z2>": "small", "<M2>": "rubber", "<R2>": "left", "<M3>": "rubber"}),
]
#: Questions the picture decides, each close to one above.
DECIDED_BY_PICTURE = [
    ("exist/two_hop", {"<C>": "red", "<R>": "behind", "<R2>": "left"}),
    ("count/two_hop", {"<C>": "blue", "<R>": "right", "<R2>": "left"}),
    ("compare_integer/zero_one_hop/less", {"<Z>": "small", "<Z2>": "small", "<R>": "behind"}),
    ("count/and_relate", {"<Z>": "large", "<R>": "left", "<Z2>": "small", "<M2>": "rubber", "<R2>": "left", "<M3>": "metal"}),
]


@pytest.fixture(scope="module")
def audit_pool():
    return bench_script().scene_pool(0)


def test_the_independent_audit_finds_the_questions_decided_by_their_words(families, audit_pool):
    bench = bench_script()
    for family_id, values in DECIDED_BY_WORDS + DECIDED_BY_PICTURE:
        plan = Plan.of(families[family_id])
        choices = choices_of(plan, {name: values.get(name, "") for name in families[family_id].params})
        answers = bench.answers_on_pool(plan, choices, audit_pool)
        assert sum(answers.values()) >= bench.MIN_RUNS, family_id
        assert bench.decided_by_words(plan, choices, audit_pool) == ((family_id, values) in DECIDED_BY_WORDS), (family_id, answers)


def test_a_set_found_from_the_only_one_by_its_own_relation_is_empty_by_the_words(families):
    # «Позади красного предмета находится предмет. Есть ли предметы позади этого предмета?»: the brown
    # sphere is the only thing behind the red cube, so nothing is behind it (it would be behind red too).
    values = {"<C>": "red", "<R>": "behind", "<R2>": "behind"}
    assert refusal(families["exist/two_hop"], ROW, values) == DECIDED
    # … «Есть ли предметы левее этого предмета?»: the picture decides (the red cube does not alone).
    assert refusal(families["exist/two_hop"], ROW, {**values, "<R2>": "left"}) is None
    # «Справа от синего предмета находится предмет. Сколько предметов справа от этого предмета?» (0)
    scene = scene_of(
        ("small", "blue", "rubber", "sphere", 0, 0),
        ("large", "red", "metal", "cube", 1, 0),
        ("small", "gray", "rubber", "cylinder", -1, 0),
    )
    values = {"<C>": "blue", "<R>": "right", "<R2>": "right"}
    assert refusal(families["count/two_hop"], scene, values) == DECIDED
    # «Справа от синего предмета находится куб. Сколько предметов справа от этого куба?»: a sphere may be.
    assert refusal(families["count/two_hop"], scene, {**values, "<S2>": "cube"}) is None
    # «… Сколько кубов справа от этого куба?»: none, by the words.
    assert refusal(families["count/two_hop"], scene, {**values, "<S2>": "cube", "<S3>": "cube"}) == DECIDED


def test_another_named_object_the_words_fit_is_beside_the_only_one(families):
    # «Перед матовым кубом находится предмет. Левее него — блестящий куб. Есть ли предмет перед
    # блестящим кубом?»: the shiny cube is not in front of the matte one (the thing is the only one
    # there), so the matte cube is in front of it: yes, by the words.
    scene = scene_of(
        ("large", "red", "rubber", "cube", 0, 0),
        ("small", "gray", "rubber", "sphere", 1, 1),
        ("small", "blue", "metal", "cube", -1, -1),
    )
    values = {"<M>": "rubber", "<S>": "cube", "<R>": "front", "<R2>": "left", "<M3>": "metal", "<S3>": "cube", "<R3>": "front"}
    assert refusal(families["exist/three_hop"], scene, values) == DECIDED
    # … «Есть ли зелёный предмет перед блестящим кубом?»: the matte cube is not said green, the picture decides.
    assert refusal(families["exist/three_hop"], scene, {**values, "<C4>": "green"}) is None


def test_the_only_small_object_makes_every_other_large(families):
    # «Меньше ли больших предметов, чем предметов позади маленького предмета?» (no: those are all large)
    scene = scene_of(
        ("small", "red", "rubber", "sphere", 0, 0),
        ("large", "blue", "metal", "cube", 1, -1),
        ("large", "gray", "rubber", "cylinder", 2, 1),
    )
    family = families["compare_integer/zero_one_hop/less"]
    values = {"<Z>": "large", "<Z2>": "small", "<R>": "behind"}
    assert refusal(family, scene, values) == DECIDED
    assert refusal(family, scene, {**values, "<Z>": "", "<S>": "cube"}) is None
    # «Сколько резиновых предметов левее и большого предмета, и маленького резинового предмета?» (0:
    # a rubber one other than the big one is small, and the small rubber one is its anchor)
    scene = scene_of(
        ("large", "gray", "metal", "cube", 2, 0),
        ("small", "red", "rubber", "sphere", 3, 0),
        ("small", "blue", "metal", "cylinder", 0, 0),
        ("small", "green", "metal", "sphere", 1, 1),
    )
    family = families["count/and_relate"]
    values = {"<Z>": "large", "<R>": "left", "<Z2>": "small", "<M2>": "rubber", "<R2>": "left", "<M3>": "rubber"}
    assert refusal(family, scene, values) == DECIDED
    assert refusal(family, scene, {**values, "<M3>": "metal"}) is None


def test_a_count_compared_with_a_count_of_its_own_subset_is_not_asked(families):
    # «Меньше ли коричневых предметов справа от металлического предмета, чем матовых предметов?»: the
    # metal one is the only one, so the brown ones right of it are matte: yes unless the two sets are
    # the very same (the independent audit: yes on 112 of 112 pool scenes).
    scene = scene_of(
        ("small", "red", "metal", "sphere", 0, 0),
        ("large", "brown", "rubber", "cube", 1, -1),
        ("large", "gray", "rubber", "cylinder", 2, 1),
    )
    family = families["compare_integer/one_hop/less"]
    values = {"<M>": "metal", "<R>": "right", "<C2>": "brown", "<M3>": "rubber"}
    assert refusal(family, scene, values) == DECIDED
    # … «чем больших предметов?»: the picture decides (the metal one may be large or small).
    assert refusal(family, scene, {**values, "<M3>": "", "<Z3>": "large"}) is None


def test_another_object_than_the_only_one_so_described_has_the_other_two_valued_value(families):
    # «Позади резинового шара находится шар, а перед этим шаром — жёлтый куб. Есть ли металлические
    # предметы позади жёлтого куба?»: the second sphere is not the only rubber one, so it is metal, and
    # behind the cube by the words: yes (the audit on 4,000 pool scenes, seed 0: yes on 39 of 39).
    scene = scene_of(
        ("large", "red", "rubber", "sphere", 0, 0),
        ("small", "gray", "metal", "sphere", 1, -2),
        ("small", "yellow", "rubber", "cube", 2, -1),
        ("large", "blue", "metal", "cylinder", 3, -3),
    )
    family = families["exist/three_hop"]
    values = {"<M>": "rubber", "<S>": "sphere", "<R>": "behind", "<S2>": "sphere", "<R2>": "front", "<C3>": "yellow",
              "<S3>": "cube", "<R3>": "behind", "<M4>": "metal"}
    assert refusal(family, scene, values) == DECIDED
    assert refusal(family, scene, {**values, "<M4>": "", "<S4>": "cylinder"}) is None
