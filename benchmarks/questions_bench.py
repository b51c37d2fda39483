"""Question-engine speed: per-scene time (mean, p50, p99, max) and questions/s over sampled scenes.

Scene graphs come from the renderer's pure-Python sampler (no rendering), 3-10 objects each.
Measured side by side in the same run, for scale: sampling those scene graphs, re-executing
every generated program with the public executor, and generating with CLEVR's 90 families alone.

    python benchmarks/questions_bench.py --scenes 1000

Targets: mean <= 5 ms per scene for 10 questions (max <= 200 ms).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import Counter

from questions.executor import execute_program
from questions.families import load_families
from questions.generate import Settings, generate
from render.sampler import SceneOptions
from render.scene_graph import sample_scene_graph


def percentile(sorted_values: list[float], fraction: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(round(fraction * (len(sorted_values) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenes", type=int, default=1000, help="number of sampled scenes (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the scenes and of the questions (default 0)")
    parser.add_argument("--per-image", type=int, default=10, help="questions per scene (default 10)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args()

    options = SceneOptions(min_objects=3, max_objects=10)
    started = time.perf_counter()
    scenes = [sample_scene_graph(args.seed, index, options) for index in range(args.scenes)]
    sampling = time.perf_counter() - started

    # Timed through generate(), the code path of `python -m questions` (without its progress bar).
    per_scene: list[float] = []
    clock = [time.perf_counter()]

    def lap(position: int, made: list) -> None:
        now = time.perf_counter()
        per_scene.append(now - clock[0])
        clock[0] = now

    settings = Settings(seed=args.seed, per_image=args.per_image)
    families = load_families()
    cpu_started = time.process_time()
    clock[0] = time.perf_counter()
    questions = generate(scenes, families, settings, on_scene=lap, progress=False)
    total = sum(per_scene)
    cpu = time.process_time() - cpu_started

    # Side by side: the same scenes with CLEVR's 90 families only (what the families beyond CLEVR cost).
    clevr_only = {family_id: family for family_id, family in families.items() if family.clevr is not None}
    started = time.perf_counter()
    generate(scenes, clevr_only, settings, progress=False)
    clevr_total = time.perf_counter() - started

    started = time.perf_counter()
    for question in questions:
        execute_program(question["program"], scenes[question["image_index"]])
    executing = time.perf_counter() - started

    ordered = sorted(per_scene)
    counts = Counter(question["image_index"] for question in questions)
    figures = {
        "scenes": args.scenes,
        "objects": f"{options.min_objects}-{options.max_objects}",
        "questions": len(questions),
        "scenes_with_fewer": sum(1 for index in range(args.scenes) if counts[index] < args.per_image),
        "mean_ms": round(1000 * statistics.mean(per_scene), 2),
        "p50_ms": round(1000 * percentile(ordered, 0.50), 2),
        "p99_ms": round(1000 * percentile(ordered, 0.99), 2),
        "max_ms": round(1000 * ordered[-1], 2),
        "cpu_mean_ms": round(1000 * cpu / args.scenes, 2),  # process CPU time: less sensitive to other load
        "questions_per_s": round(len(questions) / total),
        "families": len(families),
        "all_vs_clevr_only": round(total / clevr_total, 2),
        "generation_vs_scene_sampling": round(total / sampling, 2),
        "generation_vs_reexecution": round(total / executing, 1),
    }
    if args.json:
        print(json.dumps(figures))
        return
    print(f"{figures['scenes']} scenes of {figures['objects']} objects, {figures['questions']} questions "
          f"({figures['scenes_with_fewer']} scenes with fewer than {args.per_image})")
    print(f"per scene: mean {figures['mean_ms']} ms, p50 {figures['p50_ms']} ms, p99 {figures['p99_ms']} ms, max {figures['max_ms']} ms")
    print(f"CPU time per scene: mean {figures['cpu_mean_ms']} ms; {figures['questions_per_s']} questions/s")
    print(f"side by side: all {figures['families']} families take {figures['all_vs_clevr_only']}x the time of CLEVR's 90 alone")
    print(f"side by side: generating questions takes {figures['generation_vs_scene_sampling']}x the time of sampling the "
          f"scene graphs, and {figures['generation_vs_reexecution']}x the time of re-executing every generated program")


if __name__ == "__main__":
    main()
