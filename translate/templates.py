"""Russian templates compiled against the family's parameter types and the lexicon.

:func:`compile_template` takes a template read by :func:`translate.template_syntax.parse_template`,
checks it against the family's parameter types and the lexicon (can this word be inflected?
does the shape come last?) and turns each group into a noun phrase or an agreement spec that
:mod:`translate.native` renders.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from assets.placeholders import did_you_mean, is_placeholder
from assets.vocabulary import load_vocabulary
from russian.morphology import Lexicon, MorphologyError, build_lexicon, takes_n_form, verb_number, word_role
from translate.russian_rules import QUANTITY_GOVERNMENT, VERB_AGREEMENT, rule_message, wording_problems
from translate.template_syntax import (
    CLAUSE_END,
    WORD,
    Group,
    Placeholder,
    Template,
    TemplateSyntaxError,
    Word,
    clauses,
    joined_by_and,
    parse_template,
)

#: Parameter types (the question engine's size, color, material, shape, relation; CLEVR's
#: capitalised names are accepted) and what a name's letter implies when no type is declared.
KINDS = ("size", "color", "material", "shape", "relation", "integer")
_DECLARED_KINDS = MappingProxyType({
    "size": "size", "color": "color", "colour": "color", "material": "material", "shape": "shape",
    "relation": "relation", "integer": "integer", "number": "integer", "count": "integer",
})
_NAME_LETTER_KINDS = MappingProxyType({"Z": "size", "C": "color", "M": "material", "S": "shape", "R": "relation", "N": "integer"})
_MODIFIER_KINDS = frozenset({"size", "color", "material"})
SENTENCE_START = re.compile(r"(?<=[.!?] )[\[а-яё]")


@dataclass(frozen=True)
class NounPhrase:
    """A compiled noun phrase group. Slots are indices into the family's parameter list."""

    relation: int | None  # relation parameter that puts a preposition before the phrase
    modifiers: tuple[tuple[str, Any], ...]  # ("slot", i) ("count", i) ("adjective", другой) ("fixed", ещё)
    head_slot: int | None  # shape parameter
    head_noun: str | None  # literal noun when there is no shape parameter
    case: str
    number: str
    reads: tuple[int, ...]  # every parameter the phrase's text depends on
    adjectives_only: bool = False  # attribute placeholders without a noun: the adjectives, agreeing with «предмет»
    cache: dict = field(default_factory=dict, compare=False, repr=False)  # rendered text by the values it reads
    key: Callable = field(init=False, compare=False, repr=False)  # words -> the values it reads

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", _key_function(self.reads))


@dataclass(frozen=True)
class Agreement:
    """Words agreeing with a noun phrase elsewhere in the template: который, сделан, него."""

    relation: int | None
    words: tuple[tuple[str, str | int], ...]  # ("adjective", lemma) ("pronoun", он) ("verb", был) ("fixed", text) ("slot", index)
    phrase: NounPhrase
    case: str
    short: bool
    reads: tuple[int, ...]
    after_preposition: bool = False  # the text right before it ends with a preposition: its pronoun takes the н-form
    cache: dict = field(default_factory=dict, compare=False, repr=False)
    key: Callable = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", _key_function(self.reads))


def _key_function(reads: tuple[int, ...]) -> Callable:
    return operator.itemgetter(*reads) if reads else _no_key


def _no_key(words: object) -> None:
    return None


@dataclass(frozen=True)
class Number:
    """A bare integer parameter outside any group (``... равно <N>?``)."""

    slot: int


@dataclass(frozen=True)
class CompiledTemplate:
    text: str
    parts: tuple[str | NounPhrase | Agreement | Number, ...]
    several_sentences: bool  # "Посмотрите на куб. Слева от него...": capitalise after each full stop
    # How the realiser assembles it (derived from parts): the literal pieces, the first capitalised,
    # with "" where a phrase or number goes; the phrases and the numbers by position; whether the
    # text's first letter and its question mark are known only once the words are in.
    pieces: tuple[str, ...] = field(init=False, compare=False, repr=False)
    phrases: tuple[tuple[int, NounPhrase | Agreement], ...] = field(init=False, compare=False, repr=False)
    numbers: tuple[tuple[int, int], ...] = field(init=False, compare=False, repr=False)
    starts_with_word: bool = field(init=False, compare=False, repr=False)
    ends_with_word: bool = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        parts = self.parts
        pieces = [part if type(part) is str else "" for part in parts]
        starts_with_word = not (parts and type(parts[0]) is str and parts[0])
        if not starts_with_word:
            pieces[0] = pieces[0][:1].upper() + pieces[0][1:]
        ends_with_word = not (parts and type(parts[-1]) is str and parts[-1])
        if not ends_with_word and not pieces[-1].endswith("?"):
            pieces[-1] += "?"
        set_field = object.__setattr__
        set_field(self, "pieces", tuple(pieces))
        set_field(self, "phrases", tuple((i, part) for i, part in enumerate(parts) if type(part) in (NounPhrase, Agreement)))
        set_field(self, "numbers", tuple((i, part.slot) for i, part in enumerate(parts) if type(part) is Number))
        set_field(self, "starts_with_word", starts_with_word)
        set_field(self, "ends_with_word", ends_with_word)


def parameter_kinds(params: object) -> tuple[dict[str, str], list[str]]:
    """Parameter name -> kind, in declared order, and the problems of the declaration.

    Accepts the question engine's mapping name -> type, CLEVR's list of
    ``{"name": "<Z>", "type": "Size"}``, or bare names (the kind then comes from the letter:
    Z size, C colour, M material, S shape, R relation, N integer).
    """
    if isinstance(params, Mapping):
        declared = list(params.items())
    elif isinstance(params, (list, tuple)):
        declared = [(p.get("name"), p.get("type")) if isinstance(p, Mapping) else (p, None) for p in params]
    else:
        return {}, [f"parameters must be a mapping or a list, not {type(params).__name__}"]
    kinds: dict[str, str] = {}
    problems: list[str] = []
    for name, declared_type in declared:
        if not isinstance(name, str) or not is_placeholder(name):
            problems.append(f"parameter name {name!r} is not written <NAME>")
            continue
        kind = _DECLARED_KINDS.get(str(declared_type).lower()) if declared_type else _NAME_LETTER_KINDS.get(name[1])
        if kind is None:
            problems.append(f"parameter {name} has type {declared_type!r}; allowed: {', '.join(KINDS)}")
        else:
            kinds[name] = kind
    return kinds, problems


class _Compiler:
    """Checks one parsed template against the parameters; collects every problem."""

    def __init__(self, kinds: Mapping[str, str], lexicon: Lexicon):
        self.kinds = kinds
        self.index = {name: i for i, name in enumerate(kinds)}
        self.lexicon = lexicon
        self.problems: list[str] = []

    def unknown(self, where: str, name: str) -> None:
        self.problems.append(f"{where}{name} is not a parameter of this family{did_you_mean(name, self.kinds)} "
                             f"(parameters: {', '.join(self.kinds) or 'none'})")

    def compile(self, template: Template) -> CompiledTemplate | None:
        phrase_of: dict[str, NounPhrase] = {}
        placeholders_of: dict[str, tuple[str, ...]] = {}
        compiled: dict[int, NounPhrase] = {}
        for position, part in enumerate(template.parts):
            if isinstance(part, Group) and not part.reference:
                phrase = self.noun_phrase(part)
                if phrase is None:
                    continue
                names = tuple(t.name for t in part.tokens if isinstance(t, Placeholder) and self.kinds.get(t.name) != "relation")
                for name in names:
                    if name in phrase_of and placeholders_of[name] != names:
                        self.problems.append(
                            f"{part.where()}: {name} is already in another noun phrase; refer back to it with [он|{name}]"
                        )
                    # The same description said again («…, левее которого нет других [<Z> <S>|род,мн]»)
                    # names the set again; words agree with its first phrase.
                    phrase_of.setdefault(name, phrase)
                    placeholders_of.setdefault(name, names)
                compiled[position] = phrase
        parts: list[str | NounPhrase | Agreement | Number] = []
        for position, part in enumerate(template.parts):
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, Placeholder):
                number = self.bare_placeholder(part)
                if number is not None:
                    parts.append(number)
            elif part.reference:
                agreement = self.agreement(part, phrase_of, after_preposition(parts))
                if agreement is not None:
                    parts.append(agreement)
            elif position in compiled:
                parts.append(compiled[position])
        self.check_all_used(template)
        self.check_verbs(template)
        self.check_quantity_government(template)
        self.check_wording(template)
        if self.problems:
            return None
        return CompiledTemplate(template.text, tuple(parts), bool(SENTENCE_START.search(template.text)))

    def check_verbs(self, template: Template) -> None:
        """Verbs written in the text agree in number with their subject: a nominative group of
        the same clause, or groups joined by «и» (plural). Where a clause has several nominative
        groups not joined by «и», the verb may agree with any one of them."""
        phrase_numbers = _phrase_numbers(template)
        for clause in clauses(template):
            subjects = [part for _, part in clause if isinstance(part, Group) and self.is_subject(part)]
            if not subjects:
                continue
            joined = len(subjects) > 1 and joined_by_and(clause, subjects)
            # [который|<S>], [он|<S>] take the number of <S>'s phrase
            numbers = {"plur"} if joined else {phrase_numbers.get(part.reference or "", part.number or "sing") for part in subjects}
            # a verb before joined subjects may agree with the first («Стоит ли куб и шар …»)
            nearest = {subjects[0].number or "sing"} if joined else set()
            for column, part in clause:
                if not isinstance(part, str):
                    continue
                for word in _ANY_CASE_WORD.finditer(part):
                    number = verb_number(word.group().lower())
                    if number is None or number in numbers or number in nearest and column + word.start() < subjects[0].column:
                        continue
                    if joined:
                        subject = f"its subject {' и '.join(group.source for group in subjects)} is plural"
                    else:
                        subject = f"its subject {' or '.join(group.source for group in subjects)} is {'plural' if 'plur' in numbers else 'singular'}"
                    found = f"the verb {word.group()!r} is {'plural' if number == 'plur' else 'singular'} but {subject}"
                    self.problems.append(f"column {column + word.start()}: {rule_message(VERB_AGREEMENT, found)}")

    def check_quantity_government(self, template: Template) -> None:
        """A group right after «сколько» or a numeral written in the text is in the case and number
        it governs: «сколько [..|род,мн]», «два [..|род]», «пять [..|род,мн]» (not «Сколько объект»)."""
        previous: object = None
        governor: tuple[str, tuple[str, str]] | None = None  # the word governing the last group, and what it needs
        for part in template.parts:
            if isinstance(part, Group) and isinstance(previous, str) and not part.reference:
                first = part.tokens[0]
                if isinstance(first, Placeholder) and self.kinds.get(first.name) in ("relation", "integer"):
                    previous, governor = part, None
                    continue
                words = [w for w in WORD.findall(previous.lower()) if w not in _QUANTITY_FILLERS]
                needed = _QUANTITY_GOVERNMENT.get(words[-1]) if words and not CLAUSE_END.search(previous.rstrip()[-1:]) else None
                if needed is not None:
                    governor = (words[-1], needed)
                elif governor is not None and governor[0] in _QUANTIFIERS and _COORDINATION.fullmatch(previous):
                    needed = governor[1]  # «Сколько [A|род,мн] или [B|род,мн]»: B is counted too («два куба и шар» is not)
                else:
                    governor = None
                if needed is not None and governor is not None and (part.case, part.number or "sing") != needed:
                    features = "род,мн" if needed[1] == "plur" else "род"
                    found = (f"after «{governor[0]}» the noun phrase is in the genitive "
                             f"{'plural' if needed[1] == 'plur' else 'singular'} [...|{features}]")
                    self.problems.append(f"{part.where()}: {rule_message(QUANTITY_GOVERNMENT, found)}")
            elif not isinstance(part, str):
                governor = None
            previous = part

    def check_wording(self, template: Template) -> None:
        """Wordings native readers read two ways or as a calque (:data:`translate.russian_rules.WORDING_RULES`)."""
        self.problems.extend(wording_problems(template, self.kinds))

    def is_subject(self, group: Group) -> bool:
        """A nominative group without a relation and with a fixed number: a possible subject."""
        first = group.tokens[0]
        if group.case not in (None, "nomn") or group.short:
            return False
        if isinstance(first, Placeholder) and self.kinds.get(first.name) == "relation":
            return False
        if group.reference is not None:
            return any(isinstance(t, Word) and word_role(t.text, self.lexicon) in ("pronoun",) or
                       isinstance(t, Word) and t.text == "который" for t in group.tokens)
        return not any(isinstance(t, Placeholder) and self.kinds.get(t.name) == "integer" for t in group.tokens)

    def check_all_used(self, template: Template) -> None:
        used = {p.name for p in template.parts if isinstance(p, Placeholder)}
        for part in template.parts:
            if isinstance(part, Group):
                used |= {t.name for t in part.tokens if isinstance(t, Placeholder)}
        for name in self.kinds:
            if name not in used:
                self.problems.append(f"parameter {name} does not appear in the text")

    def bare_placeholder(self, part: Placeholder) -> Number | None:
        kind = self.kinds.get(part.name)
        if kind is None:
            self.unknown("", part.name)
        elif kind != "integer":
            self.problems.append(
                f"{part.name} ({kind}) must be inside a [...] group so that it can be inflected, "
                "for example [<Z> <C> <M> <S>|род,мн]"
            )
        else:
            return Number(self.index[part.name])
        return None

    def split_relation(self, group: Group) -> tuple[int | None, list[Placeholder | Word]]:
        tokens = list(group.tokens)
        relation = None
        for position, token in enumerate(tokens):
            if isinstance(token, Placeholder) and self.kinds.get(token.name) == "relation":
                if position != 0:
                    self.problems.append(f"{group.where()}: the relation {token.name} must be the first token of its group")
                relation = self.index[token.name]
        if relation is not None and isinstance(tokens[0], Placeholder) and self.kinds.get(tokens[0].name) == "relation":
            name = tokens.pop(0).name  # type: ignore[union-attr]  # tokens[0] is the relation placeholder checked above
            if group.case is not None:
                self.problems.append(f"{group.where()}: the case after {name} is set by the relation; remove the case feature")
            if not tokens:
                self.problems.append(
                    f"{group.where()}: {name} needs a noun phrase or a pronoun after it, "
                    f"e.g. [{name} <Z> <C> <M> <S>] or [{name} он|<S>]"
                )
        return relation, tokens

    def noun_phrase(self, group: Group) -> NounPhrase | None:
        before = len(self.problems)
        relation, tokens = self.split_relation(group)
        modifiers: list[tuple[str, object]] = []
        head_slot = head_noun = None
        has_count = False
        for position, token in enumerate(tokens):
            last = position == len(tokens) - 1
            if isinstance(token, Placeholder):
                kind = self.kinds.get(token.name)
                if kind is None:
                    self.unknown(f"{group.where()}: ", token.name)
                elif kind in _MODIFIER_KINDS:
                    modifiers.append(("slot", self.index[token.name]))
                elif kind == "integer":
                    if has_count or any(k in ("slot", "adjective") for k, _ in modifiers):
                        self.problems.append(f"{group.where()}: the number {token.name} must come before the adjectives, once")
                    has_count = True
                    modifiers.append(("count", self.index[token.name]))
                elif kind == "shape":
                    if not last:
                        self.problems.append(f"{group.where()}: the noun {token.name} must be the last token of the group")
                    head_slot = self.index[token.name]
                # a relation here was reported by split_relation
                continue
            role = word_role(token.text, self.lexicon)
            if role == "adjective":
                modifiers.append(("adjective", token.text))
            elif role == "invariable":
                modifiers.append(("fixed", token.text))
            elif role == "noun" and last and head_slot is None:
                head_noun = token.text
            elif role == "noun":
                self.problems.append(
                    f"{group.where()}: the noun {token.text!r} must be the last word, and only where there is no shape placeholder"
                )
            elif role == "pronoun":
                self.problems.append(
                    f"{group.where()}: a pronoun stands for another noun phrase: write [{token.text}|<S>] with that phrase's shape placeholder"
                )
            else:
                self.problems.append(
                    f"{group.where()}: cannot inflect {token.text!r}: inside a group use adjectives in the masculine "
                    "nominative singular (другой, который), invariable words (ещё) or nouns of the vocabulary; "
                    "put other words outside the brackets"
                )
        if group.short:
            self.problems.append(f"{group.where()}: кратк (short form) is for agreeing words like [сделанный|<S>,кратк], not noun phrases")
        if has_count and group.number is not None:
            self.problems.append(f"{group.where()}: the number placeholder decides singular or plural; remove the number feature")
        if head_slot is None and head_noun is None and not any(k in ("slot", "count") for k, _ in modifiers):
            self.problems.append(f"{group.where()}: a group needs a placeholder; to make words agree with a noun phrase write [слово|<S>]")
        if len(self.problems) > before:
            return None
        reads = [relation] if relation is not None else []
        reads += [value for kind, value in modifiers if kind in ("slot", "count")]  # type: ignore[misc]  # slot and count values are indices
        reads += [head_slot] if head_slot is not None else []
        # Attribute placeholders alone («все ли кубы [<M2>|мн]», «не [<C2>|род] цвета») say the adjectives only.
        adjectives_only = head_slot is None and head_noun is None and all(kind == "slot" for kind, _ in modifiers)
        return NounPhrase(relation, tuple(modifiers), head_slot, head_noun, group.case or "nomn", group.number or "sing", tuple(reads),
                          adjectives_only)

    def agreement(self, group: Group, phrase_of: Mapping[str, NounPhrase], after_preposition: bool = False) -> Agreement | None:
        """The group that agrees with another phrase; ``after_preposition``: it stands after a
        preposition of the text, so its pronoun takes the н-form (:func:`after_preposition`)."""
        before = len(self.problems)
        relation, tokens = self.split_relation(group)
        reference = group.reference or ""
        if reference not in self.kinds:
            self.unknown(f"{group.where()}: ", reference)
        elif reference not in phrase_of:
            self.problems.append(
                f"{group.where()}: {reference} is not in any noun phrase group of this template, so there is nothing to agree with"
            )
        words: list[tuple[str, str | int]] = []
        for token in tokens:
            if isinstance(token, Placeholder):
                if self.kinds.get(token.name) in _MODIFIER_KINDS:  # its adjective: «был [<M2>|твор,<S>]» металлическим
                    words.append(("slot", self.index[token.name]))
                    continue
                self.problems.append(
                    f"{group.where()}: {token.name} cannot be in a group that agrees with {reference}; make it a noun phrase of its own"
                )
                continue
            role = word_role(token.text, self.lexicon)
            if role in ("adjective", "pronoun", "verb"):
                words.append((role, token.text))
            elif role == "invariable":
                words.append(("fixed", token.text))
            else:
                self.problems.append(
                    f"{group.where()}: {token.text!r} cannot agree with {reference}: use an adjective or participle in the "
                    "masculine nominative singular (который, сделанный), the pronoun он, or a past-tense verb (был)"
                )
        if group.short and (group.case is not None or relation is not None):
            self.problems.append(f"{group.where()}: short forms (кратк) have no case")
        if group.short and any(kind == "pronoun" for kind, _ in words):
            self.problems.append(f"{group.where()}: a pronoun has no short form")
        if any(kind == "verb" for kind, _ in words) and (group.case is not None or group.short or len(words) > 1):
            self.problems.append(f"{group.where()}: a verb agrees alone, in a group of its own with no case or short form")
        if group.number is not None:
            self.problems.append(f"{group.where()}: the number comes from the noun phrase of {reference}; remove the number feature")
        if len(self.problems) > before:
            return None
        phrase = phrase_of[reference]
        reads = ([relation] if relation is not None else []) + [
            i for i in phrase.reads if i == phrase.head_slot or ("count", i) in phrase.modifiers
        ] + [int(slot) for kind, slot in words if kind == "slot"]
        return Agreement(relation, tuple(words), phrase, group.case or "nomn", group.short, tuple(reads), after_preposition)


# Words that govern the noun phrase after them (case, number), and words that may stand between.
_QUANTITY_GOVERNMENT = {
    **dict.fromkeys(("сколько", "столько", "несколько", "много", "мало", "пять", "шесть", "семь", "восемь", "девять", "десять"),
                    ("gent", "plur")),
    **dict.fromkeys(("два", "две", "три", "четыре", "оба", "обе"), ("gent", "sing")),
}
_QUANTITY_FILLERS = frozenset({"всего", "ещё", "еще", "же", "ли"})
_QUANTIFIERS = frozenset({"сколько", "столько", "несколько", "много", "мало"})
_COORDINATION = re.compile(r"\s+(?:и|или)\s+")


def _phrase_numbers(template: Template) -> dict[str, str]:
    """Placeholder -> the number of the first noun phrase group it is in (what [он|<S>] agrees with)."""
    numbers: dict[str, str] = {}
    for part in template.parts:
        if isinstance(part, Group) and not part.reference:
            for token in part.tokens:
                if isinstance(token, Placeholder):
                    numbers.setdefault(token.name, part.number or "sing")
    return numbers
_ANY_CASE_WORD = re.compile(WORD.pattern, re.IGNORECASE)
_LAST_WORD = re.compile(r"(?:^|[^\w-])(\w+(?:-\w+)*)\s+$")


def after_preposition(parts: Sequence[object]) -> bool:
    """Whether a group after ``parts`` stands after a preposition: the text right before it ends
    with one («чем за [он|<S>,твор]» -> за ним), or it is joined by «и»/«или» to a group that does
    («между [<S2>|твор] и [он|<S>,твор]» -> между кубом и ней)."""
    text = parts[-1] if parts else None
    if not isinstance(text, str):
        return False
    word = _LAST_WORD.search(text)
    if word is not None and takes_n_form(word.group(1)):
        return True
    group = parts[-2] if len(parts) > 1 else None
    if text.strip() not in ("и", "или") or not isinstance(group, (NounPhrase, Agreement)):
        return False
    return group.relation is not None or isinstance(group, Agreement) and group.after_preposition or after_preposition(parts[:-2])


def compile_template(text: str, kinds: Mapping[str, str], lexicon: Lexicon) -> tuple[CompiledTemplate | None, list[str]]:
    """Parse ``text`` and check it against the parameter kinds; the compiled template or the problems."""
    try:
        template = parse_template(text)
    except TemplateSyntaxError as error:
        return None, error.problems
    compiler = _Compiler(kinds, lexicon)
    compiled = compiler.compile(template)
    return compiled, compiler.problems


def validate_template(text: str, params: object) -> list[str]:
    """Problems of one Russian template for a family with parameters ``params`` (empty list: fine).

    ``params`` is the family's declaration (the engine's mapping name -> type, CLEVR's list of
    ``{"name", "type"}``, or the names). Each problem names the column and the group.
    """
    kinds, problems = parameter_kinds(params)
    if problems:
        return problems
    try:
        return compile_template(text, kinds, build_lexicon(load_vocabulary()))[1]
    except MorphologyError as error:
        return [str(error)]
