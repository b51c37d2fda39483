"""Atomic output: a file that exists is complete, and a failure leaves nothing behind."""

import json
import os

import pytest

from ruclevr.io import atomic_open, atomic_write_json, read_json, remove_stale_temporaries


def test_atomic_write_json_round_trips_unicode(tmp_path):
    target = tmp_path / "sub" / "a.json"
    atomic_write_json(target, {"вопрос": "Сколько кубов?"})
    assert read_json(target) == {"вопрос": "Сколько кубов?"}
    assert "Сколько" in target.read_text(encoding="utf-8")
    assert os.listdir(target.parent) == ["a.json"]


def test_failure_mid_write_keeps_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "a.json"
    atomic_write_json(target, {"v": 1})
    with pytest.raises(RuntimeError):
        with atomic_open(target) as handle:
            handle.write('{"v": 2')
            raise RuntimeError("killed")
    assert json.loads(target.read_text()) == {"v": 1}
    assert os.listdir(tmp_path) == ["a.json"]


def test_stale_temporaries_are_removed(tmp_path):
    (tmp_path / ".a.json.x1.tmp").write_text("half")
    (tmp_path / "keep.json").write_text("{}")
    assert remove_stale_temporaries(tmp_path) == 1
    assert os.listdir(tmp_path) == ["keep.json"]


def test_written_files_get_the_usual_permissions(tmp_path):
    old = os.umask(0o022)
    try:
        atomic_write_json(tmp_path / "a.json", {})
    finally:
        os.umask(old)
    assert (tmp_path / "a.json").stat().st_mode & 0o777 == 0o644


def test_read_json_input_turns_missing_and_malformed_files_into_usage_errors(tmp_path):
    from ruclevr.cli import UsageError
    from ruclevr.io import read_json_input

    with pytest.raises(UsageError, match=r"^--in x\.json does not exist$"):
        read_json_input(tmp_path / "x.json", "--in x.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(UsageError, match=r"^bad is not valid JSON: "):
        read_json_input(tmp_path / "bad.json", "bad")
    with pytest.raises(UsageError, match=r"^dir cannot be read: "):
        read_json_input(tmp_path, "dir")
    (tmp_path / "ok.json").write_text('{"a": 1}')
    assert read_json_input(tmp_path / "ok.json", "ok") == {"a": 1}
