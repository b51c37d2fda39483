"""The shipped families hold all 90 of CLEVR 1.0's, each naming its template file and index
(`clevr: [file, index]`), and each program has the shape of that CLEVR template.

CLEVR's templates write fused nodes (filter_unique, relate_filter_count, ...); below, each
template is its program read back to front as our release-form functions, inputs before the
node that uses them (`filter` is the template-only filter of any attributes). The order of
the sides matters: comparison.json relates the first object, the second, or both, attribute by attribute.
"""

from __future__ import annotations

from collections import Counter

import pytest

from questions.families import load_families
from questions.validator import CLEVR_TEMPLATE_FILES

ATTRIBUTES = ("size", "color", "material", "shape")
OBJECT = ["scene", "filter", "unique"]  # filter_unique
SET = ["scene", "filter"]


def hop(thing: list[str]) -> list[str]:
    return thing + ["relate", "filter", "unique"]  # relate_filter_unique


def related(thing: list[str]) -> list[str]:
    return thing + ["relate", "filter"]  # relate_filter


def clevr_templates() -> dict[tuple[str, int], list[str]]:
    expected: dict[tuple[str, int], list[str]] = {}
    for name, hops in (("zero_hop", 0), ("one_hop", 1), ("two_hop", 2), ("three_hop", 3)):
        # CLEVR's order of the queries: zero_hop.json asks shape first, the others size first.
        queried = ("shape", "material", "color", "size") if hops == 0 else ATTRIBUTES
        thing, group = OBJECT, SET
        for _ in range(hops):
            group = related(thing)
            thing = hop(thing)
        expected[(f"{name}.json", 0)] = group + ["count"]
        expected[(f"{name}.json", 1)] = group + ["exist"]
        for k, attribute in enumerate(queried):
            expected[(f"{name}.json", 2 + k)] = thing + [f"query_{attribute}"]
    both = OBJECT + ["relate"] + OBJECT + ["relate", "intersect", "filter"]
    expected[("single_and.json", 0)] = both + ["count"]
    for k, attribute in enumerate(ATTRIBUTES):
        expected[("single_and.json", 1 + k)] = both + ["unique", f"query_{attribute}"]
    expected[("single_or.json", 0)] = SET + SET + ["union", "count"]
    for index, attribute in ((1, "size"), (2, "color"), (4, "material"), (5, "shape")):
        expected[("single_or.json", index)] = SET + SET + ["union", f"filter_{attribute}", "count"]
    expected[("single_or.json", 3)] = related(OBJECT) + related(OBJECT) + ["union", "count"]
    expected[("single_or.json", 6)] = related(OBJECT) + SET + ["union", "count"]
    expected[("single_or.json", 7)] = SET + related(OBJECT) + ["union", "count"]
    for k, attribute in enumerate(ATTRIBUTES):
        expected[("same_relate.json", k)] = OBJECT + [f"same_{attribute}", "exist"]
        expected[("same_relate.json", 4 + k)] = OBJECT + [f"same_{attribute}", "count"]
        expected[("same_relate.json", 8 + k)] = OBJECT + [f"same_{attribute}", "filter", "exist"]
        expected[("same_relate.json", 12 + k)] = OBJECT + [f"same_{attribute}", "filter", "count"]
        for j, other in enumerate(a for a in ATTRIBUTES if a != attribute):
            expected[("same_relate.json", 16 + 3 * k + j)] = OBJECT + [f"same_{attribute}", "filter", "unique", f"query_{other}"]
        query, equal = f"query_{attribute}", f"equal_{attribute}"
        expected[("comparison.json", k)] = OBJECT + [query] + OBJECT + [query, equal]
        # then, attribute by attribute: related-vs-plain, plain-vs-related, related-vs-related
        expected[("comparison.json", 4 + 3 * k)] = hop(OBJECT) + [query] + OBJECT + [query, equal]
        expected[("comparison.json", 5 + 3 * k)] = OBJECT + [query] + hop(OBJECT) + [query, equal]
        expected[("comparison.json", 6 + 3 * k)] = hop(OBJECT) + [query] + hop(OBJECT) + [query, equal]
    for k, compare in enumerate(("equal_integer", "less_than", "greater_than")):
        expected[("compare_integer.json", k)] = SET + ["count"] + SET + ["count", compare]
        expected[("compare_integer.json", 3 + k)] = related(OBJECT) + ["count"] + SET + ["count", compare]
        expected[("compare_integer.json", 6 + k)] = SET + ["count"] + related(OBJECT) + ["count", compare]
    return expected


def read_back(family) -> list[str]:
    """The family's program as function names, each node after its inputs, from the last node."""
    out: list[str] = []

    def visit(position: int) -> None:
        node = family.program[position]
        for source in node.inputs:
            visit(source)
        out.append(node.function)

    visit(len(family.program) - 1)
    return out


@pytest.fixture(scope="module")
def families():
    return load_families()


def test_clevr_has_90_templates_in_9_files():
    expected = clevr_templates()
    assert len(expected) == 90
    assert Counter(file for file, _ in expected) == {
        "zero_hop.json": 6, "one_hop.json": 6, "two_hop.json": 6, "three_hop.json": 6, "single_and.json": 5,
        "single_or.json": 8, "same_relate.json": 28, "comparison.json": 16, "compare_integer.json": 9,
    }
    assert {file for file, _ in expected} == set(CLEVR_TEMPLATE_FILES)


def test_every_clevr_template_is_one_shipped_family(families):
    mapped = [family for family in families.values() if family.clevr is not None]
    counterparts = Counter(family.clevr for family in mapped)
    assert [key for key, n in counterparts.items() if n > 1] == []
    assert set(counterparts) == set(clevr_templates())
    assert len(mapped) == 90 and len(families) >= 110


@pytest.mark.parametrize("key", sorted(clevr_templates()), ids=lambda key: f"{key[0]}#{key[1]}")
def test_each_mapped_family_has_its_clevr_program(families, key):
    family = next(family for family in families.values() if family.clevr == key)
    assert read_back(family) == clevr_templates()[key], family.id
