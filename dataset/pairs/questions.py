"""The questions of a minimal pair: the same question asked on a scene and on its edited copy.

The edit of a scene is chosen for the answers it flips: the kinds in an order drawn per scene,
within a kind the edits flipping most of the scene's questions first (programs executed on the
edited graph, ties drawn), the first that leaves at least one group whose answer flips. Each question that stays well posed on the edited scene makes a group of two
items, its answer flipped or kept. The edited item keeps the source's Russian text, so it is
asked only where that text still has one reading: the question engine's rules hold on the edited
scene (:meth:`questions.search.SceneSearch.instantiate`), and its other readings there are among
those the source's text was chosen to avoid (``unsafe_readings``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dataset.pairs.edits import KINDS, Edit, candidate_edits, edited_scene
from questions import (
    UNSAFE_FIELD,
    ExecutionError,
    Family,
    Plan,
    RandomStream,
    SceneIndex,
    SceneSearch,
    execute_program,
    unsafe_readings,
)
from ruclevr import streams
from translate import answer_to_russian

ORIGINAL = "original"
#: Why a question makes no pair on its edited scene.
AMBIGUOUS = "ambiguous"  # its program cannot be answered there (a reference fits none or several objects)
ILL_POSED = "ill_posed"  # the question engine's rules reject it there
OTHER_READING = "other_reading"  # its Russian text may read otherwise there
#: Edits of one scene tried for a group whose answer flips, best first.
MAX_TRIED = 12


def answer_on(program: Sequence[Mapping[str, Any]], scene: SceneIndex) -> str | None:
    try:
        return execute_program(program, scene)
    except ExecutionError:
        return None


def flips(edit: Edit, scene: Mapping[str, Any], questions: Sequence[Mapping[str, Any]]) -> int:
    """How many of ``questions`` get another (defined) answer on the scene edited by ``edit``."""
    index = SceneIndex.from_scene(edited_scene(scene, edit))
    return sum(answer_on(q["program"], index) not in (None, q["answer"]) for q in questions)


def ranked_edits(scene: Mapping[str, Any], questions: Sequence[Mapping[str, Any]], seed: int) -> list[Edit]:
    """The edits of ``scene`` that flip an answer: the kinds in a drawn order, within a kind the
    edits flipping most first (ties in a drawn order)."""
    rng = streams.generator("dataset.pairs", seed, image_index=int(scene["image_index"]))
    ranked: list[Edit] = []
    for kind_number in rng.permutation(len(KINDS)):
        edits = list(candidate_edits(scene, KINDS[int(kind_number)]))
        counts = np.array([flips(edit, scene, questions) for edit in edits])
        order = sorted(range(len(edits)), key=lambda k: (-counts[k], rng.random()))
        ranked += [edits[k] for k in order if counts[k] > 0]
    return ranked


def chosen_edit(scene: Mapping[str, Any], questions: Sequence[Mapping[str, Any]], seed: int,
                maker: PairMaker | None = None) -> Edit | None:
    """The first of :func:`ranked_edits` (of the first :data:`MAX_TRIED`) that, with ``maker``,
    leaves a group whose answer flips; None when none does."""
    for edit in ranked_edits(scene, questions, seed)[:MAX_TRIED]:
        if maker is None:
            return edit
        made = maker.pairs(questions, scene, edited_scene(scene, edit), edit.describe(scene), seed)
        if any(paired.original is not None and paired.original["group"]["answer_flips"] for paired in made):
            return edit
    return None


@dataclass(frozen=True)
class Paired:
    """One question's group: the source item and the edited scene's, or why there is none."""

    original: dict[str, Any] | None
    edited: dict[str, Any] | None
    reason: str | None = None


class PairMaker:
    """Makes the groups of one edited scene's questions (the families' plans kept across scenes)."""

    def __init__(self, families: Mapping[str, Family], yo_policy: str) -> None:
        self.families = families
        self.plans = {family_id: Plan.of(family) for family_id, family in families.items()}
        self.yo_policy = yo_policy

    def pairs(self, questions: Iterable[Mapping[str, Any]], source: Mapping[str, Any], edited: Mapping[str, Any],
              change: Mapping[str, Any], seed: int) -> list[Paired]:
        index = SceneIndex.from_scene(edited)
        search = SceneSearch(index, RandomStream.for_unit("dataset.pairs", seed, int(edited["image_index"])))
        return [self.paired(question, source, edited, change, index, search) for question in questions]

    def paired(self, question: Mapping[str, Any], source: Mapping[str, Any], edited: Mapping[str, Any],
               change: Mapping[str, Any], index: SceneIndex, search: SceneSearch) -> Paired:
        family = self.families[question["family"]]
        answer = answer_on(question["program"], index)
        if answer is None:
            return Paired(None, None, AMBIGUOUS)
        candidate = search.instantiate(self.plans[question["family"]], question["params"], relaxed=True)
        if candidate is None:
            return Paired(None, None, ILL_POSED)
        if candidate.answer != answer:  # two independent computations of one answer
            raise RuntimeError(f"{question['family']}: the search and the executor disagree on the edited scene")
        unsafe = unsafe_readings(family, question["params"], index)
        if not set(unsafe) <= set(question.get(UNSAFE_FIELD) or ()):
            return Paired(None, None, OTHER_READING)
        group_id = f"{source['image_filename']}#{question['question_index']}"
        flipped = answer != question["answer"]
        original = {**question, "group": group_record(group_id, ORIGINAL, change, flipped)}
        edited_question = {
            **question,
            "split": edited["split"],
            "image_index": edited["image_index"],
            "image_filename": edited["image_filename"],
            "answer": answer,
            "answer_ru": answer_to_russian(answer, self.yo_policy),
            UNSAFE_FIELD: unsafe,
            "group": group_record(group_id, str(change["kind"]), change, flipped),
        }
        return Paired(original, edited_question)


def group_record(group_id: str, role: str, change: Mapping[str, Any], answer_flips: bool) -> dict[str, Any]:
    """What an item of a minimal pair records: its group, which variant it is (``original`` or the
    kind of change), the change and whether the answer differs between the two."""
    return {"id": group_id, "variant": role, "change": dict(change), "answer_flips": answer_flips}
