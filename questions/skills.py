"""Skill and difficulty of a question family: data a mix or a preset can select by.

A family file may say ``skill:`` (a name of MERA's skill taxonomy, lower case) and
``difficulty:`` (its reasoning steps, 1-10); where it does not, both follow from its program:

- skill: ``hypothetical reasoning`` when a step edits the scene (a what-if), ``spatial
  perspective`` when one takes another object's place, ``overlapping object differentiation`` when
  one reads what the picture hides; else ``spatial object relationship`` when a step reads where
  objects stand (relate, between, the extremes and ordinals, closest), else ``static counting``
  for a number, else ``object recognition``;
- difficulty: the program's reasoning steps, every node but ``scene``, ``filter`` and ``unique``
  (a description of an object is seen, not reasoned about): ``count/zero_hop`` is 1,
  ``count/three_hop`` 4, ``hypothetical/remove/count`` 2.
"""

from __future__ import annotations

from collections.abc import Sequence

from questions.hypothetical import EDITS
from questions.occlusion import OCCLUSION_FUNCTIONS

#: Skills of MERA's taxonomy the shipped families carry.
SPATIAL = "spatial object relationship"
COUNTING = "static counting"
RECOGNITION = "object recognition"
HYPOTHETICAL = "hypothetical reasoning"
PERSPECTIVE = "spatial perspective"
OVERLAPPING = "overlapping object differentiation"
KNOWN_SKILLS = (RECOGNITION, COUNTING, SPATIAL, HYPOTHETICAL, PERSPECTIVE, OVERLAPPING)

#: Functions that take another object's place (questions/perspective.py).
_PERSPECTIVE_FUNCTIONS = frozenset({"seen_from", "seen_from_set"})

#: Functions that read where objects stand.
_SPATIAL_FUNCTIONS = frozenset({"relate", "between", "most", "second", "closest"})
#: Nodes that describe rather than reason.
_SEEN = frozenset({"scene", "filter", "unique"})
#: The largest difficulty a family file may give.
MAX_DIFFICULTY = 10


def default_skill(functions: Sequence[str], answer_type: str) -> str:
    """The skill of a family that names none, from its program's functions and its answer type."""
    for named, skill in ((EDITS, HYPOTHETICAL), (_PERSPECTIVE_FUNCTIONS, PERSPECTIVE), (OCCLUSION_FUNCTIONS, OVERLAPPING)):
        if any(function in named for function in functions):
            return skill
    if any(function in _SPATIAL_FUNCTIONS for function in functions):
        return SPATIAL
    if answer_type == "integer":
        return COUNTING
    return RECOGNITION


def default_difficulty(functions: Sequence[str]) -> int:
    """A family's reasoning steps: every program node but ``scene``, ``filter`` (and ``filter_*``) and ``unique``."""
    return max(1, sum(1 for function in functions if function not in _SEEN and not function.startswith("filter_")))


def skill_and_difficulty(
    skill: object, difficulty: object, functions: Sequence[str], answer_type: str
) -> tuple[str, int, list[tuple[str, str]]]:
    """A family's skill and difficulty from its file's ``skill``/``difficulty`` (None where not given)
    or its program, and the problems found as (key, message)."""
    problems = []
    if skill is None:
        skill = default_skill(functions, answer_type)
    elif not isinstance(skill, str) or skill not in KNOWN_SKILLS:
        problems.append(("skill", f"skill must be one of: {', '.join(KNOWN_SKILLS)}; got {skill!r}"))
        skill = ""
    if difficulty is None:
        difficulty = default_difficulty(functions)
    elif isinstance(difficulty, bool) or not isinstance(difficulty, int) or not 1 <= difficulty <= MAX_DIFFICULTY:
        problems.append(("difficulty", f"difficulty must be a whole number from 1 to {MAX_DIFFICULTY}; got {difficulty!r}"))
        difficulty = 0
    return str(skill), int(difficulty), problems
