"""Generating the questions of a run: scene after scene, in balance blocks, with checkpoints.

Each scene's questions come from :mod:`questions.scene_questions` with the run state of its
balance block of scenes (``Settings.balance_block``), so blocks can be made apart (shards) and
only one block's state is ever in memory. It is rebuilt from the block's saved chunks plus a few
counters saved with each checkpoint, so a run stopped after any chunk and resumed ends with
exactly the questions of an uninterrupted run.
"""

from __future__ import annotations

import gc
from collections import Counter, defaultdict
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from tqdm import tqdm

from questions.family import Family
from questions.scene_questions import QuestionMaker, RunState, Settings, program_key, text_key
from ruclevr.cli import progress_disabled
from ruclevr.io import atomic_write_compact_json, read_json, remove_stale_temporaries
from ruclevr.records import RunUnit, claim_run

CHUNK_SCENES = 500
RUN_FILE = "run.json"
SETTLE_EVERY = 50  # scenes between two gc.freeze() calls, see _settle_long_lived_objects
# Allocations between two passes of the cyclic garbage collector over young objects while
# generating (Python's default is 700): the search allocates many small short-lived tuples, freed
# by reference counting (it makes no cycles), and each pass had to look at all of them.
YOUNG_COLLECTION_EVERY = 20_000


class SceneFailed(RuntimeError):
    """An unexpected error on one scene; the chunks saved before it are kept for a resumed run."""

    def __init__(self, scene: Mapping[str, Any], error: Exception) -> None:
        super().__init__(f"scene {scene.get('image_filename', scene.get('image_index'))}: {type(error).__name__}: {error}")


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
    thresholds = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTION_EVERY, *thresholds[1:])
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
        gc.set_threshold(*thresholds)
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
    atomic_write_compact_json(folder / f"scenes_{start:08d}_{end:08d}.json", chunk)


def checkpoint_unit(folder: Path) -> RunUnit:
    """A checkpoint folder as the unit of work a run claims: a stopped run's chunks are resumed by a run
    of the same record, refused (one line) to a run of another."""
    return RunUnit(folder / RUN_FILE, has_work=lambda: next(folder.glob("scenes_*.json"), None),
                   refusal=lambda _: f"{folder} holds a stopped run made with other settings; pass --overwrite to start over",
                   prepare=lambda: remove_stale_temporaries(folder))


def _saved_chunks(
    folder: Path, run_record: Mapping[str, Any], positions: range, balance_block: int, refusals: Counter[str]
) -> Generator[list[dict[str, Any]], None, tuple[int, RunState]]:
    """Yield the saved chunks' questions in order; return the position to continue from and the
    run state of its block, rebuilt from the saved chunks of that block (``refusals``: the run's
    counts so far, restored)."""
    folder.mkdir(parents=True, exist_ok=True)
    claim_run(checkpoint_unit(folder), run_record)
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
