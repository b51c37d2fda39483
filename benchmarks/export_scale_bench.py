"""``python -m dataset export`` at CLEVR scale: CPU time per question and peak memory, this tree beside another commit's.

For each size N the inputs are N graphs-only scenes taken from ``--graphs`` and their questions made
by the real text stages (questions, translate, native; filter, morph), exactly as
``benchmarks/scale_bench.py`` makes them, cached in ``--inputs``/nN/ (1,000,000 questions take about
20 CPU minutes to make) and kept for later runs; the images are placeholders, one small PNG per
scene (the export links or copies them, it never reads them). Then the export runs through its
command line in its own process, alternately on ``--base``'s tree (a ``git archive``) and on this
tree, so both see the same load; CPU time (user + system) and peak RSS come from ``os.wait4``. Both
exports must be byte-identical (``shots.json``, ``test.json``, ``provenance.json``, ``samples/``).

    python benchmarks/export_scale_bench.py --sizes 10000 100000 --inputs /tmp/export_scale \\
        --graphs /tmp/scale_run/graphs/scenes.json --base main --base-sizes 10000

Targets (issue: CLEVR scale): peak RSS <= 1.5 GB at 100,000 scenes; CPU time per question at the
largest size within 1.25x of that at the smallest.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))

from sample_outputs import tiny_png  # noqa: E402
from scale_bench import GROWTH_TARGET, RSS_TARGET_GB, measure_size  # noqa: E402
from side_by_side import export_tree  # noqa: E402

from ruclevr.jsonstream import JsonDocument  # noqa: E402

EXPORT_FILES = ("shots.json", "test.json", "provenance.json")
PLACEHOLDER_SOURCES = 16  # distinct placeholder images, copied (a file can have only about 65,000 hard links)


def prepare_inputs(folder: Path, scenes: int, graphs: Path | None) -> None:
    """``folder``/kept.json and scenes.json made by the real text stages unless already there, and a placeholder image per scene."""
    if not (folder / "kept.json").exists():
        if graphs is None:
            raise SystemExit(f"export_scale_bench: {folder / 'kept.json'} is missing; pass --graphs to make it")
        measure_size(scenes, graphs, folder)
    images = folder / "images"
    if not (images / ".complete").exists():
        images.mkdir(exist_ok=True)
        sources = [tiny_png(index) for index in range(PLACEHOLDER_SOURCES)]
        for index, scene in enumerate(JsonDocument(folder / "scenes.json", "scenes").items()):
            (images / scene["image_filename"]).write_bytes(sources[index % PLACEHOLDER_SOURCES])
        (images / ".complete").write_text("", encoding="utf-8")


def run_export(tree: Path, inputs: Path, out: Path, memory_limit_gb: float | None) -> dict[str, object]:
    """One ``python -m dataset export`` of ``inputs`` into ``out`` on ``tree``: wall and CPU seconds, peak RSS (bytes)."""
    argv = [sys.executable, "-m", "dataset", "export", "--questions", str(inputs / "kept.json"), "--scenes",
            str(inputs / "scenes.json"), "--images", str(inputs / "images"), "--out", str(out), "--shots", "10"]
    environment = {**os.environ, "PYTHONPATH": str(tree)}

    def limit_memory() -> None:
        if memory_limit_gb is not None:
            limit = int(memory_limit_gb * 1e9)
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    started = time.perf_counter()
    process = subprocess.Popen(argv, cwd=tree, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               preexec_fn=limit_memory)
    stderr = process.stderr.read() if process.stderr else b""
    _, status, usage = os.wait4(process.pid, 0)
    figures: dict[str, object] = {"wall_s": time.perf_counter() - started, "cpu_s": usage.ru_utime + usage.ru_stime,
                                  "peak_rss_bytes": usage.ru_maxrss * 1024, "exit": os.waitstatus_to_exitcode(status)}
    if figures["exit"] != 0:
        figures["error"] = stderr.decode(errors="replace").strip().splitlines()[-1:]
    return figures


def same_exports(first: Path, second: Path) -> bool:
    if any(not filecmp.cmp(first / name, second / name, shallow=False) for name in EXPORT_FILES):
        return False
    names = sorted(path.name for path in (first / "samples").iterdir())
    return names == sorted(path.name for path in (second / "samples").iterdir())


def measure(scenes: int, inputs: Path, trees: dict[str, Path], scratch: Path, memory_limit_gb: float | None) -> dict[str, object]:
    figures: dict[str, object] = {"scenes": scenes}
    outs = {}
    for name, tree in trees.items():
        outs[name] = scratch / f"n{scenes}-{name.replace(' ', '_')}"
        shutil.rmtree(outs[name], ignore_errors=True)
        figures[name] = run_export(tree, inputs, outs[name], memory_limit_gb if name != "this tree" else None)
        print(f"  {scenes} scenes, {name}: {json.dumps(figures[name])}", file=sys.stderr, flush=True)
    info = JsonDocument(outs["this tree"] / "provenance.json", "provenance").info()
    figures["questions"] = info["counts"]["input_questions"]
    for name in trees:
        run = figures[name]
        assert isinstance(run, dict)
        run["cpu_us_per_question"] = 1e6 * run["cpu_s"] / figures["questions"]
    if len(trees) > 1:
        base = next(name for name in trees if name != "this tree")
        if figures[base]["exit"] == 0:  # else the base run failed (over its memory limit): nothing to compare
            figures["identical_to_base"] = same_exports(outs[base], outs["this tree"])
    for out in outs.values():
        shutil.rmtree(out, ignore_errors=True)
    return figures


def table(results: list[dict[str, object]], trees: list[str]) -> str:
    lines = ["| scenes | questions | tree | CPU s | CPU µs/question | wall s | peak RSS | same bytes as base |",
             "|---:|---:|---|---:|---:|---:|---:|---|"]
    for figures in results:
        for name in trees:
            run = figures.get(name)
            if not isinstance(run, dict):
                continue
            failed = f" (exit {run['exit']}: {' '.join(run.get('error', []))})" if run["exit"] else ""
            same = "" if name != "this tree" or "identical_to_base" not in figures else str(figures["identical_to_base"])
            lines.append(f"| {figures['scenes']:,} | {figures['questions']:,} | {name}{failed} | {run['cpu_s']:.1f} | "
                         f"{run['cpu_us_per_question']:.1f} | {run['wall_s']:.1f} | {run['peak_rss_bytes'] / 1e9:.2f} GB | {same} |")
    return "\n".join(lines)


def verdicts(results: list[dict[str, object]]) -> list[str]:
    first, last = results[0]["this tree"], results[-1]["this tree"]
    assert isinstance(first, dict) and isinstance(last, dict)
    growth = last["cpu_us_per_question"] / first["cpu_us_per_question"]
    return [f"this tree: CPU time per question at {results[-1]['scenes']:,} scenes is {growth:.2f}x that at "
            f"{results[0]['scenes']:,} (target <= {GROWTH_TARGET}); peak RSS {last['peak_rss_bytes'] / 1e9:.2f} GB "
            f"(target <= {RSS_TARGET_GB})"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000, 100000], help="scene counts (default 10000 100000)")
    parser.add_argument("--inputs", type=Path, required=True, help="folder of the cached inputs (nN/ per size)")
    parser.add_argument("--graphs", type=Path, help="graphs-only scenes.json to make missing inputs from")
    parser.add_argument("--base", help="also export with this commit's tree (e.g. main), alternating, and compare the bytes")
    parser.add_argument("--base-sizes", type=int, nargs="*", help="sizes to run the base tree at (default: all)")
    parser.add_argument("--base-memory-limit", type=float, default=14.0, help="address-space limit of a base run, GB")
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory(prefix="export_scale_bench_", dir=args.inputs) as scratch_name:
        scratch = Path(scratch_name)
        base_tree = scratch / "base"
        if args.base:
            base_tree.mkdir()
            export_tree(args.base, base_tree)
        for scenes in sorted(args.sizes):
            prepare_inputs(args.inputs / f"n{scenes}", scenes, args.graphs)
            trees = {"this tree": ROOT}
            if args.base and (args.base_sizes is None or scenes in args.base_sizes):
                trees = {args.base: base_tree, "this tree": ROOT}
            results.append(measure(scenes, args.inputs / f"n{scenes}", trees, scratch, args.base_memory_limit))
    names = ([args.base] if args.base else []) + ["this tree"]
    report = {"machine": {"cpus": os.cpu_count(), "load_average": os.getloadavg()}, "results": results,
              "verdicts": verdicts(results)}
    (args.inputs / "export_scale_bench.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(table(results, names))
    print()
    print("\n".join(report["verdicts"]))
    print(f"load average at the end: {' '.join(f'{load:.2f}' for load in os.getloadavg())}")
    return 0 if all(figures.get("identical_to_base", True) for figures in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
