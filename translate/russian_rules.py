"""The Russian rules a family's templates must pass (`python -m dataset families validate`, and translate's
family loader, give them to the question engine's validator), each named.

Each rule targets one construction that blind native readers read two ways, read as a calque,
or that breaks government or agreement; it says why such a text is open and gives two ways to
write it instead. A rule must not flag a grammatical template with one reading:
``tests/data/russian_templates/{good,bad}.yaml`` hold, per rule, templates it must let through
and templates it must refuse (``tests/test_russian_rules.py``), and every shipped family's
Russian template passes.

The wording rules (:data:`WORDING_RULES`) are patterns on the template's text; the government
and agreement rules (:data:`QUANTITY_GOVERNMENT`, :data:`VERB_AGREEMENT`) are checked by
:mod:`translate.templates` on the parsed groups and reported with :func:`rule_message`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    """One rule: its name, the construction it targets, why that text is open, two ways to write it."""

    name: str
    targets: str
    why: str
    fixes: tuple[str, str]
    pattern: re.Pattern[str] | None = None  # wording rules: where the construction is, on the lower-cased text


def rule_message(rule: Rule, found: str) -> str:
    """A problem as the validator reports it: the rule, what was found, why it is open, two ways to write it."""
    return f"rule {rule.name}: {found}: {rule.why}; write {rule.fixes[0]} or {rule.fixes[1]}"


_GENITIVE_ATTRIBUTE = r"(?:формы|цвета|размера|материала|форму|цвет|размер|материал)"

TAKOY_ZHE = Rule(
    "takoy-zhe-bare",
    "«такой же» (any form) not followed by the attribute it copies: «нет других таких же предметов»",
    "«такой же» copies nothing from a bare noun, so which attributes are shared is open",
    ("the set again with its attributes («нет других больших кубов»)", "the attribute it copies («такой же формы, как …»)"),
    re.compile(rf"\bтак(?:ой|ая|ое|ие|ого|ому|им|их|ую|ими|ым) же(?! (?:ли )?{_GENITIVE_ATTRIBUTE})\b"),
)
CALQUE = Rule(
    "calque-yavlyaetsya",
    "«является», «являются», «представляет собой» between a set and what it is",
    "a calque of 'is': readers stop at it and read «является кубом» as 'counts as a cube'",
    ("a dash («Все ли большие предметы — кубы?»)", "the adjective («Все ли кубы металлические?»)"),
    re.compile(r"\bявля(?:ет|ют|ющ|л)\w*|\bпредставля\w* собой"),
)
EXCEEDS = Rule(
    "count-exceeds-count",
    "a verb with an accusative object comparing two counts: «Превышает ли количество A количество B»",
    "«количество» is the same word in the nominative and the accusative, so which count is compared with which is open",
    ("«Больше ли A, чем B?»", "«Верно ли, что A больше, чем B?»"),
    re.compile(r"\b(?:превыша|превосход)\w* ли\b"),
)
EQUAL_DATIVE = Rule(
    "ravno-dative",
    "«равно ли количество A» followed by a second count not in the dative: «Равно ли количество A количество B»",
    "«равно» governs the dative («количеству»); with a nominative second count the sentence has two subjects "
    "and no object, so what is compared is open",
    ("«Равно ли количество A количеству B?»", "«Одинаково ли количество A и B?»"),
    re.compile(r"\bравн[оаы]? ли (?:\w+ )?(?:количество|число)\b[^?.]*?\b(?:количество|число)\b"),
)
MOST_OF_ALL = Rule(
    "bolshe-li-vsego",
    "«Больше ли всего …» / «Меньше ли всего …» opening a comparison of totals",
    "it reads as «больше всего» ('most of all'), one phrase, so the total is taken for the superlative",
    ("«Верно ли, что всего на изображении A больше, чем B?»", "«Больше ли A, чем B?»"),
    re.compile(r"\b(?:больше|меньше) ли всего\b"),
)
QUANTITY_GOVERNMENT = Rule(
    "quantity-government",
    "a group right after «сколько», «столько», «несколько» or a numeral written in the text",
    "«сколько» and «пять» govern the genitive plural and «два» the genitive singular; another case reads as "
    "another sentence («Сколько объект …»)",
    ("[…|род,мн] after «сколько»/«пять»", "[…|род] after «два»/«три»/«четыре»"),
)
VERB_AGREEMENT = Rule(
    "verb-agreement",
    "a verb written in the text whose number differs from its subject's (a nominative group of its clause)",
    "a verb that agrees with no subject leaves which group it is about open",
    ("the verb in its subject's number («находятся» for a plural group)", "the subject in the verb's number ([…|мн] or […|ед])"),
)

#: The rules checked as patterns on the text.
WORDING_RULES: tuple[Rule, ...] = (TAKOY_ZHE, CALQUE, EXCEEDS, EQUAL_DATIVE, MOST_OF_ALL)
#: Every rule, in the order the docs list them.
RULES: tuple[Rule, ...] = (*WORDING_RULES, QUANTITY_GOVERNMENT, VERB_AGREEMENT)


def wording_problems(text: str) -> list[str]:
    """The wording rules ``text`` breaks, each as a validator problem with its column."""
    lower = text.lower()
    problems = []
    for rule in WORDING_RULES:
        assert rule.pattern is not None  # every wording rule has one
        for found in rule.pattern.finditer(lower):
            problems.append(f"column {found.start() + 1}: " + rule_message(rule, f"«{text[found.start():found.end()]}»"))
    return problems
