"""``assets.placeholders``: the one placeholder syntax, and every reader of templates agreeing
on it (the family validator, the English realiser, the Russian templates, the filter)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from assets.placeholders import LEFTOVER_SLOT, PLACEHOLDER, is_placeholder, placeholders
from filter.morph import MorphChecker
from questions.text import english_template_problems
from translate.templates import parameter_kinds

ROOT = Path(__file__).resolve().parents[1]
WELL_FORMED = ["<Z>", "<S2>", "<NAME>", "<C10>"]
MALFORMED = ["<z>", "<A_B>", "<2Z>", "<>", "<Z >", "Z", "<Z>s"]


@pytest.mark.parametrize("token", WELL_FORMED + MALFORMED)
def test_validator_realiser_and_russian_templates_agree_on_what_a_placeholder_is(token: str) -> None:
    expected = token in WELL_FORMED
    assert is_placeholder(token) is expected
    kinds, problems = parameter_kinds({token: "Size"})
    assert (kinds == {token: "size"}) is expected and (not problems) is expected
    if token.startswith("<") and token.endswith(">"):  # what the English realiser reads as a slot
        english = english_template_problems(f"Is there a {token} thing?", {token: "Size"} if expected else {})
        assert (not english) is expected


def test_placeholders_are_listed_in_order_with_their_brackets() -> None:
    assert placeholders("Is the <Z> <C> thing left of the <Z2> <S2>s?") == ["<Z>", "<C>", "<Z2>", "<S2>"]
    assert PLACEHOLDER.fullmatch("<Z2>").group(1) == "Z2"


@pytest.mark.parametrize("leftover", ["<Z>", "{color}", "[shape]", "<", "}", "<z_1>"])
def test_the_filter_reports_every_leftover_slot_syntax(leftover: str) -> None:
    assert LEFTOVER_SLOT.search(f"Какого цвета {leftover} куб?")
    problems = MorphChecker().problems(f"Какого цвета {leftover} куб?")
    assert any(problem.startswith("placeholder: ") for problem in problems)


def test_no_other_module_compiles_a_placeholder_pattern() -> None:
    home = ROOT / "assets" / "placeholders.py"
    offenders = []
    for package in ("questions", "translate", "filter", "dataset", "render", "ruclevr", "assets", "russian"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if path == home:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and re.search(r"<\[A-Z\]|<\[\^<>\]", node.value):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not offenders
