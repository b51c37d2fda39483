"""Before/after in one run: the same command on another commit's tree and on this working tree, in turn.

The other tree is a ``git archive`` of ``--base`` (default ``main``) in a temporary folder; each
command runs with its tree first on ``PYTHONPATH`` and as its working folder, so
``python benchmarks/x.py`` and ``python -m stage`` run that tree's code. Runs alternate
(base, this tree, base, ...) so both see the same load; each run's CPU time (user + sys of the
command and its children) comes from the operating system. ``{out}`` in the command is replaced
by a fresh folder per run; with ``--compare NAME`` the file ``{out}/NAME`` of every run must be
byte-identical to the first run's. The command's last line of output is shown beside its time
(the benchmarks' ``--json`` figures, for instance).

    python benchmarks/side_by_side.py --repeats 3 -- python benchmarks/questions_bench.py --scenes 300 --json
    python benchmarks/side_by_side.py --compare ru.json -- python -m translate --in Q.json --out {out}/ru.json --quiet
"""

from __future__ import annotations

import argparse
import filecmp
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def export_tree(ref: str, folder: Path) -> None:
    """The files of commit ``ref`` in ``folder``."""
    archive = subprocess.run(["git", "archive", ref], cwd=ROOT, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_run(tree: Path, command: list[str], out: Path) -> tuple[float, str]:
    """CPU seconds of one run of ``command`` on ``tree`` and its last line of output."""
    out.mkdir(parents=True)
    argv = [sys.executable if part == "python" else part.replace("{out}", str(out)) for part in command]
    env = dict(os.environ, PYTHONPATH=str(tree))
    before = children_cpu()
    finished = subprocess.run(argv, cwd=tree, env=env, capture_output=True, text=True)
    seconds = children_cpu() - before
    if finished.returncode:
        sys.exit(f"side_by_side: {' '.join(argv)} exited with {finished.returncode}: {finished.stderr.strip()[-500:]}")
    lines = finished.stdout.strip().splitlines()
    return seconds, lines[-1] if lines else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="main", help="commit to compare with (default main)")
    parser.add_argument("--repeats", type=int, default=1, help="runs of each tree (default 1)")
    parser.add_argument("--compare", help="a file under {out} that must be byte-identical in every run")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command, after --")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command after --")
    with tempfile.TemporaryDirectory(prefix="side_by_side_") as scratch:
        base = Path(scratch) / "base"
        base.mkdir()
        export_tree(args.base, base)
        trees = {args.base: base, "this tree": ROOT}
        cpu: dict[str, list[float]] = {name: [] for name in trees}
        outputs: list[Path] = []
        for repeat in range(args.repeats):
            for number, (name, tree) in enumerate(trees.items()):
                out = Path(scratch) / f"out-{repeat}-{number}"
                seconds, line = timed_run(tree, command, out)
                cpu[name].append(seconds)
                outputs.append(out)
                print(f"{name}: {seconds:.2f} CPU s | {line}", flush=True)
        if args.compare:
            first = outputs[0] / args.compare
            same = all(filecmp.cmp(first, out / args.compare, shallow=False) for out in outputs[1:])
            print(f"{args.compare}: {'byte-identical in every run' if same else 'DIFFERS between runs'}")
        medians = {name: statistics.median(seconds) for name, seconds in cpu.items()}
        for name, median in medians.items():
            print(f"{name}: median {median:.2f} CPU s over {len(cpu[name])} runs")
        print(f"{args.base} / this tree: {medians[args.base] / medians['this tree']:.2f}x")
        load = os.getloadavg()
        print(f"load average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
        if args.compare and not same:
            sys.exit(1)


if __name__ == "__main__":
    main()
