"""Questions decided by their own words: named objects in the sets that exist/count questions test.

Scene graphs come from the renderer's sampler (no rendering). The engine refuses a candidate
whose text puts a named object in the tested set, or where leaving a named object that is in it
out changes the answer (:mod:`questions.named_objects`). This benchmark generates the questions
and audits each written one again: per exist/count question, whether its tested set holds an
object the question names, by the text (target 0) or where it decides the answer (target 0);
per question, whether «другой» would leave open which named object it sets apart (target 0);
and the candidates the engine refused for either reason. The audit reads every family with a
tested set, the what-if ones (in the scene after the edit) and perspective among them: the
questions audited and those whose tested set holds a named object are printed per family group.
``--off`` generates without the refusal, for the figures before it.

The figures above are the engine's own rule applied to its own output. Beside them stands an
independent audit that reads no rule of the engine (:func:`decided_by_words`): each written
question that names an object (a ``unique`` node) and tests a set (``exist``, ``none``, ``count``,
so the integer comparisons too) is run again, its family's program with the same parameters, on
a fixed pool of other sampled scenes; where the program runs on at least :data:`MIN_RUNS` of them
and its answer never changes, the question counts as decided by its words (target 0). A pool can
also flag a question whose answer is merely rare: the examples printed show which it is.

    python benchmarks/named_objects_bench.py --scenes 1000
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from unittest import mock

from questions import named_objects
from questions.families import load_families
from questions.functions import ExecutionError, format_answer
from questions.generate import Settings, generate
from questions.plan import Plan, choices_of, run_plan
from questions.scene_index import SceneIndex
from render import SceneOptions, sample_scene_graph

#: The audit's pool: scenes sampled with the run's seed plus POOL_SEED_OFFSET, never those asked about.
POOL_SCENES, POOL_SEED_OFFSET = 1000, 1000
#: Runs on the pool a question needs before one unchanging answer counts as decided by its words.
MIN_RUNS = 15
#: Functions whose input is a set the answer tests (an integer comparison compares two counts).
SET_TESTS = ("exist", "none", "count")
SCENE_OPTIONS = SceneOptions(min_objects=3, max_objects=10)


def scene_pool(seed: int, count: int = POOL_SCENES) -> list[SceneIndex]:
    """The audit's fixed pool of sampled scenes (seeded: the same for every run of one seed)."""
    return [SceneIndex.from_scene(sample_scene_graph(seed + POOL_SEED_OFFSET, index, SCENE_OPTIONS)) for index in range(count)]


def audited(plan: Plan) -> bool:
    """Whether the audit reads a family: it names an object and tests a set."""
    return any(node.kind == "unique" for node in plan.nodes) and any(node.function in SET_TESTS for node in plan.nodes)


def answers_on_pool(plan: Plan, choices: tuple, pool: list[SceneIndex]) -> Counter[str]:
    """The program's answers over the pool, each with the number of scenes giving it (scenes where
    it cannot run, such as a named object missing or not the only one, are left out)."""
    answers: Counter[str] = Counter()
    for scene in pool:
        try:
            answers[format_answer(run_plan(plan, choices, scene)[-1])] += 1
        except ExecutionError:
            continue
    return answers


def decided_by_words(plan: Plan, choices: tuple, pool: list[SceneIndex]) -> bool:
    """Whether the program runs on at least :data:`MIN_RUNS` pool scenes and always gives one answer."""
    return one_answer(answers_on_pool(plan, choices, pool))


def one_answer(answers: Counter[str]) -> bool:
    """Whether the answers over the pool are at least :data:`MIN_RUNS` runs of one answer."""
    return sum(answers.values()) >= MIN_RUNS and len(answers) == 1


def independent_audit(questions: list[dict], plans: dict[str, Plan], pool: list[SceneIndex]) -> tuple[int, list[str]]:
    """(questions audited, those decided by their words, each as family, answer and text): the
    pool gives one answer, the question's own (a question whose own scene answers otherwise is
    one the pool merely never met the rarer answer of)."""
    checked = 0
    decided: list[str] = []
    on_pool: dict[tuple[str, tuple], Counter[str]] = {}  # a family asked again with the same parameters
    for question in questions:
        plan = plans[question["family"]]
        if not audited(plan):
            continue
        checked += 1
        key = (question["family"], tuple(sorted(question["params"].items())))
        if key not in on_pool:
            on_pool[key] = answers_on_pool(plan, choices_of(plan, question["params"]), pool)
        answers = on_pool[key]
        if one_answer(answers) and question["answer"] in answers:
            decided.append(f"{question['family']} ({question['answer']} on {answers.total()} pool scenes): {question['question']}")
    return checked, decided


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenes", type=int, default=1000, help="number of sampled scenes (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of scenes and questions (default 0)")
    parser.add_argument("--off", action="store_true", help="generate without the refusal (the figures before it)")
    parser.add_argument("--pool", type=int, default=POOL_SCENES, help=f"scenes in the audit's pool (default {POOL_SCENES})")
    args = parser.parse_args()

    scenes = [sample_scene_graph(args.seed, index, SCENE_OPTIONS) for index in range(args.scenes)]
    families = load_families()
    named_objects.REFUSED.clear()
    started = time.perf_counter()
    if args.off:
        with mock.patch("questions.search.refuse_decided", return_value=False), \
                mock.patch("questions.search.refused_early", return_value=None):
            questions = generate(scenes, families, Settings(seed=args.seed), progress=False)
    else:
        questions = generate(scenes, families, Settings(seed=args.seed), progress=False)
    seconds = time.perf_counter() - started

    by_scene = {scene["image_index"]: SceneIndex.from_scene(scene) for scene in scenes}
    plans = {family_id: Plan.of(family) for family_id, family in families.items()}
    audit: Counter[str] = Counter()
    groups: Counter[tuple[str, str]] = Counter()
    examples: dict[str, str] = {}
    for question in questions:
        plan = plans[question["family"]]
        tested = [node.inputs[0] for node in plan.nodes if node.function in named_objects.TESTED]
        choices = choices_of(plan, question["params"])
        outputs = run_plan(plan, choices, by_scene[question["image_index"]])
        reason = named_objects.text_refusal(plan, choices, outputs, by_scene[question["image_index"]])
        if reason is not None:
            audit[reason] += 1
            examples.setdefault(reason, question["question"])
        if not tested:
            continue
        audit["exist/count questions"] += 1
        groups[(plan.family.group, "audited")] += 1
        named = [outputs[t] for t, node in enumerate(plan.nodes) if node.kind == "unique"]
        if any(outputs[s] >> thing & 1 for s in tested for thing in named):
            audit["tested set holds a named object"] += 1
            groups[(plan.family.group, "holding a named object")] += 1

    print(f"{len(scenes)} scenes, {len(questions)} questions in {seconds:.1f} s (refusal {'off' if args.off else 'on'})")
    for key in ("exist/count questions", "tested set holds a named object", named_objects.DECIDED, named_objects.MAY_COUNT,
                named_objects.OTHER_OPEN):
        print(f"  {key}: {audit[key]}" + (f"  e.g. {examples[key]!r}" if key in examples else ""))
    print("exist/count questions audited per family group (those whose tested set holds a named object):")
    for group in sorted({group for group, _ in groups}):
        print(f"  {group}: {groups[(group, 'audited')]} ({groups[(group, 'holding a named object')]})")
    started = time.perf_counter()
    checked, decided = independent_audit(questions, plans, scene_pool(args.seed, args.pool))
    print(f"independent audit ({args.pool} pool scenes, the same answer on every one of >= {MIN_RUNS} runs; "
          f"{time.perf_counter() - started:.1f} s): {len(decided)} of {checked} questions decided by their words")
    for line in decided[:12]:
        print(f"  {line}")
    refused: Counter[str] = Counter()
    for (_family, reason), count in named_objects.REFUSED.items():
        refused[reason] += count
    print("refused (a candidate at the end of the search; a branch cut once its nodes tell):")
    for reason, count in sorted(refused.items()):
        print(f"  {reason}: {count}")
    print("by family:")
    for (family, reason), count in sorted(named_objects.REFUSED.items(), key=lambda item: -item[1])[:12]:
        print(f"  {family}: {count} {reason}")


if __name__ == "__main__":
    main()
