"""The Russian rules a family's templates must pass (`python -m dataset families validate`, and translate's
family loader, give them to the question engine's validator), each named.

A rule refuses only a text that is open (readers can take it two ways) or ungrammatical
(government or agreement broken): a rule that flags a grammatical template with one reading
blocks exactly the users who extend families, and is a bug of the rule. Each rule states the
construction it targets, says why such a text is open and gives two ways to write it instead.
``tests/data/russian_templates/{good,bad}.yaml`` hold, per rule, templates near its construction
that it must let through and templates it must refuse (``tests/test_russian_rules.py``); every
shipped family's Russian template and every template quoted in docs/ passes.

The wording rules (:data:`WORDING_RULES`) read the template as words (with pymorphy3's lemmas
and cases) and groups (with their declared case); the government and agreement rules
(:data:`QUANTITY_GOVERNMENT`, :data:`VERB_AGREEMENT`) are checked by :mod:`translate.templates`
on the parsed groups and reported with :func:`rule_message`.

Not a rule: «является», «представляет собой». They read as a calque (issue 26's readers found
them stilted) but are grammatical with one reading, so a family may use them; the shipped
families do not (tests/test_questions_readings_kinds.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from russian.morphology import WORDS_CACHED, analyzer
from translate.template_syntax import Group, Placeholder, Template, Word


@dataclass(frozen=True)
class Token:
    """A word (lower-cased), a punctuation mark, or a group (its source) of a template, with its column."""

    text: str
    column: int
    case: str | None = None  # a group's case; "relation" where its relation governs it; None for words
    names: int | None = None  # a group naming an object: which (the first group of its placeholders); a pronoun too


Span = tuple[Token, Token]  # the first and the last token of a construction found


@dataclass(frozen=True)
class Rule:
    """One rule: its name, the construction it targets, why that text is open, two ways to write it."""

    name: str
    targets: str
    why: str
    fixes: tuple[str, str]
    check: Callable[[list[Token]], list[Span]] | None = None  # wording rules: where the construction is


def rule_message(rule: Rule, found: str) -> str:
    """A problem as the validator reports it: the rule, what was found, why it is open, two ways to write it."""
    return f"rule {rule.name}: {found}: {rule.why}; write {rule.fixes[0]} or {rule.fixes[1]}"


# -- the template as tokens ------------------------------------------------------------------------

_WORD_OR_MARK = re.compile(r"[а-яё]+(?:-[а-яё]+)*|[.,;:?!—]", re.IGNORECASE)
_CLAUSE_MARKS = frozenset(".,;:?!—")
_SENTENCE_MARKS = frozenset(".?!")


def template_tokens(template: Template, kinds: Mapping[str, str]) -> list[Token]:
    """The template's words, punctuation marks and groups in order, each with its 1-based column."""
    tokens: list[Token] = []
    column = 1
    first_group = _first_group_of_placeholders(template, kinds)
    for part in template.parts:
        if isinstance(part, str):
            tokens += [Token(m.group().lower(), column + m.start()) for m in _WORD_OR_MARK.finditer(part)]
            column += len(part)
        elif isinstance(part, Group):
            first = part.tokens[0]
            governed = isinstance(first, Placeholder) and kinds.get(first.name) == "relation"
            tokens.append(Token(part.source, part.column, "relation" if governed else part.case or "nomn",
                                _object_named(part, kinds, first_group)))
            column = part.column + len(part.source)
        else:
            tokens.append(Token(part.name, column, "number"))
            column += len(part.name)
    return tokens


def _first_group_of_placeholders(template: Template, kinds: Mapping[str, str]) -> dict[str, int]:
    """Each attribute or shape placeholder -> the column of the first noun phrase group it is in."""
    first: dict[str, int] = {}
    for part in template.parts:
        if isinstance(part, Group) and not part.reference:
            for token in part.tokens:
                if isinstance(token, Placeholder) and kinds.get(token.name) != "relation":
                    first.setdefault(token.name, part.column)
    return first


def _object_named(group: Group, kinds: Mapping[str, str], first_group: Mapping[str, int]) -> int | None:
    """Which object a group names (the column of the phrase that first names it), or None: a noun phrase
    with a shape placeholder or a noun of its own, or a word referring to one ([он|<S>], [который|<S>])."""
    if group.reference:
        return first_group.get(group.reference)
    names = [t.name for t in group.tokens if isinstance(t, Placeholder) and kinds.get(t.name) != "relation"]
    if not names or not (any(kinds.get(name) == "shape" for name in names) or isinstance(group.tokens[-1], Word)):
        return None  # an attribute alone («не [<C2>|род] цвета») names no object
    return min(first_group.get(name, group.column) for name in names)


def _is_word(token: Token) -> bool:
    return token.case is None and token.text not in _CLAUSE_MARKS


@lru_cache(maxsize=WORDS_CACHED)
def _parses(word: str) -> tuple[tuple[str, str | None, str | None], ...]:
    """(lemma, part of speech, case) of every reading pymorphy3 gives ``word``."""
    return tuple((p.normal_form, p.tag.POS, p.tag.case) for p in analyzer().parse(word))


def _lemmas(token: Token) -> set[str]:
    return {lemma for lemma, _, _ in _parses(token.text)} if _is_word(token) else set()


def _is_preposition(token: Token) -> bool:
    return _is_word(token) and _parses(token.text)[0][1] == "PREP"


def _after_preposition(tokens: list[Token], i: int) -> bool:
    return i > 0 and _is_preposition(tokens[i - 1])


def _clause_end(tokens: list[Token], start: int, marks: frozenset[str] = _CLAUSE_MARKS) -> int:
    """The index of the first punctuation mark among ``marks`` at or after ``start`` (or the end)."""
    return next((i for i in range(start, len(tokens)) if tokens[i].text in marks and tokens[i].case is None), len(tokens))


def _clause_start(tokens: list[Token], end: int) -> int:
    return next((i + 1 for i in range(end - 1, -1, -1) if tokens[i].text in _CLAUSE_MARKS and tokens[i].case is None), 0)


def _is_relative_clause(tokens: list[Token], start: int) -> bool:
    """Whether the clause from ``start`` is a relative clause («, [<R> который|<S>] …», «, слева от которого …»)."""
    return any("который" in _lemmas(t) or t.case is not None and "который" in t.text for t in tokens[start:start + 3])


def _main_clause(tokens: list[Token], i: int) -> list[int]:
    """The indices of the clause of token ``i`` and of its continuation after a relative clause set off
    by commas («Равно ли количество A, [который|<S>] стоят …, количеству B?»), the relative clause left out."""
    start, end = _clause_start(tokens, i), _clause_end(tokens, i)
    indices = list(range(start, end))
    while end < len(tokens) - 1 and tokens[end].text == "," and _is_relative_clause(tokens, end + 1):
        after = _clause_end(tokens, end + 1)
        if after >= len(tokens) or tokens[after].text != ",":
            break
        end = _clause_end(tokens, after + 1)
        indices += range(after + 1, end)
    return indices


# -- takoy-zhe-bare ------------------------------------------------------------------------------------

#: Nouns that name what «такой же» copies («такого же цвета», «такой же по форме», «такое же количество»).
ATTRIBUTE_NOUNS = frozenset({
    "форма", "цвет", "размер", "материал", "величина", "окраска", "оттенок", "расцветка", "вид", "тип",
    "количество", "число", "высота", "фактура", "поверхность",
})


_COMPARAND = frozenset({"как", "что"})


def _names_an_attribute(tokens: list[Token]) -> bool:
    return any(lemma in ATTRIBUTE_NOUNS and pos == "NOUN" for t in tokens if _is_word(t) for lemma, pos, _ in _parses(t.text))


def _is_adjective(token: Token) -> bool:
    return _is_word(token) and _parses(token.text)[0][1] in ("ADJF", "PRTF")


def _attribute_after(tokens: list[Token], zhe: int) -> bool:
    """«такого же цвета», «такой же по форме», «такого же яркого цвета», «Такого же ли размера»."""
    i = zhe + 1
    while i < len(tokens) and (tokens[i].text in ("ли", "по") or _is_adjective(tokens[i])):
        i += 1
    return i < len(tokens) and _names_an_attribute([tokens[i]])


def _attribute_before(tokens: list[Token], takoy: int) -> bool:
    """«размер [который|<S3>,род] такой же», «цвет у [<S>|род] такой же», «Количество [..] — такое же»:
    the attribute is its subject."""
    i = takoy - 1
    while i >= 0 and (tokens[i].case is not None or _is_preposition(tokens[i]) or tokens[i].text in ("ли", "—")):
        i -= 1
    return i >= 0 and _names_an_attribute([tokens[i]])


def _attribute_after_comparison(tokens: list[Token], zhe: int) -> bool:
    """«такой же, как [<Z2> <C2> <M2> <S2>], по цвету», «такого же, как у [<S>|род], цвета»."""
    end = _clause_end(tokens, zhe)
    if end + 1 >= len(tokens) or tokens[end].text != "," or tokens[end + 1].text not in _COMPARAND:
        return False
    after = _clause_end(tokens, end + 1)
    last = tokens[after + 1:_clause_end(tokens, after + 1)]
    return bool(last) and (_names_an_attribute(last[:1]) or last[0].text == "по" and _names_an_attribute(last[1:2]))


def _bare_takoy_zhe(tokens: list[Token]) -> list[Span]:
    """«такой же» (any form) with no attribute it copies right after it, as its subject before it,
    or after its comparison."""
    found = []
    for i in range(1, len(tokens)):
        if tokens[i].text != "же" or "такой" not in _lemmas(tokens[i - 1]):
            continue
        if not (_attribute_after(tokens, i) or _attribute_before(tokens, i - 1) or _attribute_after_comparison(tokens, i)):
            found.append((tokens[i - 1], tokens[i]))
    return found


# -- takoy-zhe-which ----------------------------------------------------------------------------------

_BETWEEN_HEAD_AND_TAKOY = frozenset({"из", "точно", "ровно", "именно", "совсем", "совершенно"})


def _head(tokens: list[Token], takoy: int) -> int | None:
    """The object a «такой же» phrase describes: the group right before it («[другой куб] такого же
    цвета», «[сделанный|<S2>] из того же материала»), or None where a word («предметы») stands there."""
    i = takoy - 1
    while i >= 0 and tokens[i].text in _BETWEEN_HEAD_AND_TAKOY:
        i -= 1
    return tokens[i].names if i >= 0 else None


def _attribute_lemmas(token: Token) -> set[str]:
    return {lemma for lemma, pos, _ in _parses(token.text) if pos == "NOUN"} & ATTRIBUTE_NOUNS if _is_word(token) else set()


def _asked_before(tokens: list[Token], takoy: int, attribute: Token) -> bool:
    """Whether the question asks, before «такой же», for the very attribute it copies: «какой» and
    the attribute's noun later in its clause («Какого цвета …», «Какого [он|<S>] цвета, …»)."""
    lemmas = _attribute_lemmas(attribute)
    return any("какой" in _lemmas(tokens[j]) and _asks_for(tokens, j, lemmas) for j in range(takoy - 1))


def _asks_for(tokens: list[Token], which: int, lemmas: set[str]) -> bool:
    """Whether an attribute noun among ``lemmas`` follows the «какой» at ``which`` in its clause."""
    return any(_attribute_lemmas(token) & lemmas for token in tokens[which + 1:_clause_end(tokens, which + 1)])


def _takoy_zhe_attribute_without_comparand(tokens: list[Token]) -> list[Span]:
    """«такого же цвета» / «того же материала» with no «как …»/«что и …» after it in its sentence
    while two or more objects besides its own head are named before it."""
    found = []
    for i in range(1, len(tokens) - 1):
        if tokens[i].text != "же" or not _lemmas(tokens[i - 1]) & {"такой", "тот"}:
            continue
        following = tokens[i + 1:i + 3] if tokens[i + 1].text in ("ли", "по") else tokens[i + 1:i + 2]
        if not _names_an_attribute(following[-1:]):
            continue
        end = _clause_end(tokens, i, _SENTENCE_MARKS)
        if any(t.text in _COMPARAND for t in tokens[i + 1:end] if _is_word(t)):
            continue
        if _asked_before(tokens, i - 1, following[-1]):
            continue  # «Какого цвета X …, и есть ли ещё предметы такого же цвета?»: the colour asked
        before = [t.names for t in tokens[:i - 1] if t.names is not None]
        if len(set(before) - {_head(tokens, i - 1)}) >= 2:
            found.append((tokens[i - 1], following[-1]))
    return found


# -- count-exceeds-count -------------------------------------------------------------------------------

_EXCEED_VERBS = frozenset({"превышать", "превысить", "превосходить", "превзойти", "опережать", "опередить"})


def _alike_in_nominative_and_accusative(token: Token, after_preposition: bool) -> bool:
    """A noun phrase that may read as the subject or as the object: a group in the nominative or the
    accusative (inanimate nouns look alike in both), or a noun with both readings (not a numeral:
    «Превышает ли число A два?» has one reading)."""
    if after_preposition:
        return False
    if token.case is not None:
        return token.case in ("nomn", "accs")
    if not _is_word(token):
        return False
    cases = {case for _, pos, case in _parses(token.text) if pos == "NOUN"}
    return {"nomn", "accs"} <= cases


def _exceeds_two_alike(tokens: list[Token]) -> list[Span]:
    """«Превышает ли» (превосходит, опережает) followed in its clause by two noun phrases each of
    which may be nominative or accusative: «Превышает ли количество A количество B»."""
    found = []
    for i in range(len(tokens) - 1):
        if not _lemmas(tokens[i]) & _EXCEED_VERBS or tokens[i + 1].text != "ли":
            continue
        clause = [j for j in _main_clause(tokens, i) if j > i + 1]
        alike = sum(_alike_in_nominative_and_accusative(tokens[j], _after_preposition(tokens, j)) for j in clause)
        if alike >= 2:
            found.append((tokens[i], tokens[i + 1]))
    return found


# -- ravno-dative --------------------------------------------------------------------------------------

_COUNT_NOUNS = frozenset({"количество", "число"})


def _nominative_count(token: Token) -> bool:
    return _is_word(token) and any(lemma in _COUNT_NOUNS and pos == "NOUN" and case in ("nomn", "accs")
                                   for lemma, pos, case in _parses(token.text))


def _equal_two_nominative_counts(tokens: list[Token]) -> list[Span]:
    """«равно» (равен, равны) in a clause with two counts in the nominative not joined by «и»/«или»:
    «Равно ли количество A количество B» (the second should be the dative «количеству»)."""
    found = []
    for i, token in enumerate(tokens):
        if "равный" not in _lemmas(token):
            continue
        counts = [j for j in _main_clause(tokens, i) if _nominative_count(tokens[j]) and not _after_preposition(tokens, j)]
        if any(tokens[later - 1].text not in ("и", "или") for later in counts[1:]):
            found.append((token, token))
    return found


# -- bolshe-li-vsego -----------------------------------------------------------------------------------

def _more_li_vsego(tokens: list[Token]) -> list[Span]:
    """«Больше ли всего …» / «Меньше ли всего …»: read as «больше всего», 'most of all'."""
    return [(tokens[i], tokens[i + 2]) for i in range(len(tokens) - 2)
            if tokens[i].text in ("больше", "меньше") and tokens[i + 1].text == "ли" and tokens[i + 2].text == "всего"]


# -- the rules -----------------------------------------------------------------------------------------

TAKOY_ZHE = Rule(
    "takoy-zhe-bare",
    "«такой же» (any form) with no attribute it copies right after it, before it as its subject or after its "
    "comparison: «нет других таких же предметов», «Есть ли ещё такой же [<Z> <C> <M> <S>]?»; «такого же цвета», "
    "«такой же по форме», «такое же количество», «размер которого такой же, как у X», «такой же, как X, по цвету» "
    "name it",
    "«такой же» copies nothing named (a bare «предмет», or no noun), so which attributes are shared is open",
    ("the set again with its attributes («нет других больших кубов»)", "the attribute it copies («такой же формы, как …»)"),
    _bare_takoy_zhe,
)
TAKOY_ZHE_WHICH = Rule(
    "takoy-zhe-which",
    "«такого же цвета», «того же материала» (an attribute copied) with no «как …»/«что и …» after it while "
    "two or more objects besides the one it describes are named before it: «Посмотри на [куб]. Есть ли "
    "[<R> B] [другие предметы] такого же цвета?»; with one object named before, or a comparand, it passes",
    "«такой же» with no comparand copies from an object named before it, and two are, so which one is open",
    ("the comparand («такого же цвета, как [он|<S>]»)", "«того же цвета, что и [<Z> <C> <M> <S>]»"),
    _takoy_zhe_attribute_without_comparand,
)
EXCEEDS = Rule(
    "count-exceeds-count",
    "«превышает/превосходит/опережает ли» followed by two noun phrases that look alike in the nominative "
    "and the accusative: «Превышает ли количество A количество B»; the order «количество A превышает "
    "количество B» (subject first) and an object in another case («по количеству», «числом») pass",
    "«количество» (and an inanimate noun) is the same word in the nominative and the accusative, so which count "
    "is compared with which is open",
    ("«Больше ли A, чем B?»", "«Верно ли, что A больше, чем B?»"),
    _exceeds_two_alike,
)
EQUAL_DATIVE = Rule(
    "ravno-dative",
    "«равно» with two counts in the nominative not joined by «и»: «Равно ли количество A количество B»; "
    "«количеству B», «количество A и количество B», «Одинаково ли количество A и B» pass",
    "«равно» governs the dative («количеству»); with a nominative second count the sentence has two subjects "
    "and no object, so what is compared is open",
    ("«Равно ли количество A количеству B?»", "«Одинаково ли количество A и B?»"),
    _equal_two_nominative_counts,
)
MOST_OF_ALL = Rule(
    "bolshe-li-vsego",
    "«Больше ли всего …» / «Меньше ли всего …» opening a comparison of totals",
    "it reads as «больше всего» ('most of all'), one phrase, so the total is taken for the superlative",
    ("«Верно ли, что всего на изображении A больше, чем B?»", "«Больше ли A, чем B?»"),
    _more_li_vsego,
)
QUANTITY_GOVERNMENT = Rule(
    "quantity-government",
    "a group right after «сколько», «столько», «несколько» or a numeral written in the text, or joined to "
    "such a group by «и»/«или»",
    "«сколько» and «пять» govern the genitive plural and «два» the genitive singular; another case reads as "
    "another sentence («Сколько объект …»)",
    ("[…|род,мн] after «сколько»/«пять»", "[…|род] after «два»/«три»/«четыре»"),
)
VERB_AGREEMENT = Rule(
    "verb-agreement",
    "a third-person verb written in the text whose number differs from its subject's (a nominative group of its "
    "clause, or [который|<S>]/[он|<S>] in the number of <S>'s phrase); before subjects joined by «и» it may agree "
    "with the first («Стоит ли куб и шар …»); imperatives («Скажи») agree with none",
    "a verb that agrees with no subject leaves which group it is about open",
    ("the verb in its subject's number («находятся» for a plural group)", "the subject in the verb's number ([…|мн] or […|ед])"),
)

#: The rules checked on the template's words.
WORDING_RULES: tuple[Rule, ...] = (TAKOY_ZHE, TAKOY_ZHE_WHICH, EXCEEDS, EQUAL_DATIVE, MOST_OF_ALL)
#: Every rule, in the order the docs list them.
RULES: tuple[Rule, ...] = (*WORDING_RULES, QUANTITY_GOVERNMENT, VERB_AGREEMENT)


def wording_problems(template: Template, kinds: Mapping[str, str]) -> list[str]:
    """The wording rules ``template`` breaks, each as a validator problem with its column."""
    tokens = template_tokens(template, kinds)
    problems = []
    for rule in WORDING_RULES:
        assert rule.check is not None  # every wording rule has one
        for first, last in rule.check(tokens):
            written = template.text[first.column - 1:last.column - 1 + len(last.text)]
            problems.append(f"column {first.column}: " + rule_message(rule, f"«{written}»"))
    return problems
