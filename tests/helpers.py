"""Functions shared by the tests: a stage's command line run in this process or as ``python -m``.

Fixtures live in ``conftest.py``; plain functions here, imported as ``from helpers import ...``.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from ruclevr.cli import exit_status

ROOT = Path(__file__).resolve().parents[1]


def run_stage(stage: str, *argv: object) -> int:
    """``python -m STAGE ARGV`` in this process: the status it would exit with (argparse's exits
    included); what it prints stays in pytest's capture (``capsys``)."""
    main = importlib.import_module(f"{stage}.cli").main
    return exit_status(main, [str(argument) for argument in argv])


def run_stage_process(stage: str, *argv: object, env: dict[str, str] | None = None,
                      timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``python -m STAGE ARGV`` in a child process from the repository root (``env`` added to this
    process's environment), its output captured as text."""
    return subprocess.run([sys.executable, "-m", stage, *(str(argument) for argument in argv)], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})})


def run_export(stage_outputs: dict[str, Path], out: Path, *extra: object) -> int:
    """``python -m dataset export`` in this process, of the sample stage outputs
    (:func:`sample_outputs.write_sample_stage_outputs`) into ``out``."""
    return run_stage("dataset", "export", "--questions", stage_outputs["questions"], "--scenes", stage_outputs["scenes"],
                     "--out", out, *extra)


def module_from_file(path: Path, name: str | None = None) -> ModuleType:
    """The Python file at ``path`` loaded as a module (named ``name``, or after the file), not put in
    ``sys.modules``: a benchmark script (benchmarks/ is no package) or a file shipped in docs/."""
    spec = importlib.util.spec_from_file_location(name or path.stem, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def benchmark_script(relative: str) -> ModuleType:
    """``benchmarks/RELATIVE`` loaded as a module."""
    return module_from_file(ROOT / "benchmarks" / relative)
