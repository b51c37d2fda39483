"""Typed access to ``vocabulary.json``, the one list of shapes, sizes, materials and colours.

Every stage (rendering, questions, Russian realisation, augmentation, answer
normalisation) reads attribute values through :func:`load_vocabulary`; none keeps a list
of its own. Adding a colour is adding one entry to the JSON file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

VOCABULARY_PATH = Path(__file__).with_name("vocabulary.json")

#: Attribute names in CLEVR's order, mapped to the vocabulary section that lists their values.
ATTRIBUTES: Mapping[str, str] = MappingProxyType(
    {"size": "sizes", "color": "colors", "material": "materials", "shape": "shapes"}
)


@dataclass(frozen=True)
class Value:
    """One attribute value (for example the colour ``red``) with its words in every language."""

    attribute: str
    name: str
    en: Mapping[str, Any]
    ru: Mapping[str, Any]
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def en_synonyms(self) -> tuple[str, ...]:
        return tuple(self.en["synonyms"])

    @property
    def ru_answer(self) -> str:
        """The answer word in MERA's convention (dictionary form), ё kept; see translate for the ё policy."""
        return str(self.ru["answer"])


@dataclass(frozen=True)
class Vocabulary:
    """All attribute values, in file order, plus the generic object noun and yes/no words."""

    values: Mapping[str, tuple[Value, ...]]
    object_noun: Mapping[str, Mapping[str, Any]]
    answers: Mapping[str, Mapping[str, str]]
    #: Spatial relations (left, right, front, behind) with their words per language.
    relations: Mapping[str, Mapping[str, Mapping[str, Any]]] = field(default_factory=dict)

    def names(self, attribute: str) -> tuple[str, ...]:
        """The value names of one attribute, for example ``names("color")``."""
        return tuple(v.name for v in self.values[_check_attribute(attribute)])

    def value(self, attribute: str, name: str) -> Value:
        for v in self.values[_check_attribute(attribute)]:
            if v.name == name:
                return v
        allowed = ", ".join(self.names(attribute))
        raise KeyError(f"unknown {attribute} {name!r}; allowed: {allowed}")

    def srgb(self, color: str) -> tuple[int, int, int]:
        red, green, blue = self.value("color", color).extra["srgb"]
        return (red, green, blue)

    def relation(self, name: str) -> Mapping[str, Mapping[str, Any]]:
        """One spatial relation's entry (``{"en": {...}, "ru": {...}}``), for example ``relation("left")``."""
        if name not in self.relations:
            raise KeyError(f"unknown relation {name!r}; allowed: {', '.join(self.relations)}")
        return self.relations[name]

    def attribute_of(self, name: str) -> str:
        """Which attribute a value name belongs to (``"red"`` -> ``"color"``)."""
        for attribute in ATTRIBUTES:
            if name in self.names(attribute):
                return attribute
        raise KeyError(f"{name!r} is not a value of any attribute")


def _check_attribute(attribute: str) -> str:
    if attribute not in ATTRIBUTES:
        raise KeyError(f"unknown attribute {attribute!r}; allowed: {', '.join(ATTRIBUTES)}")
    return attribute


def _parse(raw: Mapping[str, Any]) -> Vocabulary:
    values: dict[str, tuple[Value, ...]] = {}
    for attribute, section in ATTRIBUTES.items():
        entries = raw[section]
        assert isinstance(entries, dict)
        values[attribute] = tuple(
            Value(
                attribute=attribute,
                name=name,
                en=MappingProxyType(dict(entry["en"])),
                ru=MappingProxyType(dict(entry["ru"])),
                extra=MappingProxyType({k: v for k, v in entry.items() if k not in ("en", "ru")}),
            )
            for name, entry in entries.items()
        )
    return Vocabulary(
        values=MappingProxyType(values),
        object_noun=MappingProxyType(dict(raw["object_nouns"])),
        answers=MappingProxyType(dict(raw["answers"])),
        relations=MappingProxyType(dict(raw.get("relations", {}))),
    )


@cache
def load_vocabulary(path: Path = VOCABULARY_PATH) -> Vocabulary:
    """Read and cache the vocabulary file."""
    with open(path, encoding="utf-8") as handle:
        return _parse(json.load(handle))


def srgb_to_linear(channel_0_255: float) -> float:
    """sRGB transfer function inverse (IEC 61966-2-1), for colours handed to a linear shader."""
    c = channel_0_255 / 255.0
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
