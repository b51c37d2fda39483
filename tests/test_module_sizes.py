"""No Python file of the repository is over 500 lines: a module that grows past it holds more than
one role and is split by role (``dataset/build.py`` and ``dataset/stage_processes.py``,
``filter/morph.py`` and its ``morph_words``, ``morph_agreement`` and ``morph_government``)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 500
SKIPPED_FOLDERS = {".venv", ".git", "__pycache__", "node_modules"}


def python_files(root: Path) -> list[Path]:
    """Every ``*.py`` file under ``root``, virtual environments and version control left out."""
    return sorted(path for path in root.rglob("*.py")
                  if not SKIPPED_FOLDERS.intersection(path.relative_to(root).parts))


def line_count(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_the_walk_sees_every_package_and_skips_virtual_environments() -> None:
    found = {path.relative_to(ROOT).parts[0] for path in python_files(ROOT)}
    assert {"ruclevr", "render", "questions", "translate", "filter", "dataset", "tests", "benchmarks"} <= found
    assert ".venv" not in found


def test_line_count_counts_lines_with_or_without_a_final_newline(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\ny = 2\n", encoding="utf-8")
    (tmp_path / "b.py").write_text("x = 1\ny = 2", encoding="utf-8")
    assert line_count(tmp_path / "a.py") == line_count(tmp_path / "b.py") == 2


def test_no_python_file_is_over_500_lines() -> None:
    too_long = {path.relative_to(ROOT).as_posix(): line_count(path) for path in python_files(ROOT)
                if line_count(path) > MAX_LINES}
    assert not too_long, f"over {MAX_LINES} lines (split by role): {too_long}"
