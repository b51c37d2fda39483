"""Generating the questions of a run: per scene, families in turn, answers balanced across the run.

A scene's questions depend on the scene's own generator (``numpy.random.default_rng([seed,
image_index, STAGE])``) and on the run state left by earlier scenes: how often each family was
used or came away empty, how often each answer was given, which programs and texts each split
already holds. That state covers one balance block of scenes (``Settings.balance_block``), so
blocks can be made apart (shards) and only one block's state is ever in memory. It is rebuilt
from the block's saved chunks plus a few counters saved with each checkpoint, so a run stopped
after any chunk and resumed ends with exactly the questions of an uninterrupted run.
"""

from __future__ import annotations

import gc
import hashlib
import json
from collections import Counter, defaultdict
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from assets.vocabulary import load_vocabulary
from questions.executor import execute_program
from questions.family import Family
from questions.functions import BOOL, INTEGER
from questions.random_stream import RandomStream
from questions.readings import NO_TEMPLATE, UNSAFE_FIELD, admitted, structure_of, unsafe_readings
from questions.scene_index import SceneIndex
from questions.search import (
    Candidate,
    Plan,
    SceneSearch,
    choices_of,
    expand_program,
    expand_program_positions,
    parameter_values,
)
from questions.text import english_readings, normalise_text, realise_english, without_other
from ruclevr.cli import progress_disabled
from ruclevr.io import atomic_write_json, read_json

#: Mixed into each scene's seed so the question stage never shares random numbers with rendering.
STAGE = 3

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
    mix_by: str = "type"  # what a class of the mix is: a question "type", a family "group", or "hops" (relate nodes)


MIX_AXES = ("type", "group", "hops")


def mix_class(family: Family, axis: str) -> str:
    """The class of ``family`` on a mix axis: its MERA question type, its group, or its number of relation hops."""
    if axis == "type":
        return family.question_type
    if axis == "group":
        return family.group
    return str(sum(1 for node in family.program if node.function == "relate"))


def answer_cap(family: Family) -> float:
    """The largest share of a family's questions one answer may have."""
    if family.answer_type == BOOL:
        return 0.55
    if family.answer_type == INTEGER:
        return 0.35
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
    text = "|".join(
        f"{node['function']}:{','.join(map(str, node['inputs']))}:{','.join(node['value_inputs'])}" for node in program
    )
    return hashlib.blake2b(text.encode(), digest_size=8).digest()


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
        self.split_programs: dict[str, Counter[bytes]] = defaultdict(Counter)
        self.split_texts: dict[str, Counter[bytes]] = defaultdict(Counter)
        self.next_index = 0

    def record(self, question: Mapping[str, Any], keys: tuple[bytes, bytes] | None = None) -> None:
        """Count a written question; ``keys`` (program, text) when already computed."""
        program, words = keys or (program_key(question["program"]), text_key(question["question"]))
        self.family_uses[question["family"]] += 1
        self.answers[question["family"]][question["answer"]] += 1
        self.split_programs[question["split"]][program] += 1
        self.split_texts[question["split"]][words] += 1
        self.next_index = question["question_index"] + 1

    def family_order_key(self, family_id: str) -> int:
        # Families come least-tried first; a family that keeps coming away empty (no well-posed
        # instance on most scenes, its questions all asked already) stops crowding the others out.
        return self.family_uses[family_id] + self.family_misses[family_id]

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
        self.vocabulary = load_vocabulary()

    def questions_for_scene(self, scene: Mapping[str, Any], state: RunState) -> list[dict[str, Any]]:
        settings = self.settings
        stream = RandomStream.for_unit(settings.seed, int(scene["image_index"]), STAGE)
        search = SceneSearch(SceneIndex.from_scene(scene), stream)
        seen_here: set[bytes] = set()  # programs and texts of this image
        made: list[dict[str, Any]] = []
        order = sorted(self.plans, key=lambda plan: (state.family_order_key(plan.family.id), stream.random()))
        for plan in order if not self.shares else self._mixed(order, state, made):
            if len(made) >= settings.per_image or search.steps >= settings.budget:
                break
            options = self._candidates(plan, search, state, seen_here, str(scene["split"]))
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
        options: Mapping[str, tuple[Candidate, list[dict[str, Any]], bytes]],
    ) -> tuple[dict[str, Any], tuple[bytes, bytes]] | None:
        """One question of ``plan``'s family on this scene from the candidates found, with its
        (program, text) keys; None when every answer found is over its cap or the text repeats."""
        family, stream, split = plan.family, search.stream, str(scene["split"])
        answer = state.choose_answer(family, list(options), stream)
        if answer is None:
            return None
        candidate, program, key = options[answer]
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
        self, plan: Plan, search: SceneSearch, state: RunState, seen_here: set[bytes], split: str
    ) -> dict[str, tuple[Candidate, list[dict[str, Any]], bytes]]:
        """New (not yet asked) candidates by answer, from up to ``tries`` searches.

        Searching stops early once an answer as rare as any in the family's run so far is found:
        no further search could give a better one to balance with.
        """
        settings = self.settings
        stop_at = search.steps + min(settings.family_steps, settings.budget - search.steps)
        rarest = state.least_used_count(plan.family)
        counts = state.answers[plan.family.id]
        options: dict[str, tuple[Candidate, list[dict[str, Any]], bytes]] = {}
        for attempt in range(settings.tries + settings.extra_tries):
            if search.steps >= stop_at:
                break
            if attempt >= settings.tries and any(state.answer_allowed(plan.family, answer) for answer in options):
                break
            candidate = search.find(plan, stop_at)
            if candidate is None or candidate.answer in options:
                continue
            program = expand_program(plan, candidate.choices)
            key = program_key(program)
            if key in seen_here or self._repeated(state.split_programs[split], key):
                continue
            options[candidate.answer] = (candidate, program, key)
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
        unsafe = unsafe_readings(family, params, search.scene, expand_family)
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
        }

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
    anchor cannot be the described object. None when every template admits one.

    ``refusals`` counts, per template ("<family> en <index>"), the refusals after which another
    template was used, and under "<family> en all" the questions no template could say with one
    reading.
    """
    structure = structure_of(family)
    templates = family.text["en"]
    refused = []
    for step in range(len(templates)):
        template_index = (first + step) % len(templates)
        template = templates[template_index]
        if structure.same_anchor and not any(f"self:{phrase}" in unsafe for phrase in structure.same_anchor):
            template = without_other(template)
        readings = list(english_readings(template, family.params, structure))
        text = realise_english(template, params, family.params, vocabulary, stream, structure, readings)
        if admitted(readings, unsafe):
            refused.append(template_index)
            continue
        refusals.update(f"{family.id} en {index}" for index in refused)
        return template_index, text
    refusals[f"{family.id} en {NO_TEMPLATE}"] += 1
    return None


_PLANS: dict[tuple[str, tuple[Any, ...]], Plan] = {}


def expand_family(family: Family, params: Mapping[str, str]) -> tuple[list[dict[str, Any]], list[int]]:
    """The release-form program of ``family`` (its program possibly edited) with ``params``."""
    key = (family.id, family.program)
    plan = _PLANS.get(key)
    if plan is None:
        plan = _PLANS[key] = Plan.of(family)
    return expand_program_positions(plan, choices_of(plan, params))


# -- a run over many scenes, with checkpoints --------------------------------------------------

CHUNK_SCENES = 500
RUN_FILE = "run.json"
SETTLE_EVERY = 50  # scenes between two gc.freeze() calls, see _settle_long_lived_objects


class SceneFailed(RuntimeError):
    """An unexpected error on one scene; the chunks saved before it are kept for a resumed run."""

    def __init__(self, scene: Mapping[str, Any], error: Exception) -> None:
        super().__init__(f"scene {scene.get('image_filename', scene.get('image_index'))}: {type(error).__name__}: {error}")


class ResumeMismatch(ValueError):
    def __init__(self, folder: Path) -> None:
        super().__init__(f"{folder} holds a stopped run made with other settings; pass --overwrite to start over")


def generate(scenes: Sequence[Mapping[str, Any]], families: Mapping[str, Family], settings: Settings, **options: Any) -> list[dict[str, Any]]:
    """Questions for all scenes, in scene order, numbered, as a list (for small runs and tests);
    ``options`` are :func:`generate_chunks`'s keyword arguments but ``positions``."""
    chunks = generate_chunks(scenes, families, settings, positions=range(len(scenes)), **options)
    return list(SplitWideUnique(settings).questions(question for chunk in chunks for question in chunk))


def generate_chunks(
    scenes: Iterable[Mapping[str, Any]],
    families: Mapping[str, Family],
    settings: Settings,
    *,
    positions: range,
    run_record: Mapping[str, Any] | None = None,
    checkpoint_dir: Path | None = None,
    chunk_scenes: int = CHUNK_SCENES,
    on_chunk: Callable[[int], None] | None = None,
    on_scene: Callable[[int, list[dict[str, Any]]], None] | None = None,
    progress: bool = True,
    refusals: Counter[str] | None = None,
) -> Iterator[list[dict[str, Any]]]:
    """The questions of the scenes at ``positions`` (of the ``scenes`` stream), one chunk of scenes at a time.

    Scenes are generated in balance blocks of ``settings.balance_block`` scenes (by position):
    the run state (answer balance, family order, the split's programs and texts) starts afresh
    with each block, so any block can be made without the ones before it: shards of whole
    blocks, made in parallel, give the same questions as one run. Question indices count from
    0 in each block; :class:`SplitWideUnique` drops repeats across blocks and numbers the run.

    With ``checkpoint_dir``, each chunk is saved there before it is yielded, and a later call
    with the same ``run_record`` yields the saved chunks (read back one at a time) and continues
    after the last one. ``on_chunk(scenes_done)`` is called after each chunk is saved,
    ``on_scene(position, questions)`` after each scene (the benchmark times scenes with it).
    ``refusals`` receives the English realisations the reading check refused, by "family en
    template", over all blocks (saved with each chunk, so a resumed run counts them all too).
    """
    maker = QuestionMaker(families, settings)
    start = positions.start
    run_refusals: Counter[str] = Counter()  # shared by every block's state: counted over the run
    state = RunState(run_refusals)
    if checkpoint_dir is not None:
        start, state = yield from _saved_chunks(checkpoint_dir, run_record or {}, positions, settings.balance_block, run_refusals)
    pending: list[dict[str, Any]] = []
    chunk_start = start
    _settle_long_lived_objects()
    try:
        with tqdm(total=len(positions), initial=start - positions.start, desc="questions", unit="scene",
                  disable=progress_disabled() if progress else True) as bar:
            for position, scene in enumerate(scenes):
                if position < start:
                    continue
                if position >= positions.stop:
                    break
                if position % settings.balance_block == 0:
                    state = RunState(run_refusals)
                try:
                    made = maker.questions_for_scene(scene, state)
                except Exception as error:  # a bug, not bad input (scenes are checked before the run)
                    raise SceneFailed(scene, error) from error
                pending.extend(made)
                bar.update(1)
                if on_scene is not None:
                    on_scene(position, made)
                done = position + 1
                if done % SETTLE_EVERY == 0:
                    _settle_long_lived_objects()
                if done - chunk_start < chunk_scenes and done % settings.balance_block and done != positions.stop:
                    continue
                if checkpoint_dir is not None:
                    _save_chunk(checkpoint_dir, chunk_start, done, pending, state)
                    if on_chunk is not None:
                        on_chunk(done)
                yield pending
                pending, chunk_start = [], done
    finally:
        gc.unfreeze()
    if pending:
        yield pending
    if refusals is not None:
        refusals.update(run_refusals)


def _settle_long_lived_objects() -> None:
    """Take the run state's long-lived objects out of the cyclic garbage collector's view.

    They live until their block ends, and a full collection pass scans every object it tracks:
    without this, those passes grow with the run and land on whichever scene is running.
    Freezing is a constant-time list splice; the search makes no reference cycles, and
    ``generate_chunks`` unfreezes everything when it returns.
    """
    gc.freeze()


def _save_chunk(folder: Path, start: int, end: int, questions: list[dict[str, Any]], state: RunState) -> None:
    chunk = {
        "start": start, "end": end, "family_misses": dict(sorted(state.family_misses.items())),
        "refusals": dict(sorted(state.refusals.items())), "questions": questions,
    }
    atomic_write_json(folder / f"scenes_{start:08d}_{end:08d}.json", chunk, indent=None)


def _saved_chunks(
    folder: Path, run_record: Mapping[str, Any], positions: range, balance_block: int, refusals: Counter[str]
) -> Generator[list[dict[str, Any]], None, tuple[int, RunState]]:
    """Yield the saved chunks' questions in order; return the position to continue from and the
    run state of its block, rebuilt from the saved chunks of that block (``refusals``: the run's
    counts so far, restored)."""
    folder.mkdir(parents=True, exist_ok=True)
    run_file = folder / RUN_FILE
    if run_file.exists():
        if read_json(run_file) != json.loads(json.dumps(run_record)):
            raise ResumeMismatch(folder)
    else:
        atomic_write_json(run_file, dict(run_record))
    position = positions.start
    state = RunState(refusals)
    for chunk_file in sorted(folder.glob("scenes_*.json")):
        chunk = read_json(chunk_file)
        if chunk["start"] != position:
            break  # atomic writes leave no gaps; stop at one rather than guess
        if chunk["start"] % balance_block == 0:
            state = RunState(refusals)
        for question in chunk["questions"]:
            state.record(question)
        state.family_misses = Counter(chunk["family_misses"])
        refusals.clear()
        refusals.update(chunk.get("refusals", {}))
        position = chunk["end"]
        yield chunk["questions"]
    if position % balance_block == 0:
        state = RunState(refusals)
    return position, state


class SplitWideUnique:
    """The run's questions in order, numbered from 0; with ``unique_across_blocks``, without repeats across balance blocks.

    Each block already holds at most ``split_repeats`` images per program and per text. With
    ``unique_across_blocks`` the limit holds across blocks too: the split's programs and texts
    are counted by their 8-byte keys only (never the questions), and a question over the limit
    is dropped (a later block cannot know what an earlier one asked, so it cannot ask another
    instead: at 10,000 scenes in blocks of 1,000 this dropped a quarter of the questions). It also
    counts, for the run's info, the questions kept and the scenes that got ``per_image`` questions.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.programs: dict[str, Counter[bytes]] = defaultdict(Counter)
        self.texts: dict[str, Counter[bytes]] = defaultdict(Counter)
        self.kept = 0
        self.dropped = 0
        self.full_scenes = 0

    def questions(self, questions: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        scene: tuple[str, int] | None = None
        on_scene = 0
        for question in questions:
            if not self._admit(question):
                self.dropped += 1
                continue
            here = (question["split"], question["image_index"])
            if here != scene:
                self.full_scenes += on_scene >= self.settings.per_image
                scene, on_scene = here, 0
            on_scene += 1
            question["question_index"] = self.kept
            self.kept += 1
            yield question
        self.full_scenes += on_scene >= self.settings.per_image

    def _admit(self, question: Mapping[str, Any]) -> bool:
        if not self.settings.unique_across_blocks:
            return True
        limit = self.settings.split_repeats
        program, words = program_key(question["program"]), text_key(question["question"])
        programs, texts = self.programs[question["split"]], self.texts[question["split"]]
        if limit and (programs[program] >= limit or texts[words] >= limit):
            return False
        programs[program] += 1
        texts[words] += 1
        return True
