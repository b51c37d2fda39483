"""A virtual environment of its own for a test that needs other package versions than bpy's.

bpy 5.0.1 pins NumPy 1.x and this project's ``datasets`` 4; lm-evaluation-harness and the
``datasets`` 3.6 check need other versions, so they run in a fresh venv made here with pip
(from the package index, or its cache). ``requirements`` are installed with their dependencies,
``no_deps`` without (for a package whose full dependency list the test does not need).

With ``RUCLEVR_TEST_VENVS=DIR`` set, each environment is kept under ``DIR`` (named by a hash of
its packages) and reused by later runs; by default it lives in the test's temporary folder.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

PIP_TIMEOUT_SECONDS = 900


def base_python() -> str:
    """The interpreter the current venv was made from (a venv made from a venv's python works too)."""
    return getattr(sys, "_base_executable", None) or sys.executable


def make_venv(folder: Path, requirements: Sequence[str], no_deps: Sequence[str] = ()) -> Path:
    """Create ``folder`` as a venv with these packages (or reuse the kept one); return its python."""
    keep = os.environ.get("RUCLEVR_TEST_VENVS")
    if keep:
        key = hashlib.sha256(repr((sorted(requirements), sorted(no_deps))).encode()).hexdigest()[:16]
        folder = Path(keep) / key
        if (folder / ".complete").is_file():
            return folder / "bin" / "python"
        shutil.rmtree(folder, ignore_errors=True)
    subprocess.run([base_python(), "-m", "venv", str(folder)], check=True, timeout=120)
    python = folder / "bin" / "python"
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    if requirements:
        _run_pip([*pip, *requirements])
    if no_deps:
        _run_pip([*pip, "--no-deps", *no_deps])
    (folder / ".complete").touch()
    return python


def _run_pip(command: list[str]) -> None:
    result = subprocess.run(command, capture_output=True, text=True, timeout=PIP_TIMEOUT_SECONDS, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command[3:])} failed:\n{result.stderr[-3000:]}")


def offline_environment(**extra: str) -> dict[str, str]:
    """The current environment with the Hub switched off and no PYTHONPATH leaking this project in."""
    environment = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    environment.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", **extra)
    return environment
