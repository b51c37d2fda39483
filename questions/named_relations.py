"""What the words of a question imply of the objects it names beyond what they say outright.

:mod:`questions.named_objects` reads the attributes and relations a question states of its named
objects. Two more kinds of fact follow from a named object being *the only one* so described;
an independent audit (benchmarks/named_objects_bench.py) found questions decided by each:

- **The only one found by a relation.** «Позади красного предмета находится предмет» names the
  only object behind the red one that fits the words (here: any object). The scene's relations are
  by position along one axis, so they chain (behind of behind is behind, by the margin twice over
  where the image's margin applies): anything behind that object is behind the red one too, and
  fits the words, so would be a second one. A set whose words name everything the found object's
  words name, found by the same relation from it, is empty whatever the picture («Есть ли
  предметы позади этого предмета?»: no). Any other named object that the words fit is then not
  in that relation to the anchor: it stands on the opposite side (or in a near tie, which the
  engine's unclear check (:mod:`questions.unclear`) does not let decide an answer): «Перед матовым
  кубом находится предмет. Левее него — блестящий куб. Есть ли предмет перед блестящим кубом?»
  (yes: the matte cube).
- **Two-valued attributes.** Size and material have two values each. «Маленький предмет», the
  only small object of the scene, makes every other object large; a set that leaves it out holds
  large objects only («предметов позади маленького предмета» are all large, so never more than
  «больших предметов»). With a longer description the same holds of the one attribute the set's
  words leave open («резиновых предметов» other than «маленького резинового предмета» are large),
  and so of another named object («сфера» behind «резиновой сферой», the only rubber sphere, is metal).
  An integer comparison of a count with a count of its own subset (:func:`nested_counts`) is
  decided by its words, or nearly.

Questions are read in the scene as asked: what-if plans (an edit node) are left to the rules of
:mod:`questions.named_objects`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any, NamedTuple, Protocol

from assets.vocabulary import ATTRIBUTES, load_vocabulary
from questions.image_geometry import OPPOSITE
from questions.plan import Plan


class SaidOfNamed(Protocol):
    """What the text says of the named objects (questions.named_objects builds it)."""

    plan: Plan
    as_asked: bool  # no what-if edit: what the only objects so described imply holds

    def description(self, t: int, choices: Sequence[Any]) -> tuple[dict[str, str], int]: ...

    def stated(self, thing: int, relation: str, anchor: int, t: int) -> bool: ...

    def implied_words(self, t: int, choices: Sequence[Any]) -> dict[str, str]: ...


Fact = tuple[int, str, int]  # (named object, relation, named object it stands in that relation to)


class FoundBy(NamedTuple):
    """A named object found by a relation to another: the only one in ``relation`` of ``anchor``
    that fits ``words``."""

    thing: int
    relation: str
    anchor: int
    words: Mapping[str, str]


@cache
def two_valued() -> dict[str, tuple[str, str]]:
    """The attributes with two values (size, material), each with its two value names."""
    vocabulary = load_vocabulary()
    pairs = {attribute: vocabulary.names(attribute) for attribute in ATTRIBUTES}
    return {attribute: (names[0], names[1]) for attribute, names in pairs.items() if len(names) == 2}


def distinct_by_text(a: int, b: int, attributes: Mapping[int, Mapping[str, str]], facts: set[Fact]) -> bool:
    """Whether the words make named objects ``a`` and ``b`` two objects: an attribute said two ways,
    or a relation stated between them."""
    said_a, said_b = attributes[a], attributes[b]
    if any(attribute in said_b and said_b[attribute] != value for attribute, value in said_a.items()):
        return True
    return any(first == a and last == b for first, _relation, last in facts)


def beside_the_only_one(found: Sequence[FoundBy], attributes: Mapping[int, Mapping[str, str]], facts: set[Fact]) -> set[Fact]:
    """Each other named object the found one's words fit, on the opposite side of the anchor."""
    implied: set[Fact] = set()
    for thing, relation, anchor, words in found:
        for other, said in attributes.items():
            if other in (thing, anchor) or not words.items() <= said.items():
                continue
            if distinct_by_text(other, thing, attributes, facts) and distinct_by_text(other, anchor, attributes, facts):
                implied.add((other, OPPOSITE[relation], anchor))
    return implied


def with_two_valued(words: Mapping[str, str], left_out: Sequence[Mapping[str, str]]) -> dict[str, str]:
    """``words`` (what every object of a set is, by its filters) with the value of a two-valued
    attribute added wherever a left-out object, the only one of the scene so described, shares
    every other attribute its description names."""
    known = dict(words)
    changed = True
    while changed:
        changed = False
        for description in left_out:
            open_ = [attribute for attribute, value in description.items() if known.get(attribute) != value]
            if len(open_) != 1 or open_[0] in known or open_[0] not in two_valued():
                continue
            first, second = two_valued()[open_[0]]
            known[open_[0]] = second if description[open_[0]] == first else first
            changed = True
    return known


def implied_attributes(attributes: Mapping[int, dict[str, str]], scene_wide: set[int], facts: set[Fact]) -> dict[int, dict[str, str]]:
    """Each named object's attributes with the two-valued ones its being another object than the
    only one so described implies («сфера» other than «резиновая сфера», the only rubber sphere,
    is metal)."""
    return {
        thing: with_two_valued(said, [attributes[only] for only in scene_wide if only != thing and distinct_by_text(thing, only, attributes, facts)])
        for thing, said in attributes.items()
    }


def all_related(said: SaidOfNamed, t: int, choices: Sequence[Any], relation: str, anchor: int) -> bool:
    """Whether, by the words, every object of node ``t``'s set stands in ``relation`` to named
    object ``anchor``: found by that relation from it, or from an object the text puts there."""
    node = said.plan.nodes[t]
    if node.kind == "filter":
        return all_related(said, node.inputs[0], choices, relation, anchor)
    if node.function == "relate":
        source = node.inputs[0]
        return choices[t] == relation and (source == anchor or said.stated(source, relation, anchor, t))
    sides = [all_related(said, i, choices, relation, anchor) for i in node.inputs]
    if node.function == "intersect":
        return any(sides)
    if node.function == "union":
        return all(sides)
    return False


def nested_counts(said: SaidOfNamed, choices: Sequence[Any]) -> bool:
    """Whether an integer comparison compares two counts of which one holds, by the words, only
    objects of the other, a description among every object of the scene («предметов позади
    маленького предмета» and «больших предметов» where the small one is the only one). «Меньше ли
    A, чем B» with B in A is «нет» whatever the picture; with A in B, or «равно ли», the answer hangs
    only on whether the two sets are the very same, which the independent audit found almost never
    (benchmarks/named_objects_bench.py): each is not asked."""
    plan = said.plan
    if not said.as_asked:
        return False  # a what-if count is read after its edit, a description across the picture maybe before
    for node in plan.nodes:
        if node.function not in COMPARISONS or any(plan.nodes[i].function != "count" for i in node.inputs):
            continue
        first, second = (plan.nodes[i].inputs[0] for i in node.inputs)
        if _within(said, first, second, choices) or _within(said, second, first, choices):
            return True
    return False


#: The integer comparisons of two counts.
COMPARISONS = ("less_than", "greater_than", "equal_integer")


def _within(said: SaidOfNamed, inner: int, outer: int, choices: Sequence[Any]) -> bool:
    """Whether node ``outer``'s set is a description among every object of the scene and every
    object of node ``inner``'s set fits it by the words."""
    words, source = said.description(outer, choices)
    return said.plan.nodes[source].function == "scene" and words.items() <= said.implied_words(inner, choices).items()
