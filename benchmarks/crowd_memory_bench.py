"""Peak memory of ``dataset annotate import`` on free-text crowd answers (issue 38).

    nice python benchmarks/crowd_memory_bench.py [--annotators 100] [--items 20] [--base DIR]

Makes tiny stage outputs and an export without Blender (as benchmarks/hostile_sweep.py does), then a
crowd TSV in which every annotator answers each of the first ``--items`` test items with a free text
of seven Cyrillic letters (almost every answer distinct: 100 annotators × 20 items is 2,000 answers,
about 45 KB, the issue's case), and runs the import with each ``--aggregate`` given, each in a process
of its own, with this tree's code and, side by side, with ``--base`` (an older checkout, e.g.
``git archive c69fbd5 | tar -x -C DIR``); prints the TSV's size and each run's peak resident memory and time.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks"), str(ROOT / "tests")]

#: Runs a command and prints its peak resident memory (KiB, Linux's ru_maxrss) as its last line.
PEAK = ("import resource, subprocess, sys; status = subprocess.run(sys.argv[1:], capture_output=True).returncode; "
        "print(status, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")


def write_crowd_tsv(export: Path, path: Path, annotators: int, items: int) -> None:
    ids = [item["meta"]["id"] for item in json.loads((export / "test.json").read_text(encoding="utf-8"))["data"][:items]]
    rng = random.Random(0)
    rows = ["task_id\tannotator\tanswer"]
    for person in range(annotators):
        rows += [f"{ident}\tw{person:03d}\t" + "".join(rng.choice("абвгдежзик") for _ in range(7)) for ident in ids]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotators", type=int, default=100)
    parser.add_argument("--items", type=int, default=20)
    parser.add_argument("--aggregate", nargs="+", default=["majority", "dawid-skene"])
    parser.add_argument("--base", type=Path, default=None, help="an older checkout to run side by side")
    args = parser.parse_args()
    from hostile_sweep import make_inputs

    with tempfile.TemporaryDirectory(prefix="crowd-memory-") as scratch:
        root = Path(scratch)
        export = make_inputs(root / "inputs")["export"]
        answers = root / "crowd.tsv"
        write_crowd_tsv(export, answers, args.annotators, args.items)
        print(f"crowd TSV: {answers.stat().st_size / 1000:.0f} KB, {args.annotators} annotators, {args.items} items")
        trees = {"this tree": ROOT, **({f"base {args.base}": args.base.resolve()} if args.base else {})}
        for method in args.aggregate:
            for name, tree in trees.items():
                command = [sys.executable, "-m", "dataset", "annotate", "import", "--data", str(export), "--answers",
                           str(answers), "--out", str(root / f"report-{method}-{len(name)}"), "--aggregate", method]
                started = time.monotonic()
                result = subprocess.run([sys.executable, "-c", PEAK, *command], cwd=tree, capture_output=True,
                                        text=True, check=True, env={**os.environ, "PYTHONPATH": str(tree)})
                status, peak = result.stdout.split()[-2:]
                assert (root / f"report-{method}-{len(name)}" / "human.json").is_file(), result.stdout
                print(f"--aggregate {method}, {name}: exit {status}, peak {int(peak) / 1024:.0f} MiB, "
                      f"{time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
