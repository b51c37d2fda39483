"""Compositional-generalisation conditions: which colours each shape may take.

CLEVR's CoGenT splits train on one pairing of shapes and colours and test on the other:
condition A gives cubes gray, blue, brown or yellow and cylinders red, green, purple or cyan;
condition B the other way round; spheres take any colour in both. A user-defined condition
is a JSON file in the same form, ``{"cube": ["gray", "blue"], ...}``: a shape not named there
takes any colour. Pure Python, no bpy: the sampler reads a condition as data.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from assets.vocabulary import load_vocabulary
from ruclevr.cli import UsageError
from ruclevr.io import read_json_input

_GROUP_A = ("gray", "blue", "brown", "yellow")
_GROUP_B = ("red", "green", "purple", "cyan")
NAMED_CONDITIONS: Mapping[str, Mapping[str, tuple[str, ...]]] = {
    "cogent-a": {"cube": _GROUP_A, "cylinder": _GROUP_B},
    "cogent-b": {"cube": _GROUP_B, "cylinder": _GROUP_A},
}


@dataclass(frozen=True)
class Condition:
    """A name (``cogent-a``, ``cogent-b`` or the rule file's path) and the colours allowed per shape."""

    name: str
    colors: tuple[tuple[str, tuple[str, ...]], ...]  # (shape, allowed colours), shapes in vocabulary order

    def colors_for(self, shape: str, every_color: tuple[str, ...]) -> tuple[str, ...]:
        """The colours ``shape`` may take, in vocabulary order (all of them for a shape without a rule)."""
        for ruled, allowed in self.colors:
            if ruled == shape:
                return allowed
        return every_color

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "colors": {shape: list(allowed) for shape, allowed in self.colors}}


def condition_from_rules(name: str, rules: Any) -> Condition:
    """A condition from a mapping shape -> list of colours, checked against the vocabulary."""
    vocabulary = load_vocabulary()
    shapes, colors = vocabulary.names("shape"), vocabulary.names("color")
    if not isinstance(rules, Mapping) or not rules:
        raise UsageError(f"condition {name}: expected a JSON object mapping shapes to lists of colours")
    for shape, allowed in rules.items():
        if shape not in shapes:
            raise UsageError(f"condition {name}: unknown shape {shape!r}; shapes: {', '.join(shapes)}")
        if not isinstance(allowed, list) or not allowed or not all(isinstance(color, str) for color in allowed):
            raise UsageError(f"condition {name}: {shape} needs a non-empty list of colours")
        unknown = [color for color in allowed if color not in colors]
        if unknown:
            raise UsageError(f"condition {name}: unknown colour {unknown[0]!r} for {shape}; colours: {', '.join(colors)}")
    ordered = tuple(
        (shape, tuple(color for color in colors if color in rules[shape])) for shape in shapes if shape in rules
    )
    return Condition(name, ordered)


def load_condition(spec: str) -> Condition:
    """``cogent-a``, ``cogent-b`` or the path of a rule file."""
    if spec in NAMED_CONDITIONS:
        return condition_from_rules(spec, {shape: list(colors) for shape, colors in NAMED_CONDITIONS[spec].items()})
    return condition_from_rules(spec, read_json_input(spec, f"--condition {spec}"))


def complement(condition: Condition) -> Condition:
    """The other side of a split: each ruled shape takes exactly the colours it may not take in ``condition``."""
    every_color = load_vocabulary().names("color")
    flipped = tuple((shape, tuple(c for c in every_color if c not in allowed)) for shape, allowed in condition.colors)
    if any(not allowed for _, allowed in flipped):
        raise UsageError(f"condition {condition.name}: a shape that may take every colour has no complement")
    return Condition(f"not {condition.name}", flipped)
