"""Text stages at CLEVR scale: time per question and peak memory of each stage, at several sizes, in one run.

For each size N: ``python -m render --graphs-only --n N`` samples N scene graphs (no Blender), then
each text stage runs through its command line, as a user runs it, in its own process:

- questions: ``python -m questions`` (10 per scene, the shipped families);
- translate: ``python -m translate`` (native realiser);
- filter: ``python -m filter --backend morph``.

The largest size's graphs are sampled once (or taken from ``--graphs``, a ``scenes.json`` an earlier
run sampled); each smaller size takes its first scenes (scene i depends on (seed, i) only, so that
is what ``--n`` would sample). Each process's CPU time (user + system) and peak resident memory come from ``os.wait4``; wall
time is measured around it. Per stage: CPU and wall ms per question (questions: per scene too),
questions/s, peak RSS; the last size's time per question is compared with the first's.

    python benchmarks/scale_bench.py --sizes 1000 10000 100000 --out /tmp/scale

Targets (issue: CLEVR scale): peak RSS of every text stage <= 1.5 GB at 100,000 scenes; time per
question at 100,000 within 1.25x of that at 1,000; translate (native) >= 20,000 questions/s end to
end through the CLI; questions <= 5 ms per scene.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

RSS_TARGET_GB = 1.5
GROWTH_TARGET = 1.25
TRANSLATE_TARGET_PER_S = 20_000
QUESTIONS_TARGET_MS_PER_SCENE = 5.0


def run_stage(argv: list[str], root: Path = ROOT) -> dict[str, float]:
    """Run ``python -m ...`` from the repository (or another tree of it); its wall and CPU seconds and peak RSS (bytes)."""
    environment = {**os.environ, "PYTHONPATH": str(root) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", *argv], cwd=root, env=environment, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"scale_bench: {' '.join(argv)} exited with {process.returncode}")
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "peak_rss_bytes": usage.ru_maxrss * 1024}


def count_questions(path: Path) -> int:
    sys.path.insert(0, str(ROOT))
    from ruclevr.jsonstream import JsonDocument

    return JsonDocument(path, "questions").count()


def sample_graphs(scenes: int, folder: Path, workers: int) -> dict[str, float]:
    """The largest size's scene graphs, sampled once (``workers`` shards at a time, then joined);
    smaller sizes take their first scenes."""
    if workers == 1:
        return run_stage(["render", "--graphs-only", "--n", str(scenes), "--out", str(folder), "--quiet", "--overwrite"])
    from concurrent.futures import ThreadPoolExecutor

    started = time.perf_counter()
    argv = ["render", "--graphs-only", "--n", str(scenes), "--out", str(folder), "--quiet", "--overwrite"]
    with ThreadPoolExecutor(workers) as pool:
        shards = list(pool.map(lambda index: run_stage([*argv, "--shard", f"{index}/{workers}"]), range(workers)))
    sys.path.insert(0, str(ROOT))
    from ruclevr.jsonstream import DocumentWriter, JsonDocument

    parts = [JsonDocument(folder / f"scenes.shard-{index}-of-{workers}.json", "scenes") for index in range(workers)]
    with DocumentWriter(folder / "scenes.json", "scenes") as writer:
        for part in parts:
            for scene in part.items():
                writer.write(scene)
        writer.finish({key: value for key, value in parts[0].info().items() if key != "shard"})
    return {"wall_s": time.perf_counter() - started, "cpu_s": sum(shard["cpu_s"] for shard in shards),
            "peak_rss_bytes": max(shard["peak_rss_bytes"] for shard in shards)}


def reuse_graphs(path: Path, scenes: int) -> tuple[Path, dict[str, object]]:
    """An earlier run's scene graphs, checked to hold enough scenes (nothing sampled: no time to report)."""
    sys.path.insert(0, str(ROOT))
    from ruclevr.jsonstream import JsonDocument

    held = JsonDocument(path, "scenes").count()
    if held < scenes:
        raise SystemExit(f"scale_bench: --graphs {path} holds {held} scenes, fewer than the {scenes} asked for")
    return path, {"reused": str(path), "wall_s": 0.0, "cpu_s": 0.0, "peak_rss_bytes": 0}


def first_scenes(source: Path, scenes: int, target: Path) -> None:
    """A scenes.json holding the first ``scenes`` scenes of ``source`` (what --n scenes would sample: scene i
    depends on (seed, i) only)."""
    sys.path.insert(0, str(ROOT))
    from ruclevr.jsonstream import DocumentWriter, JsonDocument

    document = JsonDocument(source, "scenes")
    with DocumentWriter(target, "scenes") as writer:
        for scene in document.items():
            if writer.count == scenes:
                break
            writer.write(scene)
        writer.finish(document.info())


def measure_size(scenes: int, graphs: Path, folder: Path) -> dict[str, object]:
    folder.mkdir(parents=True, exist_ok=True)
    scenes_file = folder / "scenes.json"
    first_scenes(graphs, scenes, scenes_file)
    stages = {
        "questions": ["questions", "--scenes", str(scenes_file), "--out", str(folder / "questions.json"),
                      "--quiet", "--overwrite"],
        "translate": ["translate", "--questions", str(folder / "questions.json"), "--out", str(folder / "questions_ru.json"),
                      "--quiet", "--overwrite"],
        "filter": ["filter", "--in", str(folder / "questions_ru.json"), "--out", str(folder / "kept.json"), "--backend", "morph",
                   "--quiet", "--overwrite"],
    }
    figures: dict[str, object] = {"scenes": scenes}
    for name, argv in stages.items():
        measured = run_stage(argv)
        print(f"  {scenes} scenes: {name} {measured['wall_s']:.1f} s wall, {measured['peak_rss_bytes'] / 1e9:.2f} GB", file=sys.stderr)
        figures[name] = measured
    questions = count_questions(folder / "questions.json")
    figures["questions_count"] = questions
    for name in stages:
        stage = figures[name]
        stage["cpu_ms_per_question"] = 1000 * stage["cpu_s"] / questions
        stage["wall_ms_per_question"] = 1000 * stage["wall_s"] / questions
        stage["questions_per_s"] = questions / stage["wall_s"]
    figures["questions"]["cpu_ms_per_scene"] = 1000 * figures["questions"]["cpu_s"] / scenes
    return figures


def table(results: list[dict[str, object]]) -> str:
    lines = ["| scenes | questions | stage | CPU ms/question | wall ms/question | questions/s (wall) | peak RSS |",
             "|---:|---:|---|---:|---:|---:|---:|"]
    for figures in results:
        for name in ("questions", "translate", "filter"):
            stage = figures[name]
            lines.append(
                f"| {figures['scenes']:,} | {figures['questions_count']:,} | {name} | {stage['cpu_ms_per_question']:.3f} | "
                f"{stage['wall_ms_per_question']:.3f} | {stage['questions_per_s']:,.0f} | {stage['peak_rss_bytes'] / 1e9:.2f} GB |"
            )
    return "\n".join(lines)


def verdicts(results: list[dict[str, object]]) -> list[str]:
    first, last = results[0], results[-1]
    lines = []
    for name in ("questions", "translate", "filter"):
        growth = last[name]["cpu_ms_per_question"] / first[name]["cpu_ms_per_question"]
        rss = last[name]["peak_rss_bytes"] / 1e9
        lines.append(f"{name}: CPU time per question at {last['scenes']:,} scenes is {growth:.2f}x that at {first['scenes']:,} "
                     f"(target <= {GROWTH_TARGET}); peak RSS {rss:.2f} GB (target <= {RSS_TARGET_GB})")
    lines.append(f"questions: {last['questions']['cpu_ms_per_scene']:.2f} CPU ms per scene at {last['scenes']:,} scenes "
                 f"(target <= {QUESTIONS_TARGET_MS_PER_SCENE})")
    lines.append(f"translate: {last['translate']['questions_per_s']:,.0f} questions/s end to end (wall), "
                 f"{1000 / last['translate']['cpu_ms_per_question']:,.0f} per CPU-second, at {last['scenes']:,} scenes "
                 f"(target >= {TRANSLATE_TARGET_PER_S:,})")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000], help="scene counts (default 1000 10000 100000)")
    parser.add_argument("--out", type=Path, required=True, help="scratch folder (several GB at 100,000 scenes)")
    parser.add_argument("--keep", action="store_true", help="keep each size's files (default: removed after measuring)")
    parser.add_argument("--graph-workers", type=int, default=1, help="processes sampling the scene graphs (not measured per question)")
    parser.add_argument("--graphs", type=Path, help="scenes.json to take the scenes from (at least the largest size; e.g. "
                        "OUT/graphs/scenes.json of an earlier run) instead of sampling them again")
    args = parser.parse_args()
    graphs_file, graphs = reuse_graphs(args.graphs, max(args.sizes)) if args.graphs else (
        args.out / "graphs" / "scenes.json", sample_graphs(max(args.sizes), args.out / "graphs", args.graph_workers))
    print(f"  {max(args.sizes)} scene graphs: {graphs['wall_s']:.1f} s wall, {graphs['cpu_s']:.1f} s CPU", file=sys.stderr)
    results = []
    for scenes in sorted(args.sizes):
        folder = args.out / f"n{scenes}"
        results.append(measure_size(scenes, graphs_file, folder))
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
        report = {"machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "load_average": os.getloadavg()},
                  "graphs_only_render": {"scenes": max(args.sizes), **graphs}, "results": results, "verdicts": verdicts(results)}
        (args.out / "scale_bench.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        print(table(results[-1:]), file=sys.stderr)
    print(table(results))
    print()
    print("\n".join(report["verdicts"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
