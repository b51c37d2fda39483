"""A question family as the engine holds it after validation.

A family is a program template with typed parameters, constraints on them, and text templates
per language. The file format is described in docs/questions.md ("Family file format"); the validator
(:mod:`questions.validator`) is the only code that builds these objects.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from assets.vocabulary import ATTRIBUTES
from questions.functions import BOOL, FILTER_MACRO, INTEGER

#: MERA's name for the question type of each attribute answer; "size" is not "sizes" there.
_MERA_ATTRIBUTE_TYPES = {"size": "size"}


def question_type_of(answer_type: str) -> str:
    """MERA's ``question_type`` (binary, count, colors, materials, shapes, size) of an answer type."""
    if answer_type == BOOL:
        return "binary"
    if answer_type == INTEGER:
        return "count"
    # Other attributes take the vocabulary's section name (colors, materials, shapes), as MERA does.
    return _MERA_ATTRIBUTE_TYPES.get(answer_type, ATTRIBUTES[answer_type])


@dataclass(frozen=True)
class TemplateNode:
    """One node of a program template: a release-form function or the ``filter`` macro."""

    function: str
    inputs: tuple[int, ...]
    value_inputs: tuple[str, ...]  # parameter names (``<C>``) or literal values (``red``)
    output: str  # the type of value the node gives

    @property
    def is_filter_macro(self) -> bool:
        return self.function == FILTER_MACRO


@dataclass(frozen=True)
class Family:
    """A validated family; ``id`` is its stable name, ``source``/``position`` say where it was read."""

    id: str
    group: str
    params: Mapping[str, str]  # name -> type, in file order
    program: tuple[TemplateNode, ...]
    empty: frozenset[str]  # parameters that must stay empty (so the text does not give the answer)
    not_empty: frozenset[str]  # parameters that must be given a value
    different_outputs: tuple[tuple[int, int], ...]  # template nodes whose outputs must differ
    text: Mapping[str, tuple[str, ...]]  # language -> templates
    source: str  # file name, written as CLEVR's template_filename
    position: int  # index in its file, written as CLEVR's question_family_index
    clevr: tuple[str, int] | None = None  # CLEVR 1.0's counterpart: template file and index in it
    some_set: frozenset[str] = frozenset()  # filter parameters of which at least one must get a value
    least: tuple[tuple[int, int], ...] = ()  # (node, n): a set of at least n objects, or a count of at least n
    disjoint: tuple[tuple[int, int], ...] = ()  # (object node, set node): the object is not in the set
    empty_share: float = 0.0  # the share of the family's questions that may break ``least`` (drawn per scene)
    same_object_allowed: tuple[tuple[int, int], ...] = ()  # unique nodes that may name one object (others never do)
    skill: str = ""  # MERA's name of the skill it tests (questions/skills.py)
    difficulty: int = 1  # its reasoning steps (questions/skills.py)

    def distinct_objects(self) -> tuple[tuple[int, int], ...]:
        """``different_outputs`` and every pair of ``unique`` nodes not in ``same_object_allowed``:
        two descriptions of a question name two different objects unless the family says otherwise."""
        pairs = list(self.different_outputs)
        uniques = [position for position, node in enumerate(self.program) if node.function == "unique"]
        allowed = {frozenset(pair) for pair in self.same_object_allowed} | {frozenset(pair) for pair in pairs}
        pairs += [(a, b) for i, a in enumerate(uniques) for b in uniques[i + 1:] if frozenset((a, b)) not in allowed]
        return tuple(pairs)

    @property
    def answer_type(self) -> str:
        return self.program[-1].output

    @property
    def question_type(self) -> str:
        return question_type_of(self.answer_type)
