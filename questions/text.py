"""English question text: the template syntax of family files and its realisation.

English templates use three pieces of syntax (other languages' texts are opaque to this module
apart from their ``<NAME>`` placeholders, which belong to the realiser of that language):

- ``<NAME>`` — a parameter's value, with a synonym chosen from the vocabulary; an empty size,
  colour or material vanishes, an empty shape reads as the generic object noun ("thing"/"object");
- ``<NAME>s`` — the plural of a shape parameter ("cubes", "things");
- ``[words]`` — optional words, kept or dropped at random (no placeholders inside, no nesting).

Spacing, "a"/"an" and the capital letter are fixed after substitution.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

from assets.placeholders import ANGLE_TOKEN, PLACEHOLDER, did_you_mean, is_placeholder, placeholders
from assets.vocabulary import Vocabulary
from questions.functions import RELATION
from questions.random_stream import RandomStream

#: An optional part ``[...]`` (group 1), or a placeholder (group 2) with an optional plural ``s`` (group 3).
_ENGLISH_TOKEN = re.compile(r"\[([^\[\]]*)\]|" + PLACEHOLDER.pattern + r"(s\b)?")
_SPACE = re.compile(r"\s+")
_SPACE_BEFORE_PUNCTUATION = re.compile(r"\s+([?,;.!])")
_ARTICLE = re.compile(r"\b([Aa]) (?=[aeiouAEIOU])")
_NOT_WORD = re.compile(r"[^\w\s]")

#: Probability of keeping an optional ``[...]`` part.
OPTIONAL_KEEP = 0.5


def english_template_problems(text: str, param_types: Mapping[str, str]) -> list[str]:
    """What is wrong with one English template, given the family's parameters (name -> type)."""
    problems = _bracket_problems(text)
    for token in ANGLE_TOKEN.findall(text):
        if not is_placeholder(token):
            problems.append(f"malformed placeholder {token!r}; write <NAME> with capitals and digits")
    for optional in re.findall(r"\[([^\[\]]*)\]", text):
        if PLACEHOLDER.search(optional):
            problems.append(f"optional part [{optional}] holds a placeholder; parameters must always be said")
    used = placeholders(text)
    for name in dict.fromkeys(used):
        if name not in param_types:
            problems.append(f"placeholder {name} names no declared parameter{did_you_mean(name, param_types)}")
    for name in param_types:
        if name not in used:
            problems.append(f"parameter {name} is never said in this text")
    for match in _ENGLISH_TOKEN.finditer(text):
        name, plural = match.group(2), match.group(3)
        if plural and param_types.get(f"<{name}>", "shape") != "shape":
            problems.append(f"<{name}>s: only shape parameters have a plural")
    return problems


def other_language_problems(text: str, param_types: Mapping[str, str]) -> list[str]:
    """Another language's template is opaque except for its ``<NAME>`` tokens, which must be declared."""
    return [
        f"placeholder {name} names no declared parameter{did_you_mean(name, param_types)}"
        for name in dict.fromkeys(placeholders(text))
        if name not in param_types
    ]


def _bracket_problems(text: str) -> list[str]:
    depth = 0
    for character in text:
        if character == "[":
            depth += 1
            if depth > 1:
                return ["nested [ ]: optional parts cannot contain optional parts"]
        elif character == "]":
            depth -= 1
            if depth < 0:
                return ["']' without a matching '['"]
    return ["'[' without a matching ']'"] if depth else []


@cache
def compile_english(text: str) -> tuple[tuple[str, str, bool], ...]:
    """Split a template into parts: ("text", words, _), ("optional", words, _), ("param", name, plural)."""
    parts: list[tuple[str, str, bool]] = []
    position = 0
    for match in _ENGLISH_TOKEN.finditer(text):
        if match.start() > position:
            parts.append(("text", text[position : match.start()], False))
        if match.group(1) is not None:
            parts.append(("optional", match.group(1), False))
        else:
            parts.append(("param", f"<{match.group(2)}>", bool(match.group(3))))
        position = match.end()
    if position < len(text):
        parts.append(("text", text[position:], False))
    return tuple(parts)


def realise_english(
    template: str,
    values: Mapping[str, str],
    param_types: Mapping[str, str],
    vocabulary: Vocabulary,
    stream: RandomStream,
    structure: Any = None,
    readings: list[str] | None = None,
    plain: frozenset[str] = frozenset(),
) -> str:
    """The question text: placeholders filled with vocabulary synonyms, optional parts drawn from ``stream``;
    the attribute kinds in ``plain`` take their plain word only (:func:`questions.hypothetical.plainly_said_kinds`).

    One word per value: a value said twice is said with the same word. With the family's
    ``structure`` (:func:`questions.readings.structure_of`), "it" after a relation stays only
    where exactly one earlier singular noun phrase could be meant; elsewhere the phrase it
    stands for is repeated, and where that repeated phrase reads like another earlier one, the
    other reading is appended to ``readings``.
    """
    words: list[str] = []
    chosen: dict[tuple[str, str], str] = {}
    said: list[tuple[str, bool, str]] = []  # noun phrases so far: (shape parameter, plural, words)
    described: dict[str, dict[str, str]] = {}  # shape parameter -> its phrase's attribute type -> value
    in_full: set[str] = set()  # phrases last said with every word of a scene-unique description (no other fits them)
    current: list[str] = []  # words of the noun phrase being said
    current_values: dict[str, str] = {}
    current_params: set[str] = set()  # the parameters of the noun phrase being said
    relation: str | None = None  # a relation just said, waiting for its noun or "it"
    before_phrase: str | None = None  # the relation said before the phrase being said
    link = ""  # the text since the last noun phrase
    for kind, content, plural in compile_english(template):
        if kind == "text":
            if relation is not None and structure is not None and _IT.match(content):
                content = _pronoun_or_phrase(content, relation, said, structure, readings, described, in_full)
                before_phrase = None
            if content.strip():
                current, current_values, current_params, relation = [], {}, set(), None
            link += content
            words.append(content)
        elif kind == "optional":
            if stream.random() < OPTIONAL_KEEP:
                words.append(content)
        else:
            param_type, value = param_types[content], values.get(content, "")
            key = (param_type, value)
            word = chosen.get(key)
            if word is None:
                word = chosen[key] = _phrase(param_type, value, vocabulary, stream, param_type in plain)
            if param_type == "shape":
                english = vocabulary.value("shape", value).en if value else vocabulary.object_noun["en"]
                current_values["shape"] = value
                full = structure is not None and says_in_full(structure, content, current_params | {content})
                if readings is not None and structure is not None:
                    readings += _phrase_readings(content, before_phrase, link, said, described, current_values, full)
                said.append((content, plural, " ".join(w for w in [*current, word] if w)))
                described[content] = current_values
                if full:
                    in_full.add(content)
                else:
                    in_full.discard(content)
                word = _plural(word, english) if plural else word
                current, current_values, current_params, relation, before_phrase, link = [], {}, set(), None, None, ""
            elif param_type == RELATION:
                relation = before_phrase = content
            else:
                current.append(word)
                current_values[param_type] = value
                current_params.add(content)
            words.append(word)
    return tidy_english("".join(words))


_IT = re.compile(r"(\s*)it\b")


def _pronoun_or_phrase(
    content: str, relation: str, said: list[tuple[str, bool, str]], structure: Any, readings: list[str] | None,
    described: Mapping[str, Mapping[str, str]], in_full: set[str] | frozenset[str] = frozenset(),
) -> str:
    """``content`` (starting with "it") as written, or with "it" replaced by the phrase it stands for
    (which no other object fits where it says in full a scene-unique description: ``in_full``)."""
    anchor = structure.relation_anchor.get(relation)
    singular = [name for name, plural, _ in said if not plural]
    phrase = next((text for name, _, text in said if name == anchor), None)
    if anchor is None or phrase is None or singular == [anchor]:
        return content
    names = [name for name, _, _ in said]
    alike = [name for name in names if name != anchor and f"anchor:{relation}:{name}" in structure.readings
             and fits(described.get(anchor, {}), described.get(name, {})) and anchor not in in_full]
    if alike and names.index(anchor) > max(map(names.index, alike)):
        # The last phrase said that fits: "that thing" cannot be read as an earlier one.
        return _IT.sub(lambda match: f"{match.group(1)}that {phrase}", content, count=1)
    if readings is not None:
        readings += [f"anchor:{relation}:{name}" for name in alike]
    return _IT.sub(lambda match: f"{match.group(1)}the {phrase}", content, count=1)


_COORDINATION = re.compile(r"^\s*(?:and|or)\s+(?:the\s+)?$")
# The link of a comparison: "more large cubes [are there] than spheres" (large spheres?); not "than
# there are spheres" nor "than the number of spheres", which say the second set in full.
_THAN = re.compile(r"^\s*(?:are\s+there\s+)?than\s+$")


def _phrase_readings(
    name: str, relation: str | None, link: str, said: list[tuple[str, bool, str]],
    described: Mapping[str, Mapping[str, str]], values: Mapping[str, str], in_full: bool = False,
) -> list[str]:
    """Readings a phrase just said admits: after a relation, an object said before it that fits
    it too (``anchor``), unless the phrase says in full a scene-unique description (``in_full``); a bare noun joined by "and"/"or" or compared by "than" to a phrase with
    attributes, which may reach it (``distribute``: "yellow spheres and cubes", "more large cubes
    than spheres")."""
    found: list[str] = []
    if relation is not None:
        found += [f"anchor:{relation}:{other}" for other, _, _ in said if other != name and fits(values, described[other]) and not in_full]
    elif said and (_COORDINATION.match(link) or _THAN.match(link)) and not _has_attributes(values) and _has_attributes(described[said[-1][0]]):
        found.append(f"distribute:{said[-1][0]}:{name}")
    return found


def says_in_full(structure: Any, name: str, said: set[str]) -> bool:
    """Whether a phrase said with the parameters ``said`` says every word of ``name``'s description,
    the only object so described in the whole scene (``Structure.scene_unique``): "the rubber cylinder"
    said again can be no other object, whatever words the others were said with."""
    wanted = getattr(structure, "scene_unique", {}).get(name)
    return wanted is not None and set(wanted) <= said


def _has_attributes(values: Mapping[str, str]) -> bool:
    return any(value for kind, value in values.items() if kind != "shape")


def fits(values: Mapping[str, str], earlier: Mapping[str, str]) -> bool:
    """Whether a description (attribute type -> value, "" for none) could be read as an earlier
    one said again: the same or a wider form of it (the earlier object fits it: «крупный
    предмет» after «крупный серый предмет»), or a narrower form of an earlier description that
    names something («крупный серый предмет» after «крупный предмет»); not «красный куб» after
    «металлический куб», nor anything after a bare «предмет»."""
    mine = {kind: value for kind, value in values.items() if value}
    theirs = {kind: value for kind, value in earlier.items() if value}
    return mine.items() <= theirs.items() or bool(theirs) and theirs.items() <= mine.items()


def _phrase(param_type: str, value: str, vocabulary: Vocabulary, stream: RandomStream, plain: bool = False) -> str:
    """A word for one value (a shape's singular noun; a relation's phrase; "" for an empty attribute;
    with ``plain``, an attribute's own word, not a synonym)."""
    if param_type == RELATION:
        english = vocabulary.relation(value)["en"]
        return stream.choice(_synonyms(english, "word"))
    if param_type == "shape":
        english = vocabulary.value("shape", value).en if value else vocabulary.object_noun["en"]
        return stream.choice(_synonyms(english, "noun"))
    if not value:
        return ""
    english = vocabulary.value(param_type, value).en
    return str(english["word"]) if plain else stream.choice(_synonyms(english, "word"))


def _synonyms(english: Mapping[str, Any], main_key: str) -> Sequence[str]:
    synonyms = english.get("synonyms")
    if synonyms:
        return list(synonyms)
    return [str(english[main_key])]


def _plural(word: str, english: Mapping[str, object]) -> str:
    # The vocabulary gives the plural of the main noun; its synonyms (block, ball, object) are regular.
    if word == english.get("noun") and english.get("plural"):
        return str(english["plural"])
    return word + "s"


def tidy_english(text: str) -> str:
    """Collapse spaces left by empty parameters, fix "a"/"an", capitalise the first letter."""
    text = _SPACE.sub(" ", text).strip()
    text = _SPACE_BEFORE_PUNCTUATION.sub(r"\1", text)
    text = _ARTICLE.sub(lambda match: match.group(1) + "n ", text)
    text = _SENTENCE_START.sub(lambda match: match.group(0).upper(), text)  # "…thing. Behind it …"
    return text[:1].upper() + text[1:]


_SENTENCE_START = re.compile(r"(?<=[.!?] )[a-z]")


def normalise_text(text: str) -> str:
    """The form used to find duplicate questions: lower case, no punctuation, single spaces."""
    return _SPACE.sub(" ", _NOT_WORD.sub(" ", text.lower())).strip()


# -- other readings of an English text (see questions.readings) ---------------------------------

_CHAIN_LINK = re.compile(r"^\s*(?:that\s+(?:is|are)\s+|are\s+|is\s+)?(?:the\s+)?$")
_OTHER = re.compile(r"\b(?:an)?other\b", re.IGNORECASE)
_EXCLUSIVE_WORDS = re.compile(r"\beither\b", re.IGNORECASE)
# Words that say a sum counts each set on its own, so that one object may count twice.
_SUM_WORDS = re.compile(r"\b(?:plus|sum|add)\b", re.IGNORECASE)


def english_readings(template: str, param_types: Mapping[str, str], structure: Any) -> tuple[str, ...]:
    """The other readings (keys of :mod:`questions.readings`) an English template admits.

    A relation phrase in a chain ("the X [that is] left of the Y [that is] behind the Z") could
    describe any earlier noun of the chain; "either ... or" could be exclusive; a phrase drawn from a same-attribute set could name the
    anchor itself unless "other"/"another" is said. Optional parts count as said.
    """
    key = (template, id(structure))
    found = _READINGS_CACHE.get(key)
    if found is None:
        found = _READINGS_CACHE[key] = _english_readings(template, param_types, structure)
    return found


_READINGS_CACHE: dict[tuple[str, int], tuple[str, ...]] = {}


def _english_readings(template: str, types: Mapping[str, str], structure: Any) -> tuple[str, ...]:
    readings: list[str] = []
    chain: list[str] = []  # the nouns of the current chain of relation phrases
    link = ""  # the text since the last noun or relation
    text = "".join(
        f" {content} " if kind == "optional" else content if kind == "text" else f"\0{content}{'s' if plural else ''}\0"
        for kind, content, plural in compile_english(template)
    )
    for piece in text.split("\0"):
        name = piece[:-1] if piece.endswith("s") else piece  # a plural slot: <S>s
        if not is_placeholder(name):
            link += piece
            continue
        kind = types.get(name)
        if kind == RELATION:
            if not _CHAIN_LINK.match(link):
                chain = []
            target = structure.relation_target.get(name)
            readings += [f"attach:{name}:{phrase}" for phrase in chain if phrase != target]
            link = ""
        elif kind == "shape":
            if not _CHAIN_LINK.match(link):
                chain = []
            chain.append(name)
            link = ""
    if structure.unions and _EXCLUSIVE_WORDS.search(text):
        readings += [f"exclusive:{node}" for node in structure.unions]
    if not _OTHER.search(text):
        readings += [f"self:{phrase}" for phrase in structure.same_anchor]
    if not _SUM_WORDS.search(text):
        readings += [f"union:{node}" for node in structure.sums]
    return tuple(dict.fromkeys(readings))


@cache
def without_other(template: str) -> str:
    """The template without "other"/"another": for a phrase whose anchor cannot be what it describes."""
    return re.sub(r"\s+", " ", re.sub(r"\banother\b", "a", re.sub(r"\bother\s+", "", template)))
