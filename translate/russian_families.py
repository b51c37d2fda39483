"""Families compiled for the native realiser: Russian templates, and where each admits other readings.

The question engine's loader (:mod:`questions.families`) reads and validates the family files;
each family's Russian texts are compiled here (:mod:`translate.templates`) into a
:class:`RussianFamily`, with the sites of each template where the reading check
(:mod:`questions.readings`) has something to look at. :mod:`translate.native` realises them.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from questions import Family, FamilyError, Sources, Structure, plainly_said_kinds, structure_of
from questions import load_families as load_engine_families
from ruclevr.cli import UsageError
from russian.morphology import Lexicon
from translate.templates import (
    Agreement,
    CompiledTemplate,
    NounPhrase,
    compile_template,
    parameter_kinds,
    validate_template,
)


class TemplateError(UsageError, ValueError):
    """Bad family files or Russian templates; ``problems`` lists each with file, family, template index.

    A usage error, so ``python -m translate`` reports it in one line with exit status 2.
    """

    def __init__(self, problems: list[str]):
        self.problems = problems
        more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
        super().__init__(f"{problems[0]}{more}")


@dataclass(frozen=True)
class Site:
    """A noun phrase or an agreeing group of a template, as the reading check sees it."""

    part: int  # index into the template's parts
    phrase: str  # the phrase it names or stands for (its shape parameter)
    relation: str | None  # the relation parameter before it
    role: str  # "phrase", "pronoun" (он), "which" (который) or "other" (сделан, расположенный)
    chained: bool  # only spaces since the previous phrase: a relation here could describe that one too
    after_comma: bool = False  # only a comma since the previous phrase or group («… куб, позади которого …»)


@dataclass(frozen=True)
class Sites:
    """Where one template's text could admit another reading (see questions.readings)."""

    sites: tuple[Site, ...]
    phrase_parts: Mapping[str, NounPhrase]  # phrase name -> its noun phrase part
    heads: tuple[tuple[str, int | None, str | None, str, int | None], ...]  # per phrase: name, head slot, noun, number, count slot
    needs_agreement: bool  # pronouns, «который» or chained relations: readings depend on the words' gender and number
    fixed_readings: tuple[str, ...]  # readings admitted whatever the words («либо»; a same-attribute phrase without «другой»)
    droppable: tuple[str, ...]  # same-attribute phrases said with «другой»/«ещё», dropped where the anchor cannot be them
    # per phrase: (attribute kind, slot) of each of its words, for whether two descriptions fit one object
    phrase_slots: Mapping[str, tuple[tuple[str, int], ...]] = field(default_factory=dict)
    # phrases written after a relation: (relation, phrase, the other phrases said before it that it
    # may be read as: none where it says in full an object the only one so described in the scene)
    anchor_repeats: tuple[tuple[str, str, tuple[str, ...]], ...] = ()
    # phrases of a union, sum, comparison or swap joined by a bare «и»/«или» or «чем»: the first's
    # adjectives may reach the second
    coordinated: tuple[tuple[str, str], ...] = ()
    ordered: tuple[tuple[str, str], ...] = ()  # of those, the sides of a comparison or a swap: never swapped
    agreement_cache: dict = field(default_factory=dict, compare=False, repr=False)  # phrases' (gender, number) -> readings
    # phrases whose (last) part says every word of a description the only one so met in the whole
    # scene (``Structure.scene_unique``): said again, such a phrase fits no other object
    said_in_full: frozenset[str] = frozenset()


@dataclass(frozen=True)
class RussianFamily:
    family: str
    source: str
    kinds: Mapping[str, str]
    slots: tuple[str, ...]  # parameter names in declared order: the order of the random draws
    templates: tuple[CompiledTemplate, ...]  # empty when the family has no Russian text
    structure: Structure | None = None  # the program's phrases and other readings
    sites: tuple[Sites, ...] = ()  # per template
    answer_kind: str = ""  # the attribute the answer names, if any (its words are then the gold lemmas)
    lemma_only: tuple[bool, ...] = ()  # per slot: named by its lemma only (the answer's attribute, an edited material)
    # per slot: said right after «ещё» in some template, where «ещё большие» reads as «ещё бо́льшие» (even larger)
    after_still: tuple[bool, ...] = ()
    special: dict = field(default_factory=dict, compare=False, repr=False)  # templates with pronouns repeated or «другой» dropped

    same_kind: tuple[tuple[int, ...], ...] = ()  # slots of one attribute or relation kind, where a value may repeat

    def __post_init__(self) -> None:
        # lemma_only and after_still are compile_family's (its rules: the answer's attribute, an edited material).
        if not self.same_kind:
            kinds = list(self.kinds.values())
            groups = [tuple(i for i, k in enumerate(kinds) if k == kind) for kind in dict.fromkeys(kinds) if kind != "integer"]
            object.__setattr__(self, "same_kind", tuple(group for group in groups if len(group) > 1))
        # A value said again takes the word said first: every slot of a marked slot's kind avoids what it avoids.
        marked = set(i for i, flag in enumerate(self.after_still) if flag)
        marked |= {slot for group in self.same_kind if marked & set(group) for slot in group}
        object.__setattr__(self, "after_still", tuple(i in marked for i in range(len(self.kinds))))


def compile_family(family: Family, lexicon: Lexicon) -> tuple[RussianFamily, list[str]]:
    """Compile one engine family's Russian texts; problems are prefixed with file, family and template index."""
    kinds, declaration = parameter_kinds(family.params)
    problems = [f"{family.source}: family {family.id}: {p}" for p in declaration]
    templates = []
    for index, text in enumerate(family.text.get("ru", ())):
        compiled, template_problems = compile_template(text, kinds, lexicon)
        problems += [f"{family.source}: family {family.id}: ru template {index}: {p}" for p in template_problems]
        if compiled is not None:
            templates.append(compiled)
    structure = structure_of(family)
    slots = tuple(kinds)
    sites = tuple(template_sites(template, slots, structure, tuple(kinds.values())) for template in templates)
    answer = family.answer_type if family.answer_type in kinds.values() else ""
    after_still = slots_after_still(templates, len(slots))
    plain = plainly_said_kinds(family.program)
    lemma_only = tuple(kind == answer or kind in plain for kind in kinds.values())
    return RussianFamily(family.id, family.source, MappingProxyType(kinds), slots, tuple(templates), structure, sites, answer,
                         lemma_only=lemma_only, after_still=after_still), problems


STILL_WORDS = frozenset({"ещё", "еще"})
#: Words a slot said right after «ещё» never takes: plural «большие/больших/…» are spelt like the comparative
#: «бо́льшие» (larger), so «Есть ли ещё большие предметы …?» also reads «even larger things» (issue 26, round 5).
NOT_AFTER_STILL = frozenset({"большой"})


def slots_after_still(templates: Iterable[CompiledTemplate], count: int) -> tuple[bool, ...]:
    """Per slot: whether some template says it as the first word after a fixed «ещё»."""
    marked = [False] * count
    for template in templates:
        for part in template.parts:
            modifiers = getattr(part, "modifiers", ())
            for before, after in zip(modifiers, modifiers[1:], strict=False):
                if before[0] == "fixed" and before[1] in STILL_WORDS and after[0] == "slot":
                    marked[after[1]] = True
    return tuple(marked)


def words_after_still(words: tuple[str, ...]) -> tuple[str, ...]:
    """``words`` less those that read otherwise after «ещё» (all of them if nothing would be left)."""
    kept = tuple(word for word in words if word not in NOT_AFTER_STILL)
    return kept or words


def slot_word_tables(family: RussianFamily, words: Mapping[str, Mapping[object, tuple[str, ...]]]) -> tuple[dict, ...]:
    """Per slot of ``family``: value -> the Russian words it may take (``words``: per kind, first = lemma).
    The answer's attribute is named by its lemma only; a slot said after «ещё» never takes «большой»."""
    return tuple(
        {value: options[:1] for value, options in words[kind].items()} if lemma_only
        else {value: words_after_still(options) for value, options in words[kind].items()} if after_still else dict(words[kind])
        for kind, lemma_only, after_still in zip(family.kinds.values(), family.lemma_only, family.after_still, strict=True)
    )


def load_families(directory: Sources, lexicon: Lexicon) -> tuple[dict[str, RussianFamily], dict[tuple[str, int], str]]:
    """Every family of ``directory`` (a folder, or :class:`questions.family_sources.FamilySources`) by id, and CLEVR's (template_filename, question_family_index) -> id.

    The files are read and validated by the question engine's loader, given the Russian checker
    (the rules this module compiles templates with); any problem raises TemplateError listing
    each one with its file and line.
    """
    try:
        engine_families = load_engine_families(directory, {"ru": validate_template})
    except FamilyError as error:
        raise TemplateError([str(problem) for problem in error.problems]) from None
    return compile_families(engine_families.values(), lexicon)


def compile_families(
    engine_families: Iterable[Family], lexicon: Lexicon
) -> tuple[dict[str, RussianFamily], dict[tuple[str, int], str]]:
    """Compile families the engine has built (read by :func:`load_families`, or made by a test)."""
    families: dict[str, RussianFamily] = {}
    by_position: dict[tuple[str, int], str] = {}
    problems: list[str] = []
    for family in engine_families:
        compiled, family_problems = compile_family(family, lexicon)
        problems += family_problems
        families[family.id] = compiled
        by_position[(family.source, family.position)] = family.id
    if problems:
        raise TemplateError(problems)
    return families, by_position


OTHER_WORDS = frozenset({"другой", "ещё", "еще"})


# Words that say a sum counts each set on its own («сумма», «прибавить»): one object may count twice.
SUM_WORDS = ("сумм", "прибав", "плюс", "сложи")
_COORDINATORS = frozenset({"и", "или"})
# The link of a comparison: «крупных кубов больше, чем шаров» (large spheres?); not «чем всего …»,
# «чем количество …», which say the second set in full.
_THAN = re.compile(r"(?:^|[\s,])чем$")


def _joins(gap: str) -> bool:
    """Whether the text between two phrases joins them so that the first one's adjectives may reach
    the second: a bare «и»/«или», or «чем» of a comparison."""
    return gap.strip() in _COORDINATORS or bool(_THAN.search(gap.strip()))


def template_sites(
    template: CompiledTemplate, slots: tuple[str, ...], structure: Structure | None, slot_kinds: tuple[str, ...] = ()
) -> Sites:
    """The phrases and agreeing groups of ``template`` in text order, for the reading check."""
    sites: list[Site] = []
    marked: set[str] = set()
    coordinated: list[tuple[str, str]] = []
    ordered: list[tuple[str, str]] = []
    gap = ""
    for index, part in enumerate(template.parts):
        if type(part) is str:
            gap += part
            continue
        if type(part) is NounPhrase:
            phrase = slots[part.head_slot] if part.head_slot is not None else f"#{index}"
            relation = slots[part.relation] if part.relation is not None else None
            before = sites[-1] if sites else None
            if before is not None and before.relation is not None and before.chained and len(sites) > 1:
                before = sites[-2]  # the phrase its relation group locates: «красных кубов [слева от шара], чем цилиндров»
            if (before is not None and before.role == "phrase" and before.relation is None and relation is None
                    and _joins(gap) and structure is not None
                    and {(before.phrase, phrase), (phrase, before.phrase)} & set(structure.coordinated)):
                coordinated.append((before.phrase, phrase))
                if {(before.phrase, phrase), (phrase, before.phrase)} & set(structure.ordered):
                    ordered.append((before.phrase, phrase))
            sites.append(Site(index, phrase, relation, "phrase", bool(sites) and not gap.strip()))
            if any(value in OTHER_WORDS for _, value in part.modifiers) or "кроме" in gap:
                marked.add(phrase)
        elif type(part) is Agreement:
            head = part.phrase
            phrase = slots[head.head_slot] if head.head_slot is not None else "#"
            relation = slots[part.relation] if part.relation is not None else None
            kinds = {kind for kind, _ in part.words}
            role = "pronoun" if "pronoun" in kinds else "which" if any(word == "который" for _, word in part.words) else "other"
            sites.append(Site(index, phrase, relation, role, bool(sites) and not gap.strip(), bool(sites) and gap.strip() == ","))
        gap = ""
    phrase_parts = {site.phrase: template.parts[site.part] for site in sites if site.role == "phrase"}
    heads = tuple(
        (name, part.head_slot, part.head_noun, part.number, next((v for k, v in part.modifiers if k == "count"), None))  # type: ignore[union-attr]  # a "phrase" site always points at a NounPhrase part
        for name, part in phrase_parts.items()
    )
    needs_agreement = any(site.role in ("pronoun", "which") or (site.relation is not None and site.chained) for site in sites)
    fixed: list[str] = []
    droppable: list[str] = []
    if structure is not None:
        if "либо" in template.text:
            fixed += [f"exclusive:{node}" for node in structure.unions]
        for phrase in structure.same_anchor:
            (droppable if phrase in marked else fixed).append(phrase if phrase in marked else f"self:{phrase}")
        if not any(word in template.text.lower() for word in SUM_WORDS):
            fixed += [f"union:{node}" for node in structure.sums]
    phrase_slots = {
        name: tuple((slot_kinds[v], v) for k, v in part.modifiers if k == "slot")  # type: ignore[union-attr]  # phrase parts
        + (((slot_kinds[part.head_slot], part.head_slot),) if part.head_slot is not None else ())  # type: ignore[union-attr]
        for name, part in phrase_parts.items()
    } if slot_kinds else {}
    in_full = {site.part for site in sites if site.role == "phrase" and says_in_full(template.parts[site.part], slots, structure, site.phrase)}
    anchor_repeats = tuple(
        (site.relation, site.phrase, () if site.part in in_full else
         tuple(dict.fromkeys(s.phrase for s in sites[:position] if s.phrase != site.phrase)))
        for position, site in enumerate(sites) if site.role == "phrase" and site.relation is not None
    )
    said_in_full = frozenset(name for name, part in phrase_parts.items() if says_in_full(part, slots, structure, name))
    return Sites(tuple(sites), MappingProxyType(phrase_parts), heads, needs_agreement, tuple(fixed), tuple(droppable),  # type: ignore[arg-type]  # phrase sites hold NounPhrase parts
                 MappingProxyType(phrase_slots), anchor_repeats, tuple(coordinated), ordered=tuple(ordered), said_in_full=said_in_full)


def says_in_full(part: object, slots: tuple[str, ...], structure: Structure | None, phrase: str) -> bool:
    """Whether noun phrase ``part`` says every word of ``phrase``'s description, the only object so
    described in the whole scene (``Structure.scene_unique``): «(этого) резинового цилиндра» after
    «Посмотри на резиновый цилиндр» can be no other object, whatever words the others were said with."""
    if structure is None or phrase not in structure.scene_unique or type(part) is not NounPhrase:
        return False
    said = {slots[value] for kind, value in part.modifiers if kind == "slot"}
    if part.head_slot is not None:
        said.add(slots[part.head_slot])
    return set(structure.scene_unique[phrase]) <= said


def agreeing_readings(
    sites: Sites, structure: Structure, features: tuple[tuple[str, str], ...]
) -> tuple[list[str], tuple[int, ...], list[tuple[Site, list[str]]]]:
    """For phrases of these (gender, number): the readings «который» and chained relation phrases
    admit, the pronouns to repeat as their phrase, and for each of those the phrases said before it."""
    by_name = {head[0]: feature for head, feature in zip(sites.heads, features, strict=True)}
    readings: list[str] = []
    repeat: list[int] = []
    repeated: list[tuple[Site, list[str]]] = []
    said: list[tuple[str, tuple[str, str]]] = []  # earlier phrases: (name, (gender, number))
    chain: list[str] = []
    previous: Site | None = None  # the site before
    for site in sites.sites:
        agreement = by_name.get(site.phrase)
        if agreement is None:
            continue
        if not site.chained:
            chain = []
        if site.relation is not None and site.chained:
            target = structure.relation_target.get(site.relation)
            readings += [f"attach:{site.relation}:{name}" for name in chain if name != target]
        if site.role == "pronoun":
            # «другой объект слева от него»: a pronoun right after the phrase its relation describes
            # cannot stand for that phrase.
            head = chain[-1] if site.chained and chain and chain[-1] == structure.relation_target.get(site.relation or "") else None
            if [name for name, other in said if other == agreement and name != head] != [site.phrase]:
                repeat.append(site.part)
                repeated.append((site, [name for name, _ in said]))
        elif site.role == "which":
            others = [name for name, other in said if other == agreement and name != site.phrase]
            if site.after_comma and previous is not None and previous.phrase == site.phrase and previous.role == "phrase" \
                    and previous.relation is None and not previous.chained:
                # «Перед цилиндром стоит куб, позади которого …»: «который» right after its own noun
                # and a comma, that noun in no larger phrase (not «цилиндр справа от куба, который»),
                # takes that noun, whatever agrees before it.
                others = []
            if site.relation is not None:
                readings += [f"anchor:{site.relation}:{name}" for name in others]
            else:
                relations = [r for r, target in structure.relation_target.items() if target == site.phrase]
                readings += [f"attach:{r}:{name}" for r in relations for name in others]
        if site.role == "phrase":
            said.append((site.phrase, agreement))
        chain.append(site.phrase)
        previous = site
    return readings, tuple(repeat), repeated


# -- what the words chosen say about two phrases (the realiser's reading check) -----------------


def described(generic: frozenset[str], sites: Sites, words: Sequence[str], phrase: str) -> dict[str, str]:
    """Attribute kind -> the word a phrase says for it (none for a bare «предмет»)."""
    return {kind: words[slot] for kind, slot in sites.phrase_slots.get(phrase, ()) if words[slot] and words[slot] not in generic}


def phrase_fits(generic: frozenset[str], sites: Sites, words: Sequence[str], phrase: str, other: str) -> bool:
    """Whether ``phrase`` could be read as ``other``, said before it, said again: the same, a
    wider form, or a narrower form of a phrase that names something (``questions.text.fits``)."""
    mine, theirs = described(generic, sites, words, phrase), described(generic, sites, words, other)
    return mine.items() <= theirs.items() or bool(theirs) and theirs.items() <= mine.items()


def repeat_fits(generic: frozenset[str], sites: Sites, structure: Structure, words: Sequence[str], site: Site, earlier: Sequence[str]) -> list[str]:
    """The phrases said before a pronoun that its phrase, said in its place (``site``), could be read
    as: those it fits, and after a relation those whose object the relation could be taken from; none
    where it says in full the only object so described in the scene (``Sites.said_in_full``)."""
    if site.phrase in sites.said_in_full:
        return []
    return [name for name in earlier if name != site.phrase and phrase_fits(generic, sites, words, site.phrase, name)
            and (site.relation is None or f"anchor:{site.relation}:{name}" in structure.readings)]


def said_apart_in(generic: frozenset[str], sites: Sites, words: Sequence[str], phrase: str, anchor: str) -> bool:
    """Whether the words alone keep the anchor out of ``phrase``: an attribute both name
    differently («зелёные предметы … как синий кубик»); only then is «другой» left unsaid."""
    mine, theirs = described(generic, sites, words, phrase), described(generic, sites, words, anchor)
    return any(mine[kind] != theirs[kind] for kind in mine.keys() & theirs.keys())


def has_attributes(sites: Sites, words: Sequence[str], phrase: str) -> bool:
    return any(words[slot] for kind, slot in sites.phrase_slots.get(phrase, ()) if kind != "shape")


def other_parts(generic: frozenset[str], sites: Sites, structure: Structure, words: Sequence[str], unsafe: Sequence[str] | None) -> tuple[int, ...]:
    """The parts of phrases found by a relation that a reader could take for an earlier object said
    again, to be said with «другой»: a phrase that fits an earlier one, where every earlier phrase
    it fits is another object: its own anchor (never the same object: «Левее красного предмета находится
    другой предмет»), or one the question's ``same:<P>:<Q>`` reading sets apart on its scene. A bare
    noun right before the relation that finds it is a new search, never an object said again: no
    «другой» («Какого цвета предмет слева от этого зелёного предмета?»)."""
    found: list[int] = []
    said: list[str] = []
    recorded = set(unsafe or ())
    found_by_relation = set(structure.relation_target.values())
    searched = {before.phrase for before, after in itertools.pairwise(sites.sites)
                if after.chained and after.relation is not None and structure.relation_target.get(after.relation) == before.phrase}
    for site in sites.sites:
        if site.role != "phrase":
            continue
        phrase = site.phrase
        part = sites.phrase_parts.get(phrase)
        if phrase in searched and not described(generic, sites, words, phrase):
            pass
        elif said and part is not None and phrase in found_by_relation and not any(value in OTHER_WORDS for _, value in part.modifiers):
            own = {structure.relation_anchor.get(r) for r, target in structure.relation_target.items() if target == phrase}
            fitted = [earlier for earlier in said if earlier != phrase and phrase_fits(generic, sites, words, phrase, earlier)]
            if fitted and all(earlier in own or f"same:{phrase}:{earlier}" in recorded for earlier in fitted):
                found.append(site.part)
        said.append(phrase)
    return tuple(found)


def phrase_readings(generic: frozenset[str], sites: Sites, words: Sequence[str], unsafe: Sequence[str]) -> list[str]:
    """Unsafe readings the written phrases admit: a phrase after a relation that an object said
    before it also fits (``anchor``), and adjectives of a phrase reaching a bare noun joined to
    it by «и»/«или» or compared to it after «чем» (``distribute``)."""
    found = []
    for relation, phrase, earlier in sites.anchor_repeats:
        found += [reading for name in earlier
                  if (reading := f"anchor:{relation}:{name}") in unsafe and phrase_fits(generic, sites, words, phrase, name)]
    for first, second in sites.coordinated:
        reading = f"distribute:{first}:{second}"
        if reading in unsafe and has_attributes(sites, words, first) and not has_attributes(sites, words, second):
            found.append(reading)
    return found


def said_with_other(sites: Sites, added: tuple[int, ...]) -> frozenset[str]:
    """The phrases said with «другой»/«ещё»: in the template, or added (``other_parts``)."""
    return frozenset(site.phrase for site in sites.sites if site.role == "phrase" and (
        site.part in added or any(value in OTHER_WORDS for _, value in sites.phrase_parts[site.phrase].modifiers)))


def same_object_parts(generic: frozenset[str], sites: Sites, structure: Structure, words: Sequence[str]) -> tuple[int, ...]:
    """The parts of scene-wide phrases that say an earlier one's very words again: the same object
    (both pick out the only object so described), said with «этот» («Совпадает ли размер
    коричневого предмета с размером предмета слева от этого коричневого предмета?»)."""
    found: list[int] = []
    said: list[tuple[str, NounPhrase]] = []
    derived = set(structure.relation_target.values()) | set(structure.same_anchor)
    for site in sites.sites:
        part = sites.phrase_parts.get(site.phrase)
        if site.role != "phrase" or part is None:
            continue
        phrase = structure.phrases.get(site.phrase)
        if phrase is not None and phrase.unique is not None and site.phrase not in derived:
            mine = described(generic, sites, words, site.phrase)
            if mine and any(described(generic, sites, words, name) == mine and _noun(other, words) == _noun(part, words)
                            for name, other in said):
                found.append(site.part)
            said.append((site.phrase, part))
    return tuple(found)


def _noun(part: NounPhrase, words: Sequence[str]) -> str | None:
    return words[part.head_slot] if part.head_slot is not None else part.head_noun
