"""One command-line style for every stage: --version, -q/--quiet, -v/--verbose through logging,
the shared input/output flag names (old spellings still accepted, not shown), progress bars only
on a terminal, and an offline default backend everywhere."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from ruclevr import __version__

REPO = Path(__file__).resolve().parents[1]

# (stage module, words before the options): every command of every stage.
COMMANDS = [
    ("render", []), ("render", ["merge"]), ("render", ["verify"]),
    ("questions", []), ("questions", ["validate"]),
    ("translate", []),
    ("filter", []),
    *[("dataset", [name]) for name in ("build", "export", "hf", "stats", "evaluate", "augment", "gallery")],
    ("dataset", ["annotate", "export"]), ("dataset", ["annotate", "import"]),
    ("dataset", ["seed", "new"]), ("dataset", ["seed", "verify"]), ("dataset", ["leak-check"]),
    ("dataset", ["families", "validate"]),
]
# The flag a command reads its input by (the shared names of docs/cli.md's table), and renamed spellings.
INPUT_FLAGS = {
    ("questions", ()): ("--in", ["--scenes"]),
    ("translate", ()): ("--in", ["--questions"]),
    ("filter", ()): ("--in", []),
    ("dataset", ("hf",)): ("--data", ["--mera"]),
    ("dataset", ("stats",)): ("--data", ["--mera"]),
    ("dataset", ("evaluate",)): ("--data", []),
    ("dataset", ("gallery",)): ("--data", []),
    ("dataset", ("annotate", "export")): ("--data", []),
    ("dataset", ("annotate", "import")): ("--data", []),
    ("dataset", ("seed", "verify")): ("--data", []),
    ("dataset", ("leak-check",)): ("--data", []),
}
OUTPUT_FLAG_EXCEPTIONS = {("render", ("merge",)), ("render", ("verify",)), ("questions", ("validate",)),
                          ("dataset", ("evaluate",)), ("dataset", ("stats",)),  # positional OUT, or optional --out
                          ("dataset", ("seed", "verify")), ("dataset", ("leak-check",)),  # they only read
                          ("dataset", ("families", "validate"))}


@pytest.mark.parametrize("stage, words", COMMANDS, ids=[" ".join([s, *w]) for s, w in COMMANDS])
def test_every_command_offers_version_quiet_verbose_and_the_shared_flags(run_captured, stage, words) -> None:
    code, out, _ = run_captured(stage, *words, "--version")
    assert code == 0 and out.strip() == f"ruclevr {__version__}"
    code, help_text, _ = run_captured(stage, *words, "--help")
    assert code == 0
    assert "-q, --quiet" in help_text and "-v, --verbose" in help_text
    if (stage, tuple(words)) not in OUTPUT_FLAG_EXCEPTIONS:
        assert "--out" in help_text
    expected = INPUT_FLAGS.get((stage, tuple(words)))
    if expected is not None:
        flag, old_spellings = expected
        assert f"{flag} " in help_text
        for old in old_spellings:
            assert old not in help_text  # a hidden alias


def test_old_flag_spellings_still_work(tmp_path, run_captured) -> None:
    from sample_outputs import write_sample_stage_outputs

    inputs = write_sample_stage_outputs(tmp_path / "in", n_scenes=4)
    code, _, err = run_captured("dataset", "export", "--questions", inputs["questions"], "--scenes", inputs["scenes"],
                                "--out", tmp_path / "mera", "--shots", "1")
    assert code == 0, err
    new = run_captured("dataset", "stats", "--data", str(tmp_path / "mera"))
    old = run_captured("dataset", "stats", "--mera", str(tmp_path / "mera"))
    assert new[0] == old[0] == 0 and new[1] == old[1]
    for stage, old_flag in (("questions", "--scenes"), ("translate", "--questions")):
        code, _, err = run_captured(stage, old_flag, str(tmp_path / "missing.json"), "--out", str(tmp_path / "o.json"))
        assert code == 2 and "missing.json" in err and "unrecognized" not in err  # parsed; the file is what is wrong


def write_filter_input(path: Path) -> Path:
    questions = [{"image_index": i, "image_filename": f"ruclevr_{i:06d}.png", "question": "(English)", "answer": "yes",
                  "family": "exist/zero_hop", "question_type": "binary", "question_ru": text, "answer_ru": "да"}
                 for i, text in enumerate(["Есть ли серый цилиндр?", "Есть ли пять больших куба?"] * 20)]
    path.write_text(json.dumps({"info": {}, "questions": questions}, ensure_ascii=False), encoding="utf-8")
    return path


def test_quiet_and_verbose_set_the_logging_level(tmp_path, run_captured) -> None:
    source = write_filter_input(tmp_path / "q.json")
    code, _, err = run_captured("filter", "--in", str(source), "--out", str(tmp_path / "a.json"))
    assert code == 0 and "kept 20 of 40 questions" in err
    code, _, err = run_captured("filter", "-q", "--in", str(source), "--out", str(tmp_path / "b.json"))
    assert code == 0 and err == ""
    code, _, err = run_captured("filter", "-q", "-v", "--in", str(source), "--out", str(tmp_path / "c.json"))
    assert code == 2 and "not allowed with argument" in err


def test_filters_default_backend_is_the_offline_morph_checker(tmp_path, run_captured) -> None:
    source = write_filter_input(tmp_path / "q.json")
    assert run_captured("filter", "--in", str(source), "--out", str(tmp_path / "kept.json"))[0] == 0
    kept = json.loads((tmp_path / "kept.json").read_text(encoding="utf-8"))["questions"]
    assert {item["acceptability"]["backend"] for item in kept} == {"morph"}


def run_filter_process(source: Path, out: Path, on_terminal: bool) -> str:
    """Run python -m filter with stderr on a pipe or on a pseudo-terminal; return what it wrote there."""
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    environment.pop("TQDM_DISABLE", None)
    command = [sys.executable, "-m", "filter", "--in", str(source), "--out", str(out), "--batch-size", "4"]
    if not on_terminal:
        return subprocess.run(command, capture_output=True, text=True, timeout=120, env=environment, check=True).stderr
    main_end, child_end = pty.openpty()
    fcntl.ioctl(child_end, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))  # a new pty is 0 columns wide
    process = subprocess.Popen(command, stderr=child_end, stdout=subprocess.DEVNULL, env=environment)
    os.close(child_end)
    chunks = []
    while True:
        try:
            chunk = os.read(main_end, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    assert process.wait(timeout=120) == 0
    os.close(main_end)
    return b"".join(chunks).decode("utf-8", "replace")


def test_progress_bars_only_on_a_terminal(tmp_path) -> None:
    source = write_filter_input(tmp_path / "q.json")
    piped = run_filter_process(source, tmp_path / "piped.json", on_terminal=False)
    assert "kept 20 of 40" in piped and "\r" not in piped and "q/s" not in piped
    terminal = run_filter_process(source, tmp_path / "tty.json", on_terminal=True)
    assert "filter (morph)" in terminal and "40/40" in terminal
