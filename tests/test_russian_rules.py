"""The validator's Russian rules (translate/russian_rules.py) on a corpus: no false alarm, no miss.

tests/data/russian_templates/good.yaml holds templates each rule must let through (grammatical,
one reading, near the construction it targets), bad.yaml templates the named rule must refuse
(with why the text is open and two ways to write it), user_study.yaml every Russian template of
the final files three users wrote from docs/ alone; every shipped family's Russian template, the
Russian templates written in docs/ and both columns of docs/questions.md's table of rules are
checked too, and the held-out family files validate with the Russian checker.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
import yaml

from questions.validator import validate_files
from translate.russian_rules import RULES
from translate.templates import validate_template

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "data" / "russian_templates"
HELD_OUT = ROOT / "tests" / "data" / "heldout_families"
PLACEHOLDER = re.compile(r"<[A-Z]\d*>")
RULE_NAMES = {rule.name for rule in RULES}
# A Russian template quoted in a docs page: a YAML list item or a code span with a [...] group.
DOCS_TEMPLATE = re.compile(r'^\s*- "([^"]*[а-яё][^"]*\[[^"]*)"\s*$|`([^`\n]*[а-яё][^`\n]*\[<[^`\n]*)`', re.MULTILINE)
# A row of docs/questions.md's table of rules: | `rule`: what it targets | refused | written instead |
CELL = r"((?:[^|\\]|\\.)*)"  # a table cell: anything but an unescaped |
RULES_TABLE_ROW = re.compile(rf"^\s*\| `([a-z-]+)`:{CELL}\|{CELL}\|{CELL}\|\s*$", re.MULTILINE)
CODE_SPAN = re.compile(r"`([^`]+)`")


def _corpus(name: str) -> list[dict[str, str]]:
    return yaml.safe_load((CORPUS / f"{name}.yaml").read_text(encoding="utf-8"))


def _problems(text: str) -> list[str]:
    names = list(dict.fromkeys(PLACEHOLDER.findall(text)))  # kinds from the letters: Z size, C colour, ...
    return validate_template(text, names)


def _table_templates(cell: str) -> list[str]:
    return [span.replace("\\|", "|") for span in CODE_SPAN.findall(cell)]


def test_the_corpus_has_sixty_good_forty_bad_and_three_per_rule_each_way():
    good, bad = _corpus("good"), _corpus("bad")
    assert len(good) >= 60 and len(bad) >= 40
    good_rules, bad_rules = Counter(e["rule"] for e in good), Counter(e["rule"] for e in bad)
    assert set(bad_rules) == RULE_NAMES and set(good_rules) - {"none"} == RULE_NAMES
    assert min(good_rules[name] for name in RULE_NAMES) >= 3 and min(bad_rules.values()) >= 3
    assert len({e["text"] for e in good + bad}) == len(good) + len(bad)  # no template twice


@pytest.mark.parametrize("entry", _corpus("good"), ids=lambda e: e["text"][:40])
def test_a_good_template_passes_every_rule(entry):
    assert _problems(entry["text"]) == []


@pytest.mark.parametrize("entry", _corpus("user_study"), ids=lambda e: e["text"][:40])
def test_every_template_the_user_study_wrote_passes(entry):
    assert _problems(entry["text"]) == []


@pytest.mark.parametrize("entry", _corpus("bad"), ids=lambda e: e["text"][:40])
def test_a_bad_template_is_refused_by_its_rule_naming_why_and_two_ways_to_write_it(entry):
    problems = _problems(entry["text"])
    mine = [p for p in problems if f"rule {entry['rule']}:" in p]
    assert mine, problems
    rule = next(rule for rule in RULES if rule.name == entry["rule"])
    assert rule.why in mine[0] and f"write {rule.fixes[0]} or {rule.fixes[1]}" in mine[0]


def test_every_shipped_and_documented_russian_template_passes():
    shipped = 0
    for path in sorted((ROOT / "questions" / "families").glob("*.yaml")):
        for family in yaml.safe_load(path.read_text(encoding="utf-8"))["families"]:
            for text in family["text"].get("ru", []):
                assert validate_template(text, family["params"]) == [], (family["id"], text)
                shipped += 1
    documented = [a or b for page in (ROOT / "docs").glob("*.md")
                  for a, b in DOCS_TEMPLATE.findall(RULES_TABLE_ROW.sub("", page.read_text(encoding="utf-8")))]
    for text in documented:
        assert _problems(text) == [], text
    assert shipped > 150 and len(documented) >= 3


def test_the_docs_table_of_rules_lists_every_rule_and_each_row_holds_both_ways():
    rows = RULES_TABLE_ROW.findall((ROOT / "docs" / "questions.md").read_text(encoding="utf-8"))
    assert sorted(name for name, _, _, _ in rows) == sorted(RULE_NAMES)
    for name, _, refused, written in rows:
        assert _table_templates(refused) and _table_templates(written), name
        for text in _table_templates(refused):
            assert any(f"rule {name}:" in p for p in _problems(text)), (name, text)
        for text in _table_templates(written):
            assert _problems(text) == [], (name, text)


def test_the_held_out_family_files_validate():
    families, problems = validate_files(sorted(HELD_OUT.glob("*.yaml")), {"ru": validate_template})  # as `dataset families validate`
    assert problems == [] and {f.id for f in families} == {
        "heldout/equal_sides", "heldout/equal_sets",  # equal_counts.yaml
        "heldout/same_color_near", "heldout/color_of_same_size_and_material", "heldout/count_same_shape_beside",
        "heldout/more_near_than_all", "heldout/fewer_on_one_side", "heldout/same_number_on_two_sides",
        "heldout/two_sides_color",  # two_sides.yaml
    }
