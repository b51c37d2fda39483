"""Round 6 of issue 26's templates, planted on hand-made scenes: three-hop chains say their middle
hop as a relative clause right after its noun («… стоит серый предмет, левее которого стоит
крупный предмет»), which takes that noun whatever agrees before it; a size said right after «ещё»
is never «большие» (it reads «ещё бо́льшие», even larger: a round-5 reader's second reading).

Scenes, questions and realisers are the real ones (see tests/test_questions_readings.py).
"""

from __future__ import annotations

import pytest
from test_questions_readings import question_on, scene_of

from filter.morph import MorphChecker
from questions.families import load_families
from questions.readings import UNSAFE_FIELD
from translate.native import NativeRealiser

# A small yellow thing, a large red one right of it, a small gray one further right.
ROW = scene_of(
    ("small", "yellow", "rubber", "sphere", 0, 0),
    ("large", "red", "metal", "cube", 1, 0),
    ("small", "gray", "rubber", "cylinder", 2, 0),
)


@pytest.fixture(scope="module")
def families():
    return load_families()


@pytest.fixture(scope="module")
def realiser():
    return NativeRealiser()


@pytest.mark.parametrize("family_id", ["exist/three_hop", "count/three_hop", "query/three_hop/color"])
def test_a_three_hop_middle_hop_is_a_relative_clause_of_its_own_noun(families, realiser, family_id):
    family = families[family_id]
    # «Справа от жёлтого предмета стоит серый предмет, левее которого стоит крупный предмет»: left
    # of the yellow thing is nothing, so «которого» read as the yellow thing changes the answer;
    # right after «серый предмет,» it can only be the gray thing.
    values = {"<C>": "yellow", "<R>": "right", "<C2>": "gray", "<R2>": "left", "<Z3>": "large", "<R3>": "right"}
    if family_id == "query/three_hop/color":
        values |= {"<R3>": "left"}
    question = question_on(family, ROW, values)
    assert "anchor:<R2>:<S>" in question[UNSAFE_FIELD]
    texts = {realiser.realise_with_template({**question, "question_index": i}, 1) for i in range(12)}
    assert None not in texts
    for text in texts:
        assert "серый предмет, " in text or "серый объект, " in text, text
        assert "которого" in text and "этого серого" not in text, text
        assert not MorphChecker().problems(text), text


def test_other_readings_of_which_stay_where_it_does_not_follow_its_noun(families, realiser):
    from translate.russian_families import agreeing_readings

    family = realiser.family_of({"family": "exist/three_hop"})
    sites = family.sites[1]
    which = [site for site in sites.sites if site.role == "which"]
    assert len(which) == 1 and which[0].after_comma
    features = tuple(("masc", "sing") for _ in sites.heads)
    readings, _, _ = agreeing_readings(sites, family.structure, features)
    assert "anchor:<R2>:<S>" not in readings
    # The same site not right after its noun: the earlier agreeing phrase may be meant.
    moved = type(sites)(
        **{
            **sites.__dict__,
            "sites": tuple(type(site)(**{**site.__dict__, "after_comma": False}) for site in sites.sites),
            "agreement_cache": {},
        }
    )
    readings, _, _ = agreeing_readings(moved, family.structure, features)
    assert "anchor:<R2>:<S>" in readings


@pytest.mark.parametrize("family_id", ["exist/same_color", "exist/same_shape", "count/same_size"])
def test_a_size_right_after_esche_is_never_bolshie(realiser, family_id):
    """«Посмотри на куб. Есть ли ещё большие предметы такого же цвета?» also reads «even larger ones»:
    where a template says the size right after «ещё», large is «крупный», and so is every size of that
    family (a value said again takes the word said first)."""
    family = realiser.families[family_id]
    assert any(family.after_still)
    params = {slot: "" for slot in family.slots} | {"<Z>": "large", "<S>": "cube", "<Z2>": "large"}
    for slot, kind in family.kinds.items():
        if kind == "shape" and slot != "<S>":
            params[slot] = ""
    for slot in family.slots:
        if family.kinds[slot] == "size":
            assert realiser.word_options(family_id, params)[slot] == ("крупный",)
    texts = [realiser.render(family_id, params, index) for index in range(len(family.templates))]
    assert texts and all("больш" not in text for text in texts), texts
    assert any("ещё крупн" in text.lower() or "еще крупн" in text.lower() for text in texts), texts
    with pytest.raises(Exception, match="not a Russian word"):
        realiser.render(family_id, params, 0, {"<Z2>": "большой"})
