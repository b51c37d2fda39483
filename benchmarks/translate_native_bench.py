"""Native Russian realiser speed: questions/s on one core, warm caches against cold, side by side.

Questions are drawn over every family that has Russian text (the shipped families by default), with
random parameter values, and realised three ways in one process pinned to one core:

- warm: ``NativeRealiser.realise`` after one pass has filled the caches (the steady state of
  ``python -m translate``), median of --repeats passes; the reading check runs on every question
  (each carries an empty ``unsafe_readings``, so nothing is refused);
- cold: a fresh realiser with the morphology caches cleared, one pass (every noun phrase is
  inflected by pymorphy3 the first time it is seen);
- check: ``filter.morph.MorphChecker.problems`` on every output, for scale (the ``morph`` filter's work).

    python benchmarks/translate_native_bench.py --questions 50000

Target: warm >= 20,000 questions/s on one core.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from assets.vocabulary import ATTRIBUTES, load_vocabulary  # noqa: E402
from filter.morph import MorphChecker  # noqa: E402
from questions.family_sources import FamilySources, add_family_arguments, sources_from_arguments  # noqa: E402
from russian import morphology  # noqa: E402
from translate.native import DEFAULT_FAMILIES_DIR, NativeRealiser  # noqa: E402

TARGET_PER_S = 20_000


def pin_to_one_core() -> str:
    """Run on one CPU so the figure is per core; say which, or why not."""
    if not hasattr(os, "sched_setaffinity"):
        return "not pinned (no sched_setaffinity on this system)"
    cpu = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})
    return f"pinned to CPU {cpu}"


def sample_questions(realiser: NativeRealiser, count: int, seed: int) -> list[dict]:
    """``count`` question records over every family with Russian text, values drawn at random."""
    vocabulary = load_vocabulary()
    values = {kind: ["", *vocabulary.names(kind)] for kind in ATTRIBUTES}
    values["relation"] = list(vocabulary.relations)
    values["integer"] = [str(n) for n in range(21)]
    families = [family for family in realiser.families.values() if family.templates]
    generator = np.random.default_rng([seed, 0])
    questions = []
    for index in range(count):
        family = families[index % len(families)]
        params = {slot: values[kind][generator.integers(len(values[kind]))] for slot, kind in family.kinds.items()}
        # No reading changes these answers: the reading check runs in full and refuses nothing.
        questions.append({"family": family.family, "params": params, "image_index": index // 10, "question_index": index,
                          "unsafe_readings": []})
    return questions


def clear_morphology_caches() -> None:
    for function in (morphology.noun_form, morphology.adjective_form, morphology.pronoun_form, morphology.noun_phrase):
        function.cache_clear()


def timed(function, *args) -> tuple[object, float]:
    started = time.perf_counter()
    result = function(*args)
    return result, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=50_000, help="questions per pass (default 50000)")
    parser.add_argument("--repeats", type=int, default=5, help="warm passes; the median is reported (default 5)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the sampled questions and of the realiser (default 0)")
    add_family_arguments(parser)
    args = parser.parse_args()
    sources = sources_from_arguments(args) or FamilySources()
    core = pin_to_one_core()

    clear_morphology_caches()
    cold_realiser, load_s = timed(NativeRealiser, sources, args.seed)
    questions = sample_questions(cold_realiser, args.questions, args.seed)
    cold_texts, cold_s = timed(cold_realiser.realise, questions)

    warm_realiser = NativeRealiser(sources, args.seed)
    warm_realiser.realise(questions)  # fills this realiser's noun-phrase caches
    warm_runs = []
    for _ in range(args.repeats):
        warm_texts, seconds = timed(warm_realiser.realise, questions)
        warm_runs.append(seconds)
    warm_s = statistics.median(warm_runs)
    assert warm_texts == cold_texts, "warm and cold passes disagree"

    checker = MorphChecker()
    problems, check_s = timed(lambda: sum(bool(checker.problems(t)) for t in warm_texts if t))
    figures = {
        "settings": {"questions": args.questions, "repeats": args.repeats, "seed": args.seed, "families": str(DEFAULT_FAMILIES_DIR) if sources.is_shipped_only else sources.record(),
                     "families_with_russian": sum(1 for f in warm_realiser.families.values() if f.templates),
                     "core": core, "python": platform.python_version(), "cpu": platform.processor() or platform.machine()},
        "load_families_s": round(load_s, 3),
        "warm": {"seconds": round(warm_s, 4), "questions_per_s": round(args.questions / warm_s)},
        "cold": {"seconds": round(cold_s, 4), "questions_per_s": round(args.questions / cold_s)},
        "morph_check": {"seconds": round(check_s, 4), "texts_per_s": round(args.questions / check_s), "texts_with_problems": problems},
        "warm_over_cold": round(cold_s / warm_s, 2),
        "warm_over_target": round(args.questions / warm_s / TARGET_PER_S, 2),
    }
    print(json.dumps(figures, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
