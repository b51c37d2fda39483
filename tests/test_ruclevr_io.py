"""Atomic output: a file that exists is complete, and a failure leaves nothing behind."""

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from ruclevr.io import atomic_open, atomic_write_json, process_scratch_directory, read_json, remove_stale_temporaries


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


def test_scratch_folders_of_killed_processes_are_removed_by_the_next_one(tmp_path, monkeypatch):
    """A worker killed outright leaves its scratch folder; the next process of that kind removes it,
    and leaves alone the folders of processes still running (this one's)."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)  # re-read TMPDIR
    child = subprocess.run(
        [sys.executable, "-c",
         "import os, signal\nfrom ruclevr.io import process_scratch_directory\n"
         "folder = process_scratch_directory('test-scratch-')\nopen(os.path.join(folder.name, 'half.exr'), 'w').close()\n"
         "print(folder.name, flush=True)\nos.kill(os.getpid(), signal.SIGKILL)"],
        capture_output=True, text=True, env={**os.environ, "TMPDIR": str(tmp_path)}, cwd=Path(__file__).parents[1])
    assert child.returncode == -signal.SIGKILL
    left_behind = Path(child.stdout.strip())
    assert left_behind.parent == tmp_path and (left_behind / "half.exr").exists()
    unrelated = tmp_path / "test-scratch-elsewhere"  # not named by host and pid: never touched
    unrelated.mkdir()
    mine = process_scratch_directory("test-scratch-")
    try:
        assert not left_behind.exists()
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted([Path(mine.name).name, unrelated.name])
        again = process_scratch_directory("test-scratch-")  # a live process's folder stays
        assert Path(mine.name).exists()
        again.cleanup()
    finally:
        mine.cleanup()


def test_an_output_folder_is_held_by_one_run_and_a_second_stops_before_writing(tmp_path) -> None:
    import pytest

    from ruclevr.cli import UsageError
    from ruclevr.io import hold_output_folder

    folder = tmp_path / "new" / "out"
    with hold_output_folder(folder):
        assert folder.is_dir()
        with pytest.raises(UsageError, match="is being written by another run"), hold_output_folder(folder):
            raise AssertionError("a second hold of a held folder must not get in")
        (folder / "written.txt").write_text("x", encoding="utf-8")
    with hold_output_folder(folder):  # free again once the first run ends
        pass
    assert (folder / "written.txt").exists()
    with hold_output_folder(tmp_path / "never" / "used"):
        pass
    assert not (tmp_path / "never").exists()  # made for a run that wrote nothing: removed again


def test_an_output_that_is_an_input_under_another_name_is_refused(tmp_path) -> None:
    import os

    import pytest

    from ruclevr.cli import UsageError
    from ruclevr.paths import check_not_an_input

    source = tmp_path / "scenes.json"
    source.write_text("{}", encoding="utf-8")
    os.link(source, tmp_path / "hard-link.json")
    (tmp_path / "sym-link.json").symlink_to(source)
    for out in (source, tmp_path / "hard-link.json", tmp_path / "sym-link.json", tmp_path / "." / "scenes.json"):
        with pytest.raises(UsageError, match="--out must differ from --in"):
            check_not_an_input(out, {"--in": source})
    check_not_an_input(tmp_path / "other.json", {"--in": source, "--predictions": None})


def test_a_shard_leaving_a_shared_lock_folder_keeps_it_for_the_shards_still_running(tmp_path) -> None:
    from ruclevr.cli import UsageError
    from ruclevr.io import hold_stage_output

    out = tmp_path / "questions.json"
    lock = tmp_path / ".questions.json.lock"
    with hold_stage_output(out, "file", shared=True):  # one shard still running
        with hold_stage_output(out, "file", shared=True):  # another shard, done first
            assert lock.is_dir()
        assert lock.is_dir()  # the first to finish does not remove the lock the other still holds
        with pytest.raises(UsageError, match="being written by another run"):
            with hold_stage_output(out, "file"):  # a whole run meanwhile
                pass
    assert not lock.exists()  # the last holder removes it
    with hold_stage_output(out, "file"):
        assert lock.is_dir()
    assert not lock.exists()


def test_one_check_says_what_keeps_a_path_from_being_a_regular_file(tmp_path) -> None:
    from ruclevr.cli import UsageError
    from ruclevr.io import NOT_REGULAR, file_problem, is_regular_or_missing
    from ruclevr.paths import regular_file

    file, fifo = tmp_path / "a.json", tmp_path / "pipe"
    file.write_text("{}", encoding="utf-8")
    os.mkfifo(fifo)
    assert [file_problem(path) for path in (file, tmp_path / "gone", tmp_path, fifo)] == [
        None, "does not exist", NOT_REGULAR, NOT_REGULAR]
    assert [is_regular_or_missing(path) for path in (file, tmp_path / "gone", tmp_path, fifo)] == [True, True, False, False]
    assert regular_file(file, "--in") == file
    with pytest.raises(UsageError, match=r"^--in '.*pipe' is not a regular file$"):
        regular_file(fifo, "--in")
    with pytest.raises(UsageError, match=r"^--in '.*gone' does not exist$"):
        regular_file(tmp_path / "gone", "--in")


def test_a_linked_or_copied_file_replaces_its_target_whole_even_past_a_killed_runs_temporary(tmp_path) -> None:
    from ruclevr.io import atomic_link_or_copy

    source, target = tmp_path / "source.png", tmp_path / "out" / "image.png"
    source.write_bytes(b"new picture")
    target.parent.mkdir()
    target.write_bytes(b"old")
    (target.parent / f".image.png.{os.getpid()}.tmp").write_bytes(b"half")  # this pid's, from a killed run
    atomic_link_or_copy(source, target)
    assert target.read_bytes() == b"new picture" and os.listdir(target.parent) == ["image.png"]
    (target.parent / "image.png").unlink()
    atomic_link_or_copy(source, target)
    assert target.stat().st_ino == source.stat().st_ino  # a hard link where one can be made


def test_staged_files_change_nothing_until_the_commit_renames_them_all(tmp_path) -> None:
    from ruclevr.io import StagedFiles

    first, last = tmp_path / "test.json", tmp_path / "provenance.json"
    first.write_text("old test", encoding="utf-8")
    last.write_text("old provenance", encoding="utf-8")
    with pytest.raises(RuntimeError), StagedFiles([first, last]) as staged:
        staged[first].write_text("new test", encoding="utf-8")
        raise RuntimeError("killed before the commit")
    assert (first.read_text(), last.read_text()) == ("old test", "old provenance")
    assert sorted(os.listdir(tmp_path)) == ["provenance.json", "test.json"]
    with StagedFiles([first, last]) as staged:
        staged[first].write_text("new test", encoding="utf-8")
        staged[last].write_text("new provenance", encoding="utf-8")
        staged.commit()
    assert (first.read_text(), last.read_text()) == ("new test", "new provenance")
    assert sorted(os.listdir(tmp_path)) == ["provenance.json", "test.json"]
