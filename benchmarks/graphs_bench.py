"""Scene-graph sampling (``python -m render --graphs-only``): this tree against an earlier revision, side by side.

The earlier revision's files come from ``git archive REV`` into a temporary folder. Both trees run
the same command in turn, round after round (so a change of load on a shared machine hits both
alike); each process's CPU time (user + system, from ``os.wait4``) is measured, and the two
``scenes.json`` files of every round are compared byte for byte. A one-scene run of each tree
measures its start-up, which is taken off before dividing by the scene count.

    python benchmarks/graphs_bench.py --n 2000 --rounds 3 --baseline 532c80a

The default baseline, 532c80a, is the sampler that drew and checked each placement attempt alone.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from scale_bench import ROOT, run_stage

BASELINE = "532c80a"


def extract(revision: str, folder: Path) -> Path:
    """The files of ``revision`` (git archive) in ``folder``."""
    folder.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", revision], cwd=ROOT, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def sample(tree: Path, scenes: int, seed: int, out: Path) -> float:
    """CPU seconds of one graphs-only run of ``tree``."""
    argv = ["render", "--graphs-only", "--n", str(scenes), "--seed", str(seed), "--out", str(out), "--quiet", "--overwrite"]
    return run_stage(argv, tree)["cpu_s"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=2000, help="scenes per run (default 2000)")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each tree, alternating (default 3)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--baseline", default=BASELINE, help=f"git revision to compare with (default {BASELINE})")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="graphs_bench_") as scratch:
        trees = {"baseline": extract(args.baseline, Path(scratch) / "baseline"), "this tree": ROOT}
        startup = {name: sample(tree, 1, args.seed, Path(scratch) / f"startup-{index}") for index, (name, tree) in enumerate(trees.items())}
        cpu: dict[str, list[float]] = {name: [] for name in trees}
        identical = []
        for _ in range(args.rounds):
            outputs = {}
            for index, (name, tree) in enumerate(trees.items()):
                outputs[name] = Path(scratch) / f"run-{index}"
                cpu[name].append(sample(tree, args.n, args.seed, outputs[name]))
            baseline_file, this_file = (folder / "scenes.json" for folder in outputs.values())
            identical.append(filecmp.cmp(baseline_file, this_file, shallow=False))
    per_scene = {name: 1000 * (statistics.median(times) - startup[name]) / (args.n - 1) for name, times in cpu.items()}
    report = {
        "scenes": args.n, "rounds": args.rounds, "seed": args.seed, "baseline": args.baseline,
        "cpu_s": cpu, "startup_cpu_s": startup, "cpu_ms_per_scene": per_scene,
        "speed_up": per_scene["baseline"] / per_scene["this tree"],
        "identical_scenes_json": all(identical), "load_average": os.getloadavg(),
    }
    print(json.dumps(report, indent=2))
    for name in trees:
        print(f"{name}: {per_scene[name]:.2f} CPU ms per scene (median of {args.rounds} runs of {args.n:,}, start-up taken off)",
              file=sys.stderr)
    print(f"speed-up {report['speed_up']:.2f}x; scenes.json byte-identical in every round: {report['identical_scenes_json']}",
          file=sys.stderr)
    return 0 if all(identical) else 1


if __name__ == "__main__":
    raise SystemExit(main())
