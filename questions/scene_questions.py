"""The questions of one scene: families in turn, least used first, answers balanced by the run state.

A scene's questions depend on the scene's own generator (the ``questions.search`` stream of
:mod:`ruclevr.streams`) and on the run state left by earlier scenes (:class:`RunState`): how often
each family was used or came away empty, how often each answer was given, which programs and
texts each split already holds. :mod:`questions.generate` runs this over many scenes.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from assets.vocabulary import load_vocabulary
from questions.balance import ValueBalance, named_features, program_features
from questions.executor import execute_program
from questions.family import Family
from questions.functions import BOOL, INTEGER
from questions.hypothetical import plainly_said_kinds
from questions.occlusion import uses_occlusion
from questions.plan import Plan, expand_program, parameter_values, release_nodes
from questions.random_stream import RandomStream
from questions.readings import (
    NO_TEMPLATE,
    UNSAFE_FIELD,
    admitted,
    bare_noun_first,
    loops_back,
    names_its_anchor,
    reading_check,
    said_apart,
    structure_of,
)
from questions.scene_index import SceneIndex
from questions.search import Candidate, SceneSearch
from questions.text import english_readings, normalise_text, realise_english, without_other

#: A family's most frequent answer may exceed its cap by this many questions (a run has to start somewhere).
BALANCE_SLACK = 2
#: The same for yes/no families, whose cap (55 %) is nearer the 60 % the balance check allows: with
#: this slack a family of 31 questions or more stays within it.
YES_NO_SLACK = 1


@dataclass(frozen=True)
class Settings:
    """What a run is made with; recorded in the output's ``info``."""

    seed: int = 0
    per_image: int = 10
    budget: int = 3000  # search steps per scene, across all families tried on it
    family_steps: int = 300  # search steps for one family on one scene
    tries: int = 4  # searches per family and scene, each may find another answer to balance with
    extra_tries: int = 4  # further searches while every answer found is over its cap
    split_repeats: int = 1  # how many images of a split (of one balance block) may share one question program or text (0: no limit)
    balance_block: int = 1000  # scenes balanced together; blocks are independent, so shards of whole blocks run in parallel
    unique_across_blocks: bool = False  # also hold split_repeats across blocks, dropping what an earlier block asked
    mix: tuple[tuple[str, float], ...] = ()  # (class, share): the mix of questions to reach; () keeps every family's turn
    mix_by: str = "type"  # a class of the mix: a question "type", a family "group", "hops", "skill" or "difficulty"


MIX_AXES = ("type", "group", "hops", "skill", "difficulty")


def mix_class(family: Family, axis: str) -> str:
    """The class of ``family`` on a mix axis: its MERA question type, its group, its number of relation
    hops, its skill or its difficulty (questions/skills.py)."""
    if axis == "type":
        return family.question_type
    if axis == "group":
        return family.group
    if axis == "skill":
        return family.skill
    if axis == "difficulty":
        return str(family.difficulty)
    return str(sum(1 for node in family.program if node.function == "relate"))


def answer_cap(family: Family) -> float:
    """The largest share of a family's questions one answer may have."""
    if family.answer_type == BOOL:
        return 0.55
    if family.answer_type == INTEGER:
        # 0.25, not 0.35, since counts are rarely 0 (empty_share): without it "1" piled up
        return 0.25
    return 1.0 / len(load_vocabulary().names(family.answer_type)) + 0.15


def answer_domain(family: Family) -> tuple[str, ...]:
    """The answers a family can have, where they are known in advance (not for counts)."""
    if family.answer_type == BOOL:
        return ("no", "yes")
    if family.answer_type == INTEGER:
        return ()
    return load_vocabulary().names(family.answer_type)


def program_key(program: Sequence[Mapping[str, Any]]) -> bytes:
    """A compact digest of a program, to find repeated questions (8 bytes: memory stays small in long runs)."""
    return _digest(_node_text(node["function"], node["inputs"], node["value_inputs"]) for node in program)


def candidate_key(plan: Plan, choices: tuple[Any, ...]) -> bytes:
    """:func:`program_key` of the program :func:`questions.plan.expand_program` would write, without writing it."""
    return candidate_key_and_features(plan, choices)[0]


def candidate_key_and_features(plan: Plan, choices: tuple[Any, ...]) -> tuple[bytes, tuple[str, ...]]:
    """:func:`candidate_key` and the :func:`questions.balance.named_features` of that program."""
    nodes = release_nodes(plan, choices)[0]
    return _digest(_node_text(*node) for node in nodes), named_features(nodes)


def _node_text(function: str, inputs: Iterable[int], values: Iterable[str]) -> str:
    return f"{function}:{','.join(map(str, inputs))}:{','.join(values)}"


def _digest(node_texts: Iterable[str]) -> bytes:
    return hashlib.blake2b("|".join(node_texts).encode(), digest_size=8).digest()


def text_key(question: str) -> bytes:
    return hashlib.blake2b(normalise_text(question).encode(), digest_size=8).digest()


class RunState:
    """What earlier scenes decided that later ones must know."""

    def __init__(self, refusals: Counter[str] | None = None) -> None:
        self.family_uses: Counter[str] = Counter()
        self.family_misses: Counter[str] = Counter()  # scenes where a family was tried and gave nothing
        # "family en template": realisations refused by the reading check; counted over the run
        # (one Counter shared by every block's state), they decide nothing
        self.refusals: Counter[str] = Counter() if refusals is None else refusals
        self.answers: dict[str, Counter[str]] = defaultdict(Counter)
        self.values = ValueBalance()  # answers per (family, value the question names)
        self.split_programs: dict[str, Counter[bytes]] = defaultdict(Counter)
        self.split_texts: dict[str, Counter[bytes]] = defaultdict(Counter)
        self.next_index = 0

    def record(self, question: Mapping[str, Any], keys: tuple[bytes, bytes] | None = None) -> None:
        """Count a written question; ``keys`` (program, text) when already computed."""
        program, words = keys or (program_key(question["program"]), text_key(question["question"]))
        self.family_uses[question["family"]] += 1
        self.answers[question["family"]][question["answer"]] += 1
        self.values.record(question["family"], program_features(question["program"]), question["answer"])
        self.split_programs[question["split"]][program] += 1
        self.split_texts[question["split"]][words] += 1
        self.next_index = question["question_index"] + 1

    def least_used_count(self, family: Family) -> int:
        counts = self.answers[family.id]
        domain = answer_domain(family) or tuple(counts)
        return min((counts[answer] for answer in domain), default=0)

    def choose_answer(self, family: Family, answers: Sequence[str], stream: RandomStream) -> str | None:
        """The least used of the answers this scene allows, unless even that one is over its cap."""
        if not answers:
            return None
        counts = self.answers[family.id]
        least = min(sorted(answers), key=lambda answer: (counts[answer], stream.random()))
        return least if self.answer_allowed(family, least) else None

    def answer_allowed(self, family: Family, answer: str) -> bool:
        """Whether one more ``answer`` keeps it within its cap of the family's questions."""
        counts = self.answers[family.id]
        slack = YES_NO_SLACK if family.answer_type == BOOL else BALANCE_SLACK
        return counts[answer] + 1 <= answer_cap(family) * (sum(counts.values()) + 1) + slack


class QuestionMaker:
    """Turns scenes into question records with a fixed set of families and settings."""

    def __init__(self, families: Mapping[str, Family], settings: Settings) -> None:
        self.settings = settings
        self.shares = dict(settings.mix)
        # With a mix, only families of a class with a share are asked; class_of tells each one's class.
        self.class_of = {family_id: mix_class(family, settings.mix_by) for family_id, family in families.items()}
        self.plans = [
            Plan.of(family) for family in families.values() if not self.shares or self.shares.get(self.class_of[family.id], 0) > 0
        ]
        self.plan_ids = [plan.family.id for plan in self.plans]
        self.soft = [plan for plan in self.plans if plan.family.empty_share > 0]
        self.checks = {plan.family.id: reading_check(plan.family) for plan in self.plans}
        self.need_occlusion = {plan.family.id for plan in self.plans if uses_occlusion(plan.family.program)}
        self.vocabulary = load_vocabulary()

    def questions_for_scene(self, scene: Mapping[str, Any], state: RunState) -> list[dict[str, Any]]:
        settings = self.settings
        stream = RandomStream.for_unit("questions.search", settings.seed, int(scene["image_index"]))
        search = SceneSearch(SceneIndex.from_scene(scene), stream)
        seen_here: set[bytes] = set()  # programs and texts of this image
        made: list[dict[str, Any]] = []
        order = self._family_order(state, stream)
        relaxed = self._relaxed(int(scene["image_index"]))
        for plan in order if not self.shares else self._mixed(order, state, made):
            if len(made) >= settings.per_image or search.steps >= settings.budget:
                break
            if search.scene.occlusion is None and plan.family.id in self.need_occlusion:
                continue  # a scene without occlusion records (graph only) asks no occlusion question
            options = self._candidates(plan, search, state, seen_here, str(scene["split"]), plan.family.id in relaxed)
            if not options:
                state.family_misses[plan.family.id] += 1  # nothing new to ask here: the family moves back
                continue
            asked = self._ask(plan, scene, search, state, seen_here, options)
            if asked is None:
                continue  # only answers over their caps: the family keeps its place to find its rare answer later
            question, keys = asked
            made.append(question)
            state.record(question, keys)
        return made

    def _relaxed(self, image_index: int) -> set[str]:
        """The families that may leave their ``not_empty``/``min_count`` sets empty on this scene: each
        with the probability its ``empty_share`` gives, drawn in the fixed order of the plans."""
        if not self.soft:
            return set()
        stream = RandomStream.for_unit("questions.relax", self.settings.seed, image_index)
        return {plan.family.id for plan in self.soft if stream.random() < plan.family.empty_share}

    def _family_order(self, state: RunState, stream: RandomStream) -> list[Plan]:
        """The families least tried first, ties in random order (one draw per family, in turn): a family
        that keeps coming away empty (no well-posed instance on most scenes, its questions all asked
        already) stops crowding the others out."""
        uses, misses, draw = state.family_uses.get, state.family_misses.get, stream.random
        keys = [(uses(family_id, 0) + misses(family_id, 0), draw()) for family_id in self.plan_ids]
        return [self.plans[i] for i in sorted(range(len(self.plans)), key=keys.__getitem__)]

    def _mixed(self, order: list[Plan], state: RunState, made: list[dict[str, Any]]) -> Iterator[Plan]:
        """The scene's families in the order that moves the run towards the asked mix: each next one
        from the class furthest below its share (least used first within it), until all were tried."""
        waiting: dict[str, list[Plan]] = defaultdict(list)
        for plan in order:
            waiting[self.class_of[plan.family.id]].append(plan)
        asked = Counter({name: 0 for name in self.shares})
        for family_id, uses in state.family_uses.items():
            asked[self.class_of.get(family_id, "")] += uses
        while waiting:
            total = sum(asked[name] for name in self.shares) + 1
            name = max(sorted(waiting), key=lambda name: self.shares[name] * total - asked[name])
            before = len(made)
            yield waiting[name].pop(0)
            asked[name] += len(made) - before
            if not waiting[name]:
                del waiting[name]

    def _ask(
        self, plan: Plan, scene: Mapping[str, Any], search: SceneSearch, state: RunState, seen_here: set[bytes],
        options: Mapping[str, tuple[Candidate, bytes]],
    ) -> tuple[dict[str, Any], tuple[bytes, bytes]] | None:
        """One question of ``plan``'s family on this scene from the candidates found, with its
        (program, text) keys; None when every answer found is over its cap or the text repeats."""
        family, stream, split = plan.family, search.stream, str(scene["split"])
        answer = state.choose_answer(family, list(options), stream)
        if answer is None:
            return None
        candidate, key = options[answer]
        program = expand_program(plan, candidate.choices)
        question = self._question(scene, plan, candidate, program, state, search)
        if question is None:
            return None
        words = text_key(question["question"])
        if words in seen_here or self._repeated(state.split_texts[split], words):
            return None
        # The search computed the answer; executing the written program is the independent check.
        if execute_program(program, search.scene) != answer:
            raise RuntimeError(f"family {family.id}: the search and the executor disagree on {program}")
        seen_here.update((key, words))
        return question, (key, words)

    def _candidates(
        self, plan: Plan, search: SceneSearch, state: RunState, seen_here: set[bytes], split: str, relaxed: bool = False
    ) -> dict[str, tuple[Candidate, bytes]]:
        """New (not yet asked) candidates by answer, from up to ``tries`` searches.

        Searching stops early once an answer as rare as any in the family's run so far is found:
        no further search could give a better one to balance with. A candidate whose answer is
        over its cap in a group of a value it names (:mod:`questions.balance`) is passed over.
        """
        settings = self.settings
        stop_at = search.steps + min(settings.family_steps, settings.budget - search.steps)
        rarest = state.least_used_count(plan.family)
        counts = state.answers[plan.family.id]
        options: dict[str, tuple[Candidate, bytes]] = {}
        for attempt in range(settings.tries + settings.extra_tries):
            if search.steps >= stop_at:
                break
            if attempt >= settings.tries and any(state.answer_allowed(plan.family, answer) for answer in options):
                break
            candidate = search.find(plan, stop_at, relaxed)
            if candidate is None or candidate.answer in options:
                continue
            key, features = candidate_key_and_features(plan, candidate.choices)
            if key in seen_here or self._repeated(state.split_programs[split], key):
                continue
            if not state.values.allowed(plan.family, features, candidate.answer):
                continue
            options[candidate.answer] = (candidate, key)
            if counts[candidate.answer] <= rarest:
                break
        return options

    def _repeated(self, counts: Counter[bytes], key: bytes) -> bool:
        return self.settings.split_repeats > 0 and counts[key] >= self.settings.split_repeats

    def _question(
        self, scene: Mapping[str, Any], plan: Plan, candidate: Candidate, program: list, state: RunState, search: SceneSearch
    ) -> dict[str, Any] | None:
        """The question record, or None when every English template admits a reading with another answer."""
        family, stream, index = plan.family, search.stream, state.next_index
        params = parameter_values(plan, candidate.choices)
        unsafe = self.checks[family.id].unsafe(params, search.scene, candidate.outputs)
        first = stream.below(len(family.text["en"]))
        chosen = readable_english(family, params, unsafe, self.vocabulary, stream, first, state.refusals)
        if chosen is None:
            return None
        template_index, text = chosen
        return {
            "split": scene["split"],
            "image_index": scene["image_index"],
            "image_filename": scene["image_filename"],
            "question_index": index,
            "question": text,
            "program": program,
            "answer": candidate.answer,
            "template_filename": family.source,
            "question_family_index": family.position,
            "family": family.id,
            "question_type": plan.question_type,
            "template_index": template_index,
            "params": params,
            UNSAFE_FIELD: unsafe,
            **({"counts": counts} if (counts := counted(plan, candidate.outputs)) else {}),
        }


def counted(plan: Plan, outputs: Sequence[Any]) -> list[int]:
    """The value of each ``count`` node of the program, in order (the sides of an integer
    comparison, the answer of a count question): what the degenerate shares are made of."""
    return [int(outputs[t]) for t, node in enumerate(plan.nodes) if node.function == "count"]

def readable_english(
    family: Family,
    params: Mapping[str, str],
    unsafe: Sequence[str],
    vocabulary: Any,
    stream: RandomStream,
    first: int,
    refusals: Counter[str],
) -> tuple[int, str] | None:
    """The English question from the first template, from ``first`` on, whose text admits no
    reading in ``unsafe`` (:mod:`questions.readings`); "other"/"another" are dropped where the
    words alone keep the anchor out (``said_apart``). None when every template admits one, or
    when a phrase names all its anchor's attributes (``names_its_anchor``) or a chain comes back
    to an earlier object as if to a new one (``loops_back``).

    ``refusals`` counts, per template ("<family> en <index>"), the refusals after which another
    template was used, and under "<family> en all" the questions no template could say with one
    reading.
    """
    structure = structure_of(family)
    templates = family.text["en"]
    if names_its_anchor(family, structure, params) or structure.relation_target and loops_back(family, structure, params, unsafe):
        refusals[f"{family.id} en {NO_TEMPLATE}"] += 1
        return None
    refused = []
    apart = said_apart(family, structure, params)
    for step in range(len(templates)):
        template_index = (first + step) % len(templates)
        template = templates[template_index]
        if apart:
            template = without_other(template)
        readings = list(english_readings(template, family.params, structure))
        text = realise_english(template, bare_noun_first(family, structure, params), family.params, vocabulary, stream, structure, readings,
                               plainly_said_kinds(family.program))
        if admitted(readings, unsafe):
            refused.append(template_index)
            continue
        refusals.update(f"{family.id} en {index}" for index in refused)
        return template_index, text
    refusals[f"{family.id} en {NO_TEMPLATE}"] += 1
    return None
