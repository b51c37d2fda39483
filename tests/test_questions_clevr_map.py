"""The shipped families hold all 90 of CLEVR 1.0's, each naming its template file and index
(`clevr: [file, index]`), and each program is that CLEVR template's program, node for node
(function, inputs, parameters) with CLEVR's constraints, bar the differences listed with their
reasons in CONSTRAINT_CHANGES. Nodes are compared in the order the program first needs them: a
file may list independent nodes in another order (comparison.json #2 puts each object's query
right after it, a family may put both queries after both objects), which changes nothing asked.

Reference: CLEVR 1.0's question templates, facebookresearch/clevr-dataset-gen,
question_generation/CLEVR_1.0_templates/{zero_hop,one_hop,two_hop,three_hop,single_and,single_or,
same_relate,comparison,compare_integer}.json. The stored index this table was read from does not
hold that folder of the facebookresearch repository itself, so it was read from two copies that
agree on every node, parameter and constraint below:
- ExplainableML/CLEVR-X at commit 18bfefb355d8f12c606c6e00e34a31152525d48a, the same paths (CLEVR's
  files re-indented, with "leaves" and "extra_attrs" keys added);
- HC-teemo/clevr-dataset-gen at commits 3e24a02d47c36e8abd2666f457f6452a2dc80039 and
  74965fe711603bf8e422a70da41f420dc020eef4, question_generation/meta_templates/*.jsonnet (the same
  templates written with node helpers).
How a fused node expands and what a constraint means is facebookresearch/clevr-dataset-gen's
question_generation/generate_questions.py (commit 9742828c3667e81d5c381dbe1a0bcae4c1a7e89a),
`instantiate_templates_dfs`: `filter_unique`/`filter_count`/`filter_exist`/`filter` become the
filters then `unique`/`count`/`exist`/nothing, `relate_filter_*` a `relate` first; a template
node's output is that of the last node it became; `NULL <P>` keeps parameter P empty, and
`OUT_NEQ i j` asks template nodes i and j for different outputs.

Each template is written below as CLEVR writes it: its nodes `type[inputs] side inputs` and its
constraints. No network is needed at test time.
"""

from __future__ import annotations

from collections import Counter

import pytest

from questions.families import load_families
from questions.validator import CLEVR_TEMPLATE_FILES

O1, O2, O3, O4 = "<Z> <C> <M> <S>", "<Z2> <C2> <M2> <S2>", "<Z3> <C3> <M3> <S3>", "<Z4> <C4> <M4> <S4>"
ATTRIBUTES = ("size", "color", "material", "shape")
LETTER = {"size": "Z", "color": "C", "material": "M", "shape": "S"}


def hops_templates(file: str, hops: int, queried: tuple[str, ...]) -> dict[tuple[str, int], tuple[str, str]]:
    """zero_hop ... three_hop.json: a count, an exist, then a query of each attribute in `queried` order."""
    objects, relations = (O1, O2, O3, O4), ("<R>", "<R2>", "<R3>")
    if hops == 0:
        templates = {(file, 0): (f"scene; filter_count[0] {O1}", ""), (file, 1): (f"scene; filter_exist[0] {O1}", "")}
        for k, attribute in enumerate(queried):
            templates[(file, 2 + k)] = (f"scene; filter_unique[0] {O1}; query_{attribute}[1]", f"NULL <{LETTER[attribute]}>")
        return templates
    chain = ["scene", f"filter_unique[0] {O1}"]
    chain += [f"relate_filter_unique[{hop + 1}] {relations[hop]} {objects[hop + 1]}" for hop in range(hops - 1)]
    last, hop = len(chain) - 1, f"{relations[hops - 1]} {objects[hops]}"
    templates = {
        (file, 0): ("; ".join(chain + [f"relate_filter_count[{last}] {hop}"]), ""),
        (file, 1): ("; ".join(chain + [f"relate_filter_exist[{last}] {hop}"]), ""),
    }
    for k, attribute in enumerate(queried):
        nodes = chain + [f"relate_filter_unique[{last}] {hop}", f"query_{attribute}[{last + 1}]"]
        templates[(file, 2 + k)] = ("; ".join(nodes), f"NULL <{LETTER[attribute]}{hops + 1}>")
    return templates


def clevr_templates() -> dict[tuple[str, int], tuple[str, str]]:
    """CLEVR 1.0's 90 templates: (file, index) -> (nodes, constraints), as the files write them."""
    t: dict[tuple[str, int], tuple[str, str]] = {}
    # zero_hop.json asks shape, material, color, size; one_hop and two_hop size, color, material,
    # shape; three_hop size, shape, color, material.
    t.update(hops_templates("zero_hop.json", 0, ("shape", "material", "color", "size")))
    t.update(hops_templates("one_hop.json", 1, ("size", "color", "material", "shape")))
    t.update(hops_templates("two_hop.json", 2, ("size", "color", "material", "shape")))
    t.update(hops_templates("three_hop.json", 3, ("size", "shape", "color", "material")))

    both = f"scene; filter_unique[0] {O1}; relate[1] <R>; scene; filter_unique[3] {O2}; relate[4] <R2>; intersect[2,5]"
    t[("single_and.json", 0)] = (f"{both}; filter_count[6] {O3}", "")
    for k, attribute in enumerate(ATTRIBUTES):
        t[("single_and.json", 1 + k)] = (f"{both}; filter_unique[6] {O3}; query_{attribute}[7]", f"OUT_NEQ 2 5; NULL <{LETTER[attribute]}3>")

    either = f"scene; filter[0] {O1}; scene; filter[2] {O2}; union[1,3]"
    t[("single_or.json", 0)] = (f"{either}; count[4]", "OUT_NEQ 1 3")
    for index, attribute in ((1, "size"), (2, "color"), (4, "material")):
        letter = LETTER[attribute]
        t[("single_or.json", index)] = (
            f"{either}; filter_{attribute}[4] <{letter}3>; count[5]", f"OUT_NEQ 1 3; NULL <{letter}>; NULL <{letter}2>"
        )
    t[("single_or.json", 5)] = (  # the only template that starts with both scenes
        f"scene; scene; filter[0] {O1}; filter[1] {O2}; union[2,3]; filter_shape[4] <S3>; count[5]",
        "OUT_NEQ 2 3; NULL <S>; NULL <S2>",
    )
    t[("single_or.json", 3)] = (
        (f"scene; filter_unique[0] {O1}; relate_filter[1] <R> {O2}; scene; filter_unique[3] {O3}; relate_filter[4] <R2> {O4}; "
        "union[2,5]; count[6]"),
        "",
    )
    t[("single_or.json", 6)] = (f"scene; filter_unique[0] {O1}; relate_filter[1] <R> {O2}; scene; filter[3] {O3}; union[2,4]; count[5]", "")
    t[("single_or.json", 7)] = (f"scene; filter[0] {O1}; scene; filter_unique[2] {O2}; relate_filter[3] <R> {O3}; union[1,4]; count[5]", "")

    for k, attribute in enumerate(ATTRIBUTES):
        same, letter = f"scene; filter_unique[0] {O1}; same_{attribute}[1]", LETTER[attribute]
        t[("same_relate.json", k)] = (f"{same}; exist[2]", f"NULL <{letter}>")
        t[("same_relate.json", 4 + k)] = (f"{same}; count[2]", f"NULL <{letter}>")
        t[("same_relate.json", 8 + k)] = (f"{same}; filter_exist[2] {O2}", f"NULL <{letter}>; NULL <{letter}2>")
        t[("same_relate.json", 12 + k)] = (f"{same}; filter_count[2] {O2}", f"NULL <{letter}>; NULL <{letter}2>")
        for j, other in enumerate(a for a in ATTRIBUTES if a != attribute):
            t[("same_relate.json", 16 + 3 * k + j)] = (
                f"{same}; filter_unique[2] {O2}; query_{other}[3]", f"NULL <{letter}>; NULL <{letter}2>; NULL <{LETTER[other]}2>"
            )

    for attribute in ("size", "color"):  # the two objects' queries after both objects
        letter = LETTER[attribute]
        t[("comparison.json", ATTRIBUTES.index(attribute))] = (
            (f"scene; filter_unique[0] {O1}; scene; filter_unique[2] {O2}; query_{attribute}[1]; query_{attribute}[3]; "
            f"equal_{attribute}[4,5]"),
            f"NULL <{letter}>; NULL <{letter}2>; OUT_NEQ 1 3",
        )
    for attribute in ("material", "shape"):  # each object's query right after it
        letter = LETTER[attribute]
        t[("comparison.json", ATTRIBUTES.index(attribute))] = (
            (f"scene; filter_unique[0] {O1}; query_{attribute}[1]; scene; filter_unique[3] {O2}; query_{attribute}[4]; "
            f"equal_{attribute}[2,5]"),
            f"OUT_NEQ 1 4; NULL <{letter}>; NULL <{letter}2>",
        )
    for k, attribute in enumerate(ATTRIBUTES):  # related first, related second, both related
        q, eq, letter = f"query_{attribute}", f"equal_{attribute}", LETTER[attribute]
        first_null = "NULL <Z2>; NULL <Z>" if attribute == "size" else f"NULL <{letter}2>; NULL <{letter}3>"
        t[("comparison.json", 4 + 3 * k)] = (
            f"scene; filter_unique[0] {O1}; relate_filter_unique[1] <R> {O2}; {q}[2]; scene; filter_unique[4] {O3}; {q}[5]; {eq}[3,6]",
            f"OUT_NEQ 2 5; {first_null}",
        )
        t[("comparison.json", 5 + 3 * k)] = (
            f"scene; filter_unique[0] {O1}; {q}[1]; scene; filter_unique[3] {O2}; relate_filter_unique[4] <R> {O3}; {q}[5]; {eq}[2,6]",
            f"OUT_NEQ 1 5; NULL <{letter}>; NULL <{letter}3>",
        )
        t[("comparison.json", 6 + 3 * k)] = (
            (f"scene; filter_unique[0] {O1}; relate_filter_unique[1] <R> {O2}; {q}[2]; scene; filter_unique[4] {O3}; "
            f"relate_filter_unique[5] <R2> {O4}; {q}[6]; {eq}[3,7]"),
            f"OUT_NEQ 2 6; NULL <{letter}2>; NULL <{letter}4>",
        )

    for k, compare in enumerate(("equal_integer", "less_than", "greater_than")):
        t[("compare_integer.json", k)] = (f"scene; filter_count[0] {O1}; scene; filter_count[2] {O2}; {compare}[1,3]", "OUT_NEQ 1 3")
        t[("compare_integer.json", 3 + k)] = (
            f"scene; filter_unique[0] {O1}; relate_filter_count[1] <R> {O2}; scene; filter_count[3] {O3}; {compare}[2,4]", ""
        )
        t[("compare_integer.json", 6 + k)] = (
            (f"scene; filter_unique[0] {O1}; relate_filter_count[1] <R> {O2}; scene; filter_unique[3] {O3}; "
            f"relate_filter_count[4] <R2> {O4}; {compare}[2,5]"),
            "OUT_NEQ 1 4",
        )
    return t


# Where a shipped family's constraints knowingly differ from its CLEVR template's:
# (constraints added, constraints dropped, why), written as `reference` and `family_constraints` write them.
ANCHORS_DIFFER = "the two anchors must be two different objects; CLEVR only asks the two related sets to differ (#1-4)"
SOME_SET = (
    "CLEVR's filter_exist/filter_count may leave the whole filter empty, which asks the question of the "
    "unfiltered template (indices 0-7); that question is the */anything family, this one narrows the set"
)
CONSTRAINT_CHANGES: dict[tuple[str, int], tuple[set[str], set[str], str]] = {
    **{
        ("compare_integer.json", k): (
            set(), {"OUT_NEQ 1 3"},
            ("CLEVR asks the two counts to differ, so its equal_integer answer is always 'no'; "
            "the counts may be equal here and the answers are balanced"),
        )
        for k in range(3)
    },
    ("comparison.json", 4): (
        {"NULL <Z3>"}, set(),
        ("CLEVR leaves the anchor's size empty here where #7, #10 and #13 leave the second compared object's "
        "attribute empty; the family leaves both empty, so neither of the two sizes compared is said"),
    ),
    ("single_and.json", 0): ({"OUT_NEQ 1 4"}, set(), ANCHORS_DIFFER),
    **{("single_and.json", 1 + k): ({"OUT_NEQ 1 4"}, set(), ANCHORS_DIFFER) for k in range(4)},
    **{("same_relate.json", index): ({f"SOME_SET {O2}"}, set(), SOME_SET) for index in range(8, 16)},
}


def parse_nodes(text: str) -> list[tuple[str, list[int], list[str]]]:
    nodes = []
    for part in text.split("; "):
        head, *side = part.split()
        kind, _, inputs = head.partition("[")
        nodes.append((kind, [int(i) for i in inputs.rstrip("]").split(",")] if inputs else [], side))
    return nodes


# CLEVR's fused nodes: what each becomes after its filters (and, for relate_filter_*, a relate before them).
FUSED: dict[str, str | None] = {
    "filter": None, "filter_unique": "unique", "filter_count": "count", "filter_exist": "exist",
    "relate_filter": None, "relate_filter_unique": "unique", "relate_filter_count": "count", "relate_filter_exist": "exist",
}


def expand(template: str) -> tuple[list[tuple[str, list[int], list[str]]], dict[int, int]]:
    """CLEVR's template nodes as our release-form program (`filter` for the filters of one
    description), and where each template node's output ends up, as generate_questions.py builds them."""
    program: list[tuple[str, list[int], list[str]]] = []
    end: dict[int, int] = {}
    for position, (kind, inputs, side) in enumerate(parse_nodes(template)):
        source = [end[i] for i in inputs]
        if kind not in FUSED:
            program.append((kind, source, side))
        else:
            if kind.startswith("relate_"):
                program.append(("relate", source, side[:1]))
                source, side = [len(program) - 1], side[1:]
            program.append(("filter", source, side))
            then = FUSED[kind]
            if then is not None:
                program.append((then, [len(program) - 1], []))
        end[position] = len(program) - 1
    return program, end


def in_order_of_use(program: list[tuple[str, list[int], list[str]]]) -> tuple[list[tuple[str, list[int], list[str]]], dict[int, int]]:
    """The program with its nodes in the order they are first needed from the answer node (inputs
    left to right), and where each node went. Two programs that differ only in the order their
    independent nodes are listed come out the same."""
    order: list[int] = []

    def visit(index: int) -> None:
        if index not in order:
            for source in program[index][1]:
                visit(source)
            order.append(index)

    visit(len(program) - 1)
    moved = {old: new for new, old in enumerate(order)}
    return [(program[old][0], [moved[i] for i in program[old][1]], program[old][2]) for old in order], moved


def reference(key: tuple[str, int]) -> tuple[list[tuple[str, list[int], list[str]]], set[str], dict[int, int]]:
    """CLEVR's template as a program in order of use, its constraints, and where each template node's output is."""
    nodes, constraints = clevr_templates()[key]
    program, end = expand(nodes)
    ordered, moved = in_order_of_use(program)
    constraints_said = {
        " ".join(c.split()[:1] + sorted(c.split()[1:], key=int)) if c.startswith("OUT_NEQ") else c for c in constraints.split("; ") if c
    }
    return ordered, constraints_said, {template: moved[position] for template, position in end.items()}


def shipped(family) -> tuple[list[tuple[str, list[int], list[str]]], dict[int, int]]:
    return in_order_of_use([(node.function, list(node.inputs), list(node.value_inputs)) for node in family.program])


def family_constraints(family, template_at: dict[int, int]) -> set[str]:
    """The family's constraints in CLEVR's words, output pairs named by the template nodes they come from."""
    template_node = {position: template for template, position in template_at.items()}
    _, moved = shipped(family)
    found = {f"NULL {name}" for name in family.empty} | {f"NOT_NULL {name}" for name in family.not_empty}
    if family.some_set:
        found.add("SOME_SET " + " ".join(name for name in family.params if name in family.some_set))
    for pair in family.different_outputs:
        named = sorted((template_node.get(moved[i], f"ours:{i}") for i in pair), key=str)
        found.add(f"OUT_NEQ {named[0]} {named[1]}")
    return found


@pytest.fixture(scope="module")
def families():
    return load_families()


def counterpart(families, key):
    return next(family for family in families.values() if family.clevr == key)


def test_clevr_has_90_templates_in_9_files():
    expected = clevr_templates()
    assert len(expected) == 90
    assert Counter(file for file, _ in expected) == {
        "zero_hop.json": 6, "one_hop.json": 6, "two_hop.json": 6, "three_hop.json": 6, "single_and.json": 5,
        "single_or.json": 8, "same_relate.json": 28, "comparison.json": 16, "compare_integer.json": 9,
    }
    assert {file for file, _ in expected} == set(CLEVR_TEMPLATE_FILES)
    assert all(sorted(i for f, i in expected if f == file) == list(range(n)) for file, n in Counter(f for f, _ in expected).items())


def test_every_clevr_template_is_one_shipped_family(families):
    mapped = [family for family in families.values() if family.clevr is not None]
    counterparts = Counter(family.clevr for family in mapped)
    assert [key for key, n in counterparts.items() if n > 1] == []
    assert set(counterparts) == set(clevr_templates())
    assert len(mapped) == 90 and len(families) >= 110


def test_expansion_follows_clevr_generator():
    # one_hop.json #2 as generate_questions.py unrolls it, by hand
    program, end = expand(clevr_templates()[("one_hop.json", 2)][0])
    assert program == [
        ("scene", [], []),
        ("filter", [0], ["<Z>", "<C>", "<M>", "<S>"]),
        ("unique", [1], []),
        ("relate", [2], ["<R>"]),
        ("filter", [3], ["<Z2>", "<C2>", "<M2>", "<S2>"]),
        ("unique", [4], []),
        ("query_size", [5], []),
    ]
    assert end == {0: 0, 1: 2, 2: 5, 3: 6}
    assert expand("scene; scene; filter[0] <Z>; filter[1] <Z2>; union[2,3]")[0][4] == ("union", [2, 3], [])


def test_order_of_use_puts_each_query_after_its_object():
    # comparison.json #0 lists both objects, then both queries; #2 each object with its query
    size, _, _ = reference(("comparison.json", 0))
    material, _, _ = reference(("comparison.json", 2))
    assert [node[0] for node in size] == [
        "scene", "filter", "unique", "query_size", "scene", "filter", "unique", "query_size", "equal_size"
    ]
    assert [node[0] for node in material] == [
        "scene", "filter", "unique", "query_material", "scene", "filter", "unique", "query_material", "equal_material"
    ]


@pytest.mark.parametrize("key", sorted(clevr_templates()), ids=lambda key: f"{key[0]}#{key[1]}")
def test_each_mapped_family_has_its_clevr_program(families, key):
    # node for node: function, inputs and parameters, the nodes listed in order of use on both sides
    family = counterpart(families, key)
    assert len(shipped(family)[0]) == len(family.program)  # no node left out of the comparison
    assert shipped(family)[0] == reference(key)[0], family.id


@pytest.mark.parametrize("key", sorted(clevr_templates()), ids=lambda key: f"{key[0]}#{key[1]}")
def test_each_mapped_family_has_its_clevr_constraints(families, key):
    family = counterpart(families, key)
    _, constraints, template_at = reference(key)
    added, dropped, _why = CONSTRAINT_CHANGES.get(key, (set(), set(), ""))
    assert dropped <= constraints and not added & constraints
    assert family_constraints(family, template_at) == (constraints - dropped) | added, family.id


def test_the_changed_constraints_name_clevr_templates():
    assert set(CONSTRAINT_CHANGES) <= set(clevr_templates())
    assert all(why for _, _, why in CONSTRAINT_CHANGES.values())
