"""Questions carried over to a recoloured scene: colour parameters mapped, the program re-executed
for the answer, dropped when the question engine's rules say it has become ill-posed, English text
from the family's templates and Russian records as the translate stage makes them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from assets.vocabulary import Vocabulary, load_vocabulary
from questions import (
    UNSAFE_FIELD,
    ExecutionError,
    Family,
    MalformedProgram,
    Plan,
    RandomStream,
    SceneIndex,
    SceneSearch,
    execute_program,
    expand_program,
    readable_english,
    unsafe_readings,
)
from ruclevr import streams
from translate import NativeRealiser, RealisationError, realised_record

#: The keys a question record has when the question stage writes it (downstream keys are rebuilt).
QUESTION_KEYS = ("split", "image_index", "image_filename", "question_index", "question", "program", "answer",
                 "template_filename", "question_family_index", "family", "question_type", "template_index", "params",
                 "unsafe_readings")

AMBIGUOUS = "ambiguous"
ILL_POSED = "ill_posed"
NO_RUSSIAN = "no_russian"
MALFORMED = "malformed_program"  # a program no scene can run (an input node 99): the input file's fault


@dataclass
class Dropped:
    question: dict[str, Any]
    reason: str


class QuestionRecolourer:
    """Carries a source question over to the recoloured scene: mapped parameters, a program built by
    the question engine from them, the answer by execution, English text from the family's template."""

    def __init__(self, families: Mapping[str, Family], seed: int, vocabulary: Vocabulary | None = None) -> None:
        self.families = families
        self.seed = seed
        self.vocabulary = vocabulary or load_vocabulary()
        self.plans = {family_id: Plan.of(family) for family_id, family in families.items()}

    def questions_for_scene(
        self, questions: Sequence[Mapping[str, Any]], scene: Mapping[str, Any]
    ) -> tuple[list[dict[str, Any]], list[Dropped]]:
        """The well-posed carried-over questions of one recoloured scene, and the dropped ones with reasons."""
        color_map = scene["augmentation"]["color_map"]
        search = SceneSearch(SceneIndex.from_scene(scene), RandomStream.for_unit("augment.search", self.seed, int(scene["image_index"])))
        kept: list[dict[str, Any]] = []
        dropped: list[Dropped] = []
        for question in questions:
            carried, reason = self.carry_over(question, scene, color_map, search)
            if carried is None:
                dropped.append(Dropped(self.provenance_only(question, scene, color_map), reason or ILL_POSED))
            else:
                kept.append(carried)
        return kept, dropped

    def carry_over(
        self, question: Mapping[str, Any], scene: Mapping[str, Any], color_map: Mapping[str, str], search: SceneSearch
    ) -> tuple[dict[str, Any] | None, str | None]:
        family = self.families[question["family"]]
        plan = self.plans[question["family"]]
        params = mapped_params(question["params"], family.params, color_map)
        # The program exactly as the source's, with mapped colour values: executing it first tells
        # *why* a question fails (a reference that no longer picks out one object).
        try:
            execute_program(mapped_program(question["program"], color_map), search.scene)
        except MalformedProgram as error:  # the input's fault, not the recolouring's
            return None, f"{MALFORMED}: {error}"
        except ExecutionError as error:
            return None, f"{AMBIGUOUS}: {error}"
        candidate = search.instantiate(plan, params, relaxed=True)  # a carried count may stay 0, as its source was
        if candidate is None:
            return None, f"{ILL_POSED}: the question engine's rules reject it on the recoloured scene " \
                         "(a filter that narrows nothing, a comparison the text decides, or a query naming its answer)"
        program = expand_program(plan, candidate.choices)
        answer = execute_program(program, search.scene)
        if answer != candidate.answer:  # two independent computations of one answer
            raise RuntimeError(f"{question['family']}: the search and the executor disagree on {program}")
        # The other readings of the text are executed on the recoloured scene, as the engine does.
        unsafe = unsafe_readings(family, params, search.scene)
        english = self.english_text(family, question, params, scene, unsafe)
        if english is None:
            return None, f"{AMBIGUOUS}: no English template says it with one reading on the recoloured scene"
        template_index, text = english
        carried = {key: question[key] for key in QUESTION_KEYS if key in question}
        carried.update(
            split=scene["split"],
            image_index=scene["image_index"],
            image_filename=scene["image_filename"],
            question=text,
            program=program,
            answer=answer,
            params=params,
            question_type=plan.question_type,
            template_index=template_index,
            augmentation=question_provenance(question, color_map),
        )
        carried[UNSAFE_FIELD] = unsafe
        return carried, None

    def english_text(
        self, family: Family, question: Mapping[str, Any], params: Mapping[str, str], scene: Mapping[str, Any], unsafe: list[str]
    ) -> tuple[int, str] | None:
        """From the source's English template on, the first that reads with one meaning, realised
        with the mapped values (synonyms drawn afresh); None when none does."""
        first = int(question.get("template_index", 0)) % len(family.text["en"])
        rng = streams.generator("augment.question", self.seed, image_index=int(scene["image_index"]),
                                question_index=int(question["question_index"]))
        return readable_english(family, params, unsafe, self.vocabulary, RandomStream(rng), first, Counter())

    @staticmethod
    def provenance_only(question: Mapping[str, Any], scene: Mapping[str, Any], color_map: Mapping[str, str]) -> dict[str, Any]:
        """A dropped question as reported: its source text and where it would have gone."""
        return {
            "image_filename": scene["image_filename"],
            "question_index": question.get("question_index"),
            "family": question.get("family"),
            "augmentation": question_provenance(question, color_map),
        }


def mapped_params(params: Mapping[str, str], param_types: Mapping[str, str], color_map: Mapping[str, str]) -> dict[str, str]:
    """Colour parameters follow the objects they described; every other value stays."""
    return {
        name: color_map.get(value, value) if param_types.get(name) == "color" else value
        for name, value in params.items()
    }


def mapped_program(program: Sequence[Mapping[str, Any]], color_map: Mapping[str, str]) -> list[dict[str, Any]]:
    return [
        {**node, "value_inputs": [color_map.get(v, v) for v in node.get("value_inputs", [])]}
        if node.get("function") == "filter_color" else dict(node)
        for node in program
    ]


def question_provenance(question: Mapping[str, Any], color_map: Mapping[str, str]) -> dict[str, Any]:
    return {
        "kind": "color_swap",
        "source_image_filename": question.get("image_filename"),
        "source_question_index": question.get("question_index"),
        "source_question": question.get("question"),
        "source_answer": question.get("answer"),
        "color_map": dict(color_map),
    }


def carry_questions_over(
    planned: Sequence[tuple[dict, dict]], rendered: Sequence[dict], questions: Sequence[Mapping[str, Any]],
    recolourer: QuestionRecolourer,
) -> tuple[list[dict[str, Any]], list[Dropped], int]:
    """Every source question of every augmented scene, carried over or dropped; and how many were asked."""
    by_image: dict[str, list[Mapping[str, Any]]] = {}
    for question in questions:
        by_image.setdefault(question["image_filename"], []).append(question)
    carried: list[dict[str, Any]] = []
    dropped: list[Dropped] = []
    asked = 0
    for (source, _), scene in zip(planned, rendered, strict=True):
        on_source = by_image.get(source["image_filename"], [])
        asked += len(on_source)
        kept_here, dropped_here = recolourer.questions_for_scene(on_source, scene)
        carried += kept_here
        dropped += dropped_here
    return carried, dropped, asked


def russian_questions(
    questions: Sequence[Mapping[str, Any]], realiser: NativeRealiser, yo_policy: str
) -> tuple[list[dict[str, Any]], list[Dropped]]:
    """The Russian records of the translate stage (:func:`translate.records.realised_record`); a
    question no Russian template says with one reading, or whose family has no Russian text, is
    dropped (reported, never silently)."""
    done, dropped = [], []
    for question in questions:
        provenance = {key: question[key] for key in ("image_filename", "question_index", "family", "augmentation")}
        try:
            record = realised_record(realiser, question, yo_policy)
        except RealisationError as error:  # every Russian template reads two ways on this scene
            dropped.append(Dropped(provenance, f"{AMBIGUOUS}: {error}"))
            continue
        if record is None:
            dropped.append(Dropped(provenance, f"{NO_RUSSIAN}: family {question['family']} has no Russian text"))
            continue
        done.append(record)
    return done, dropped
