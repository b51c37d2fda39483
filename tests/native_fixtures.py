"""Families for the native realiser's tests that the question engine cannot read yet.

tests/data/families_ru/numerals.yaml has integer parameters (1 куб, 2 куба, 5 кубов), which the
engine does not have; these families are built here as the engine's own Family objects and given
to the realiser directly (``NativeRealiser(families=...)``). Every other family the realiser
meets is read by the engine's loader.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from questions.family import Family, TemplateNode
from translate.native import NativeRealiser

FIXTURES = Path(__file__).parent / "data" / "families_ru"


def fixture_families() -> list[Family]:
    """The fixture files' families, built without the engine's validation."""
    families = []
    for path in sorted(FIXTURES.glob("*.yaml")):
        for position, entry in enumerate(yaml.safe_load(path.read_text(encoding="utf-8"))["families"]):
            program = tuple(TemplateNode(n["function"], tuple(n.get("inputs", [])), tuple(n.get("value_inputs", [])), "?")
                            for n in entry["program"])
            text = {language: tuple(texts) for language, texts in entry["text"].items()}
            families.append(Family(entry["id"], entry["group"], dict(entry["params"]), program, frozenset(), frozenset(), (),
                                   text, path.name, position))
    return families


def fixture_realiser(seed: int = 0) -> NativeRealiser:
    return NativeRealiser(families=fixture_families(), seed=seed)
