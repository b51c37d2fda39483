"""The native backend: Russian questions realised from the family's Russian templates, offline.

A family file carries ``text: {en: [...], ru: [...]}``; the Russian texts use the syntax of
:mod:`translate.templates` (``[<Z> <C> <M> <S>|род,мн]``). For each question the realiser picks
one Russian template and one Russian synonym per parameter (seeded from ``seed`` and the
question's identity), builds each noun phrase with agreement through
:mod:`russian.morphology`, capitalises and ends with a question mark.

Templates are compiled once per family, and every problem is reported with file, family and
template index. Each compiled noun phrase caches its text by the few values it reads, so
realising a question is a handful of dictionary look-ups and one string join.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from operator import getitem, itemgetter
from types import MappingProxyType
from typing import Any, NamedTuple

import numpy as np

from assets.vocabulary import Vocabulary, load_vocabulary
from questions import FAMILIES_DIR, NO_TEMPLATE, UNSAFE_FIELD, Family, Sources, Structure, admitted, as_sources
from ruclevr import streams
from russian.morphology import Noun, agreeing_form, build_lexicon, count_number, noun_phrase, takes_n_form
from translate.russian_families import (
    OTHER_WORDS,
    RussianFamily,
    Sites,
    agreeing_readings,
    compile_families,
    has_attributes,
    load_families,
    other_parts,
    phrase_readings,
    repeat_fits,
    said_apart_in,
    said_with_other,
    same_object_parts,
    slot_word_tables,
    words_after_still,
)
from translate.templates import SENTENCE_START, Agreement, CompiledTemplate, NounPhrase

DEFAULT_FAMILIES_DIR = FAMILIES_DIR

#: Below this many bits of the question's random number left, draw a fresh one (long families).
_LOW_WATER = 1 << 64


class RealisationError(ValueError):
    """A question that cannot be realised: unknown family, a missing or unknown parameter value."""


class UnknownFamily(RealisationError):
    """A question of a family the realiser was not given: every other question of it fails too,
    so the run stops (the fix is naming its folder with ``--families``)."""


class _Draw(NamedTuple):
    """What drawing a family's words needs: its parameter values in slot order (from a question's
    params), per slot the words each value may take (the answer's attribute only by its gold
    lemma), and per slot that may repeat an earlier slot's value, those earlier slots."""

    values: Callable[[Any], Sequence[object]]
    tables: tuple[Mapping[object, tuple[str, ...]], ...]
    repeats: tuple[tuple[int, tuple[int, ...]], ...]


def _values_getter(slots: tuple[str, ...]) -> Callable[[Any], Sequence[object]]:
    if len(slots) > 1:
        return itemgetter(*slots)
    return lambda params: tuple(params[slot] for slot in slots)  # a bad params raises, handled by the caller


# ---------------------------------------------------------------------------------------------
# The realiser


class NativeRealiser:
    """Realise questions in Russian from their family's Russian templates (the ``native`` backend)."""

    name = "native"

    def __init__(self, families_dir: Sources = None, seed: int = 0, families: Iterable[Family] | None = None):
        """Realise the families of ``families_dir`` (default: the shipped ones; a folder: its families
        alone; or :class:`FamilySources`), read by the question engine's loader, or the engine
        ``families`` given (for families the engine cannot read yet)."""
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
        self.sources = as_sources(families_dir)
        self._known = "the families it was given" if families is not None else self.sources.describe()
        self.seed = int(seed)
        self._vocabulary: Vocabulary = load_vocabulary()
        self._lexicon = build_lexicon(self._vocabulary)
        if families is not None:
            self._families, self._by_position = compile_families(families, self._lexicon)
        else:
            self._families, self._by_position = load_families(self.sources, self._lexicon)
        self._words = self._russian_words_by_kind()
        self._object_noun = str(self._vocabulary.object_noun["ru"]["lemma"])
        self._generic_nouns = frozenset(str(w) for w in self._vocabulary.object_noun["ru"]["synonyms"])
        self._genders = {lemma: noun.gender for lemma, noun in self._lexicon.nouns.items()}
        self._draws: dict[str, _Draw] = {}  # by family: one per family file entry
        # Choices are a keyed hash of the question's identity, with the key drawn by NumPy from
        # (seed, stage): a counter-based generator like Philox, so a question's words do not
        # depend on which other questions are realised with it, or in what order. Starting a
        # NumPy generator per question costs 10-30 µs, more than the whole realisation.
        self._key = streams.seed_sequence("translate.native", self.seed).generate_state(8, dtype=np.uint32).tobytes()
        self._hasher = hashlib.blake2b(key=self._key, digest_size=32)  # copied per question: the key is hashed once
        # "family ru template": realisations the reading check refused before another template was
        # used; "family ru all": questions no template could say with one reading.
        self.refusals: Counter[str] = Counter()

    @property
    def families(self) -> Mapping[str, RussianFamily]:
        return MappingProxyType(self._families)

    def realise(self, questions: Sequence[Mapping[str, object]]) -> list[str | None]:
        """One Russian question per input, in order; None where the family has no Russian text."""
        return [self.realise_one(question) for question in questions]

    def realise_one(self, question: Mapping[str, object]) -> str | None:
        """The question in Russian. Template after template from a drawn one, the first whose text
        admits no other reading with another answer (``unsafe_readings`` of the question)."""
        try:
            family = self._families[question["family"]]  # type: ignore[index]  # any other value is the slow path's
        except (KeyError, TypeError):
            family = self.family_of(question)
        if not family.templates:
            return None
        count = len(family.templates)
        choices, first = divmod(self._random_number(question), count)
        words = self._drawn_words(family, question.get("params"), choices)
        unsafe = question.get(UNSAFE_FIELD)
        text = self._checked(family, first, words, unsafe)  # type: ignore[arg-type]  # a list of readings or None
        if text is not None:  # the drawn template, as nearly always
            return text
        for step in range(1, count):
            index = (first + step) % count
            text = self._checked(family, index, words, unsafe)  # type: ignore[arg-type]  # a list of readings or None
            if text is not None:
                self.refusals.update(f"{family.family} ru {(first + k) % count}" for k in range(step))
                return text
        self.refusals[f"{family.family} ru {NO_TEMPLATE}"] += 1
        raise RealisationError(
            f"family {family.family}: every Russian template admits another reading with another answer "
            f"({', '.join(unsafe or [])})"  # type: ignore[arg-type]  # a list of readings or None
        )

    def realise_with_template(self, question: Mapping[str, object], template_index: int, check_readings: bool = True) -> str | None:
        """The question said with Russian template ``template_index`` and the words :meth:`realise_one` draws, or None
        where it admits an unsafe reading of the question (unless not ``check_readings``: the text a refusal quotes)."""
        family = self.family_of(question)
        words = self._drawn_words(family, question.get("params"), self._random_number(question) // len(family.templates))
        unsafe = question.get(UNSAFE_FIELD) if check_readings else None
        return self._checked(family, template_index, words, unsafe)  # type: ignore[arg-type]  # a list of readings or None

    def _drawn_words(self, family: RussianFamily, params: object, choices: int) -> list[str]:
        """One Russian word per parameter, drawn with the random number ``choices``; a value said
        again within the question takes the word said first."""
        draw = self._draw(family)
        try:
            values = draw.values(params)
            all_options = list(map(getitem, draw.tables, values))
        except (KeyError, TypeError):
            all_options = self._options(family, params)  # names what is wrong
            values = [params[slot] for slot in family.slots]  # type: ignore[index]  # a bad params raises, handled here
        words: list[str] = []
        add = words.append
        for options in all_options:
            size = len(options)
            if size == 1:  # no choice to draw: the random number stays as it is
                add(options[0])
                continue
            if choices < _LOW_WATER:
                choices = self._extend(choices)
            choices, pick = divmod(choices, size)
            add(options[pick])
        for slot, earlier in draw.repeats:
            value = values[slot]
            for other in earlier:
                if values[other] == value:
                    words[slot] = words[other]
                    break
        return words

    def _checked(self, family: RussianFamily, index: int, words: list[str], unsafe: list[str] | None) -> str | None:
        """Template ``index`` realised with ``words``, or None where it admits an unsafe reading.
        Pronouns stand only where exactly one earlier phrase agrees with them (elsewhere their phrase
        is repeated); «другой»/«ещё» are dropped only where the words alone keep the anchor out."""
        template = family.templates[index]
        structure = family.structure
        if structure is None:
            return self._assemble(template, words)
        sites = family.sites[index]
        readings: Sequence[str] = sites.fixed_readings
        repeat: tuple[int, ...] = ()
        this: tuple[tuple[int, bool], ...] = ()
        if sites.needs_agreement:
            other = other_parts(self._generic_nouns, sites, structure, words, unsafe) if structure.relation_target else ()
            found = self._agreement_readings(template, sites, structure, words, said_with_other(sites, other))
            if found is None:
                return None
            more, repeat, this = found
            if more:
                readings = [*readings, *more]
        if sites.coordinated:
            words = self._bare_noun_first(sites, words)
        if unsafe and (sites.anchor_repeats or sites.coordinated):
            more = phrase_readings(self._generic_nouns, sites, words, unsafe)
            if more:
                readings = [*readings, *more]
        drop: tuple[str, ...] = ()
        if sites.droppable and unsafe is not None:
            drop = tuple(phrase for phrase in sites.droppable if said_apart_in(self._generic_nouns, sites, words, phrase, structure.same_anchor[phrase]))
        if readings and unsafe and admitted(readings, unsafe):
            return None
        other = other_parts(self._generic_nouns, sites, structure, words, unsafe) if structure.relation_target else ()
        these = same_object_parts(self._generic_nouns, sites, structure, words) if len(structure.phrases) > 1 else ()
        if not repeat and not drop and not other and not these:
            return self._assemble(template, words)
        key = (index, repeat, drop, this, other, these)
        special = family.special.get(key)
        if special is None:
            special = family.special[key] = self._special_template(
                template, family.slots, repeat, drop, sites.phrase_parts, this, (other, these))
        return self._assemble(special, words)

    def _bare_noun_first(self, sites: Sites, words: list[str]) -> list[str]:
        """``words`` with two coordinated phrases of a union or sum swapped where the first has
        adjectives and the second none («кубов и жёлтых сфер», not «жёлтых сфер и кубов»)."""
        for first, second in sites.coordinated:
            if (first, second) in sites.ordered:  # «A больше, чем B», «поменять местами A и B»: the order is the meaning
                continue
            if has_attributes(sites, words, first) and not has_attributes(sites, words, second):
                mine, theirs = dict(sites.phrase_slots[first]), dict(sites.phrase_slots[second])
                if mine.keys() == theirs.keys():
                    words = list(words)
                    for kind, slot in mine.items():
                        words[slot], words[theirs[kind]] = words[theirs[kind]], words[slot]
        return words

    def _agreement_readings(
        self, template: CompiledTemplate, sites: Sites, structure: Structure, words: list[str], others_said: frozenset[str] = frozenset()
    ) -> tuple[list[str], tuple[int, ...], tuple[tuple[int, bool], ...]] | None:
        """Readings that depend on which phrases agree (gender, number) with the words chosen, the
        pronouns to replace by their phrase, and of those the ones said with «этот» (the phrase
        is the last said that fits them); None where a repeated phrase reads like another.

        Which phrases agree depends only on each phrase's gender and number, so that part is
        worked out once per combination and kept with the template."""
        genders, object_noun = self._genders, self._object_noun
        features = tuple([
            (genders[words[slot] if slot is not None else noun or object_noun],
             number if count is None else count_number(int(words[count])))
            for _, slot, noun, number, count in sites.heads
        ])
        known = sites.agreement_cache.get(features)
        if known is None:
            known = sites.agreement_cache[features] = agreeing_readings(sites, structure, features)
        readings, repeat, said_before = known
        if not repeat:
            return readings, (), ()
        readings = list(readings)
        this: list[tuple[int, bool]] = []  # (part, also «другой»: said with it, and no other that fits so said)
        for site, earlier in said_before:
            # The repeated phrase must not read like another earlier one that fits it too
            # ("слева от предмета"), unless it is the last of them said: then «этого предмета».
            alike = repeat_fits(self._generic_nouns, sites, structure, words, site, earlier)
            # «этот» also where nothing else fits, or (no relation) only what located it: «Посмотри на X левее Y. … этот X».
            own = () if site.relation else [structure.relation_anchor.get(r) for r, t in structure.relation_target.items() if t == site.phrase]
            others = [name for name in alike if name not in own]
            if site.phrase in earlier and (not others or earlier.index(site.phrase) > max(map(earlier.index, others))):
                this.append((site.part, bool(others) and site.phrase in others_said and not others_said & set(others)))  # «этого другого цилиндра»
                continue
            if site.relation is None:
                # No reading of the program to check: refused only where it reads the very same.
                look = self._signature(sites.phrase_parts[site.phrase], words)
                if any(self._signature(sites.phrase_parts[name], words) == look for name in alike):
                    return None
                continue
            readings += [f"anchor:{site.relation}:{name}" for name in alike]
        return readings, repeat, tuple(this)

    def _signature(self, phrase: NounPhrase, words: list[str]) -> tuple[tuple[str, ...], str]:
        """What a phrase says: its attribute words and its noun."""
        attributes = tuple(words[value] for kind, value in phrase.modifiers if kind == "slot" and words[value])
        return attributes, self._head(phrase, words)[0].lemma

    def _special_template(
        self, template: CompiledTemplate, slots: tuple[str, ...], repeat: tuple[int, ...], drop: tuple[str, ...],
        phrase_parts: Mapping[str, NounPhrase], this: tuple[tuple[int, bool], ...] = (), added: tuple[tuple[int, ...], ...] = ((), ()),
    ) -> CompiledTemplate:
        """``template`` with pronouns replaced by the phrase they stand for (after «этот», or «этот
        другой», where ``this`` says so), «другой»/«ещё» dropped, and «другой» / «этот» said before the parts ``added``
        names (another object / the same one said again)."""
        parts: list[object] = []
        for index, part in enumerate(template.parts):
            if index in repeat:
                agreement: Agreement = part  # type: ignore[assignment]  # repeated parts are agreements
                phrase = phrase_parts[slots[agreement.phrase.head_slot]]  # type: ignore[index]  # a repeated phrase has a shape slot
                said_again = dict(this)  # «этот», and «другой» after it where an earlier object fits the words too
                modifiers = ((("adjective", "этот"),) * (index in said_again) + (("adjective", "другой"),) * said_again.get(index, False)
                             + tuple(m for m in phrase.modifiers if m[1] not in OTHER_WORDS))
                reads = ([agreement.relation] if agreement.relation is not None else []) + [i for i in phrase.reads if i != phrase.relation]
                part = NounPhrase(agreement.relation, modifiers, phrase.head_slot, phrase.head_noun, agreement.case, phrase.number, tuple(reads))
            elif type(part) is NounPhrase and part.head_slot is not None and slots[part.head_slot] in drop:
                modifiers = tuple(m for m in part.modifiers if m[1] not in OTHER_WORDS)
                part = NounPhrase(part.relation, modifiers, part.head_slot, part.head_noun, part.case, part.number, part.reads,
                                  part.adjectives_only)
            elif index in added[0] or index in added[1] and ("adjective", "этот") not in part.modifiers:  # type: ignore[union-attr]
                at = next((i for i, (kind, _) in enumerate(part.modifiers) if kind == "slot"), len(part.modifiers))  # type: ignore[union-attr]
                word = "другой" if index in added[0] else "этот"  # «этот» only where the template does not say it
                modifiers = (*part.modifiers[:at], ("adjective", word), *part.modifiers[at:])  # type: ignore[union-attr]
                part = NounPhrase(part.relation, modifiers, part.head_slot, part.head_noun, part.case, part.number, part.reads,  # type: ignore[union-attr]
                                  part.adjectives_only)  # type: ignore[union-attr]
            parts.append(part)
        return CompiledTemplate(template.text, tuple(parts), template.several_sentences)  # type: ignore[arg-type]  # parts are the template's own kinds

    def render(
        self, family: str, params: Mapping[str, object], template_index: int = 0, words: Mapping[str, str] | None = None
    ) -> str:
        """Realise one family with explicit choices: Russian template ``template_index`` and, per
        placeholder, the Russian word ``words[slot]`` (default: the first synonym, the lemma)."""
        compiled = self._family(family)
        if not 0 <= template_index < len(compiled.templates):
            raise RealisationError(f"family {family} has {len(compiled.templates)} Russian templates, no index {template_index}")
        chosen = []
        for slot, options in zip(compiled.slots, self._options(compiled, params), strict=True):
            word = (words or {}).get(slot, options[0])
            if word not in options:
                raise RealisationError(f"{word!r} is not a Russian word for {slot}={params[slot]!r}; allowed: {', '.join(options)}")
            chosen.append(word)
        text = self._checked(compiled, template_index, chosen, None)
        if text is None:
            raise RealisationError(f"family {family}, Russian template {template_index}: a repeated phrase reads like another one")
        return text

    def word_options(self, family: str, params: Mapping[str, object]) -> dict[str, tuple[str, ...]]:
        """Per placeholder, the Russian words the realiser may choose for these values (first = lemma)."""
        compiled = self._family(family)
        return dict(zip(compiled.slots, self._options(compiled, params), strict=True))

    def family_of(self, question: Mapping[str, object]) -> RussianFamily:
        family = question.get("family")
        if family is None:
            family = self._by_position.get((question.get("template_filename"), question.get("question_family_index")))  # type: ignore[arg-type]  # JSON values
        return self._family(family)  # type: ignore[arg-type]  # None is reported by _family

    def _family(self, family: str) -> RussianFamily:
        try:
            return self._families[family]
        except (KeyError, TypeError):
            raise UnknownFamily(f"family {family!r} is not among the family files ({self._known}); pass --families DIR "
                                f"with the folder of its family file") from None

    # -- choices ------------------------------------------------------------------------------

    def _random_number(self, question: Mapping[str, object]) -> int:
        image, index = question.get("image_index"), question.get("question_index")
        if type(image) is int and type(index) is int:
            identity = b"q:%d:%d" % (image, index)
        else:  # no positional identity: the question's content is its identity
            content = [question.get("family"), question.get("params"), question.get("template_index")]
            identity = b"c:" + json.dumps(content, sort_keys=True, ensure_ascii=False).encode()
        hasher = self._hasher.copy()
        hasher.update(identity)
        return int.from_bytes(hasher.digest(), "little")

    def _extend(self, choices: int) -> int:
        hasher = self._hasher.copy()
        hasher.update(choices.to_bytes(32, "little"))
        return (choices << 256) | int.from_bytes(hasher.digest(), "little")

    def _russian_words_by_kind(self) -> dict[str, dict[object, tuple[str, ...]]]:
        """For each parameter kind, value -> its Russian words (first = lemma); "" = left empty."""
        vocabulary = self._vocabulary
        words: dict[str, dict[object, tuple[str, ...]]] = {}
        for kind in ("size", "color", "material", "shape"):
            words[kind] = {name: tuple(vocabulary.value(kind, name).ru["synonyms"]) for name in vocabulary.names(kind)}
            words[kind][""] = ("",)
        words["shape"][""] = tuple(vocabulary.object_noun["ru"]["synonyms"])
        words["relation"] = {name: tuple(entry["ru"]["synonyms"]) for name, entry in vocabulary.relations.items()}
        words["integer"] = {}
        return words

    def _draw(self, family: RussianFamily) -> _Draw:
        """How a question of ``family`` draws its words (made once per family)."""
        draw = self._draws.get(family.family)
        if draw is None:
            tables = slot_word_tables(family, self._words)
            repeats = tuple((slot, group[:position]) for group in family.same_kind for position, slot in enumerate(group) if position)
            draw = self._draws[family.family] = _Draw(_values_getter(family.slots), tables, repeats)
        return draw

    def _options(self, family: RussianFamily, params: object) -> list[tuple[str, ...]]:
        """The Russian words each parameter of ``family`` may take for the values in ``params``."""
        try:
            options = [self._words[kind][params[slot]] for slot, kind in family.kinds.items()]  # type: ignore[index]  # a bad params raises, handled here
        except (KeyError, TypeError):
            options = [self._options_of_one(family, params, slot, kind) for slot, kind in family.kinds.items()]
        return [words_after_still(words) if after else words for words, after in zip(options, family.after_still, strict=True)]

    def _options_of_one(self, family: RussianFamily, params: object, slot: str, kind: str) -> tuple[str, ...]:
        """The slow path, which names what is wrong with a parameter value."""
        where = f"question of family {family.family}"
        if not isinstance(params, Mapping):
            raise RealisationError(f"{where} has no params mapping")
        if slot not in params:
            raise RealisationError(f"{where} has no value for {slot} in params")
        value = params[slot]
        if kind == "integer":
            if isinstance(value, bool) or not (isinstance(value, int) and value >= 0 or isinstance(value, str) and value.isascii() and value.isdigit()):
                raise RealisationError(f"{where}: {slot} must be a non-negative integer, got {value!r}")
            digits = self._words["integer"][value] = (str(int(value)),)  # the fast path finds it next time
            return digits
        known = self._words[kind]
        if value not in known:
            allowed = ", ".join(str(v) for v in known if v != "")
            empty = " or empty" if "" in known else ""
            raise RealisationError(f"{where}: unknown {kind} {value!r} for {slot}; allowed: {allowed}{empty}")
        return known[value]

    # -- assembly: the hot path -----------------------------------------------------------------

    def _assemble(self, template: CompiledTemplate, words: list[str]) -> str:
        pieces = list(template.pieces)
        for position, part in template.phrases:
            key = part.key(words)
            text = part.cache.get(key)
            if text is None:
                text = part.cache[key] = self._build(part, words)
            pieces[position] = text
        for position, slot in template.numbers:
            pieces[position] = words[slot]
        text = "".join(pieces)
        if template.starts_with_word:
            text = text[:1].upper() + text[1:]
        if template.several_sentences:
            text = SENTENCE_START.sub(lambda match: match.group().upper(), text)
        return text + "?" if template.ends_with_word and not text.endswith("?") else text

    def _build(self, part: NounPhrase | Agreement, words: list[str]) -> str:
        if isinstance(part, NounPhrase):
            return self._noun_phrase(part, words)
        return self._agreement(part, words)

    def _head(self, phrase: NounPhrase, words: list[str]) -> tuple[Noun, str]:
        """The noun heading ``phrase`` and its grammatical number, for words that agree with it."""
        lemma = words[phrase.head_slot] if phrase.head_slot is not None else phrase.head_noun or self._object_noun
        number = phrase.number
        for kind, value in phrase.modifiers:
            if kind == "count":
                number = count_number(int(words[value]))
        return self._lexicon.noun(lemma), number

    def _case_after(self, relation: int | None, words: list[str], case: str) -> tuple[str, str]:
        """The preposition a relation puts before a phrase ("" if none) and the case it governs."""
        if relation is None:
            return "", case
        preposition = words[relation]
        return preposition + " ", self._lexicon.relation_cases[preposition]

    def _noun_phrase(self, phrase: NounPhrase, words: list[str]) -> str:
        modifiers = []
        for kind, value in phrase.modifiers:
            if kind == "slot":
                if words[value]:
                    modifiers.append(("adjective", words[value]))
            elif kind == "count":
                modifiers.append(("count", words[value]))
            else:
                modifiers.append((kind, value))
        noun, _ = self._head(phrase, words)
        prefix, case = self._case_after(phrase.relation, words, phrase.case)
        text = noun_phrase(tuple(modifiers), noun, case, phrase.number)
        if phrase.adjectives_only and modifiers:
            text = text.rsplit(" ", 1)[0]
        return prefix + text

    def _agreement(self, agreement: Agreement, words: list[str]) -> str:
        noun, number = self._head(agreement.phrase, words)
        prefix, case = self._case_after(agreement.relation, words, agreement.case)
        pieces = []
        # The н-form after a preposition: the relation's, the text's before the group or one inside it («[за он|<S>]»).
        after_preposition = bool(prefix) or agreement.after_preposition
        for kind, word in agreement.words:
            if kind == "slot":  # an attribute's adjective: «был [<M2>|твор,<S>]»
                kind, word = "adjective", words[int(word)]
            pieces.append(agreeing_form(kind, str(word), case, number, noun, agreement.short, after_preposition=after_preposition))
            after_preposition = kind == "fixed" and takes_n_form(str(word))
        return prefix + " ".join(piece for piece in pieces if piece)
