"""Memory bounds on small hostile files (issue 24): each command runs in its own process, whose
peak resident memory the kernel reports when it ends (``os.wait4``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import run_export
from probe_round_two import DEEP
from sample_outputs import write_sample_stage_outputs

ROOT = Path(__file__).resolve().parents[1]
MB = 1 << 20


# The child is started from this small launcher, not from pytest itself: Linux counts in a process's
# peak resident size the memory of the process it was forked from until it execs, so a child forked
# from a pytest process that has grown to 400 MB would report at least that.
LAUNCHER = """
import os, subprocess, sys
child = subprocess.Popen([sys.executable, *sys.argv[1:]], stdout=subprocess.DEVNULL)
_, status, usage = os.wait4(child.pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss * 1024)
"""


def peak_rss(argv: list[str], tmp_path: Path) -> tuple[int, int, str]:
    """(exit status, peak resident bytes, stderr) of ``python -m ARGV`` in a child process."""
    with open(tmp_path / "stderr.txt", "w+b") as stderr:
        launched = subprocess.run([sys.executable, "-c", LAUNCHER, "-m", *argv], cwd=ROOT, stdout=subprocess.PIPE,
                                  stderr=stderr, check=True)
        status, peak = (int(part) for part in launched.stdout.split())
        stderr.seek(0)
        return status, peak, stderr.read().decode("utf-8", "replace")


def laughs() -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, 10):
        lines.append(f"{chr(97 + level)}: &{chr(97 + level)} [{','.join(['*' + chr(96 + level)] * 9)}]")
    return "\n".join(lines) + "\n"


def exported_ids(tmp_path: Path) -> tuple[Path, list[int]]:
    data = tmp_path / "mera"
    assert run_export(write_sample_stage_outputs(tmp_path / "in", n_scenes=4), data, "--shots", "1") == 0
    return data, [item["meta"]["id"] for item in json.loads((data / "test.json").read_text(encoding="utf-8"))["data"]]


@pytest.mark.parametrize("case", ["nested item", "nested member", "alias family file", "predictions", "answers TSV"])
def test_hostile_files_are_refused_in_bounded_memory(tmp_path, case) -> None:
    out = str(tmp_path / "never" / "out.json")
    if case == "nested item":  # 200 KB: `[` nested 100,000 deep as the one scene
        path = tmp_path / "scenes.json"
        path.write_bytes(b'{"info": {}, "scenes": [' + DEEP + b"]}")
        argv, limit = ["questions", "--in", str(path), "--out", out, "--quiet"], 500 * MB
    elif case == "nested member":
        path = tmp_path / "scenes.json"
        path.write_bytes(b'{"info": ' + DEEP + b', "scenes": []}')
        argv, limit = ["questions", "--in", str(path), "--out", out, "--quiet"], 500 * MB
    elif case == "alias family file":  # 377 bytes of nested aliases: 10**9 strings once expanded
        families = tmp_path / "families"
        families.mkdir()
        (families / "laughs.yaml").write_text(laughs(), encoding="utf-8")
        assert (families / "laughs.yaml").stat().st_size < 1400
        argv, limit = ["questions", "validate", str(families / "laughs.yaml")], 500 * MB
    elif case == "answers TSV":  # 30 MB: every item answered by ever more people (once 3 GB resident)
        data, ids = exported_ids(tmp_path)
        path = tmp_path / "answers.tsv"
        with open(path, "w", encoding="utf-8") as handle:
            handle.write("task_id\tannotator\tanswer\n")
            rows = [f"{i}\tworker{{0}}\tкуб\n" for i in ids]
            block = "".join(rows)
            person = 0
            while handle.tell() < 30 * MB:
                handle.write("".join(block.format(person + k) for k in range(1000)))
                person += 1000
        argv = ["dataset", "annotate", "import", "--data", str(data), "--answers", str(path), "--out", str(tmp_path / "never")]
        limit = 300 * MB
    else:  # 300 MB of predictions: good lines, then 300 MB without a line break (a sparse file)
        data, ids = exported_ids(tmp_path)
        path = tmp_path / "predictions.jsonl"
        with open(path, "wb") as handle:
            handle.write("".join(f'{{"id": {i}, "prediction": "x"}}\n' for i in ids[:2]).encode())
            handle.truncate(300 * MB)
        argv, limit = ["dataset", "evaluate", "--data", str(data), "--predictions", str(path)], 300 * MB
    status, peak, stderr = peak_rss(argv, tmp_path)
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert status == 2 and "Traceback" not in stderr, stderr[-2000:]
    assert len(lines) == 1 or case == "alias family file", stderr  # validate also prints its summary line
    assert {"nested item": "nested more than 64 deep", "nested member": "nested more than 64 deep",
            "alias family file": "aliases", "predictions": "line 3 is longer than the limit",
            "answers TSV": "more than 10000 annotators"}[case] in stderr, stderr
    assert peak < limit, f"{case}: peak resident memory {peak / MB:.0f} MB"
    assert not (tmp_path / "never").exists()
