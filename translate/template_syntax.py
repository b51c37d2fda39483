"""The Russian template syntax: plain text with ``[...]`` groups around ``<NAME>`` placeholders.

A group is ``[tokens|features]``. The tokens are placeholders and Russian words; the features
(after ``|``, separated by commas) say how the group is inflected::

    Сколько [<Z> <C> <M> <S>|род,мн] [<R> <Z2> <C2> <M2> <S2>]?
    -> Сколько больших красных кубов слева от маленького шара?

Features: a case (``им род дат вин твор пр``, or pymorphy3's ``nomn gent datv accs ablt loct``),
a number (``ед мн`` or ``sing plur``), ``кратк`` (short form, for сделан/сделана), and a
placeholder ``<S>`` naming the noun phrase a group of its own words agrees with
(``[который|<S>]``, ``[<R> он|<S>]``). Templates are data: they are parsed
with regular expressions, never evaluated.

:func:`parse_template` reads the text and reports where it is malformed (with the column);
:mod:`translate.templates` compiles what it reads against the family's parameters and the lexicon.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from types import MappingProxyType

from assets.placeholders import PLACEHOLDER, is_placeholder

CASE_FEATURES = MappingProxyType({
    "им": "nomn", "род": "gent", "дат": "datv", "вин": "accs", "твор": "ablt", "пр": "loct", "предл": "loct",
    "nomn": "nomn", "gent": "gent", "datv": "datv", "accs": "accs", "ablt": "ablt", "loct": "loct",
})
NUMBER_FEATURES = MappingProxyType({"ед": "sing", "мн": "plur", "sing": "sing", "plur": "plur"})
SHORT_FEATURES = frozenset({"кратк", "short"})

WORD = re.compile(r"[а-яё]+(?:-[а-яё]+)*")
_LATIN = re.compile(r"[A-Za-z]+")
_FEATURE_SPLIT = re.compile(r"[,\s]+")


@dataclass(frozen=True)
class Placeholder:
    name: str  # with the angle brackets, as written: "<Z2>"


@dataclass(frozen=True)
class Word:
    text: str


@dataclass(frozen=True)
class Group:
    """One ``[tokens|features]`` group as written."""

    tokens: tuple[Placeholder | Word, ...]
    case: str | None
    number: str | None
    short: bool
    reference: str | None  # the placeholder after "|" that the group's words agree with
    column: int  # 1-based column of "[" in the template
    source: str  # the group as written, for error messages

    def where(self) -> str:
        return f"column {self.column}, {self.source}"


@dataclass(frozen=True)
class Template:
    text: str
    parts: tuple[str | Group | Placeholder, ...]  # literal text, groups, and bare placeholders


class TemplateSyntaxError(ValueError):
    """A malformed template; ``problems`` lists every problem found, each with its column."""

    def __init__(self, problems: list[str]):
        super().__init__("; ".join(problems))
        self.problems = problems


def parse_template(text: str) -> Template:
    """Split ``text`` into literal text, groups and bare placeholders, or raise TemplateSyntaxError."""
    problems: list[str] = []
    if not isinstance(text, str) or not text.strip():
        raise TemplateSyntaxError(["the template is empty"])
    if text != text.strip():
        problems.append("leading or trailing spaces")
    if "  " in text:
        problems.append(f"column {text.index('  ') + 1}: double space")
    parts: list[str | Group | Placeholder] = []
    position = 0
    while position < len(text):
        opening = text.find("[", position)
        literal_end = opening if opening >= 0 else len(text)
        parts.extend(_literal_parts(text, position, literal_end, problems))
        if opening < 0:
            break
        closing = text.find("]", opening + 1)
        nested = text.find("[", opening + 1)
        if closing < 0 or (0 <= nested < closing):
            problems.append(f"column {opening + 1}: '[' is not closed by ']'")
            break
        group = _parse_group(text, opening, closing, problems)
        if group is not None:
            parts.append(group)
        position = closing + 1
    if problems:
        raise TemplateSyntaxError(problems)
    return Template(text, tuple(p for p in parts if p != ""))


def _literal_parts(text: str, start: int, end: int, problems: list[str]) -> list[str | Placeholder]:
    """Literal text between groups, with its bare placeholders split out."""
    parts: list[str | Placeholder] = []
    cursor = start
    for match in PLACEHOLDER.finditer(text, start, end):
        _check_literal(text, cursor, match.start(), problems)
        parts.extend([text[cursor:match.start()], Placeholder(match.group())])
        cursor = match.end()
    _check_literal(text, cursor, end, problems)
    parts.append(text[cursor:end])
    return parts


def _check_literal(text: str, start: int, end: int, problems: list[str]) -> None:
    for index in range(start, end):
        if text[index] in "]|<>{}":
            problems.append(f"column {index + 1}: stray '{text[index]}' outside a [...] group")
    for latin in _LATIN.finditer(text, start, end):
        problems.append(f"column {latin.start() + 1}: Latin letters {latin.group()!r} in Russian text")


def _parse_group(text: str, opening: int, closing: int, problems: list[str]) -> Group | None:
    source = text[opening:closing + 1]
    where = f"column {opening + 1}, {source}"
    sections = text[opening + 1:closing].split("|")
    if len(sections) > 2:
        problems.append(f"{where}: more than one '|' in a group")
        return None
    tokens = _parse_tokens(sections[0], where, problems)
    case, number, short, reference = _parse_features(sections[1] if len(sections) == 2 else "", where, problems)
    if not tokens:
        problems.append(f"{where}: the group has no words or placeholders before '|'")
        return None
    return Group(tuple(tokens), case, number, short, reference, opening + 1, source)


def _parse_tokens(section: str, where: str, problems: list[str]) -> list[Placeholder | Word]:
    tokens: list[Placeholder | Word] = []
    for token in section.split():
        if is_placeholder(token):
            tokens.append(Placeholder(token))
        elif WORD.fullmatch(token):
            tokens.append(Word(token))
        else:
            problems.append(
                f"{where}: {token!r} is neither a placeholder like <Z2> nor a lowercase Russian word"
            )
    return tokens


def _parse_features(section: str, where: str, problems: list[str]) -> tuple[str | None, str | None, bool, str | None]:
    case = number = reference = None
    short = False
    for feature in filter(None, _FEATURE_SPLIT.split(section.strip())):
        if feature in CASE_FEATURES:
            if case is not None:
                problems.append(f"{where}: two cases given")
            case = CASE_FEATURES[feature]
        elif feature in NUMBER_FEATURES:
            if number is not None:
                problems.append(f"{where}: two numbers given")
            number = NUMBER_FEATURES[feature]
        elif feature in SHORT_FEATURES:
            short = True
        elif is_placeholder(feature):
            if reference is not None:
                problems.append(f"{where}: a group can agree with one noun phrase only")
            reference = feature
        else:
            allowed = "им род дат вин твор пр (or nomn gent datv accs ablt loct), ед мн (sing plur), кратк, <NAME>"
            problems.append(f"{where}: unknown feature {feature!r}; allowed: {allowed}")
    return case, number, short, reference


# Clauses end at punctuation; «и» alone between two groups joins them into one subject.
CLAUSE_END = re.compile(r"[.,;:?!—]")
_AND = re.compile(r"\s*и\s*")


def joined_by_and(clause: list[tuple[int, object]], subjects: list[Group]) -> bool:
    """Whether each two successive subject groups of the clause have only «и» between them."""
    between: list[str] = []
    seen = 0
    for _, part in clause:
        if isinstance(part, Group) and any(part is subject for subject in subjects):
            if seen and not _AND.fullmatch("".join(between)):
                return False
            seen += 1
            between = []
        elif isinstance(part, str):
            between.append(part)
        else:
            between.append("\0")  # another group or a placeholder between them
    return True


def clauses(template: Template) -> list[list[tuple[int, object]]]:
    """The template's parts split into clauses at punctuation, each part with its 1-based column."""
    clauses: list[list[tuple[int, object]]] = [[]]
    column = 1
    for part in template.parts:
        if isinstance(part, Group):
            clauses[-1].append((part.column, part))
            column = part.column + len(part.source)
        elif isinstance(part, Placeholder):
            clauses[-1].append((column, part))
            column += len(part.name)
        else:
            start = 0
            for end in CLAUSE_END.finditer(part):
                clauses[-1].append((column + start, part[start:end.start()]))
                clauses.append([])
                start = end.end()
            clauses[-1].append((column + start, part[start:]))
            column += len(part)
    return clauses
