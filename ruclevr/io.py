"""Atomic file output: every file is written to a temporary name in its folder, then renamed.

A file that exists is complete. A killed run leaves at most ``*.tmp`` files behind, which
:func:`remove_stale_temporaries` clears on the next run.
"""

from __future__ import annotations

import contextlib
import fcntl
import glob
import hashlib
import json
import os
import shutil
import socket
import stat
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

import orjson

from ruclevr import jsonlimits
from ruclevr.cli import UsageError

TMP_SUFFIX = ".tmp"


NOT_REGULAR = "is not a regular file"


def file_problem(path: str | os.PathLike[str]) -> str | None:
    """What keeps ``path`` from being read as a regular file (symbolic links followed): "does not exist",
    "cannot be read: REASON", or :data:`NOT_REGULAR` for a FIFO, a device, a socket or a folder; None
    when it is a regular file. The one home of this check (:func:`ruclevr.paths.regular_file` words it
    for the user)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "does not exist"
    except OSError as error:
        return f"cannot be read: {error.strerror}"
    return None if stat.S_ISREG(mode) else NOT_REGULAR


def is_regular_or_missing(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a regular file (symbolic links followed) or nothing at all (opening it then says
    so): a FIFO, a device or a socket is neither."""
    return file_problem(path) != NOT_REGULAR


def temporary_beside(target: Path, role: str = "") -> tuple[int, str]:
    """A new temporary file in ``target``'s folder (descriptor, name), named ``.NAME.[ROLE.]*.tmp`` as every
    temporary here is: what :func:`remove_stale_temporaries` and :func:`remove_temporaries_of` clear after a
    killed run."""
    return tempfile.mkstemp(prefix=f".{target.name}.{role + '.' if role else ''}", suffix=TMP_SUFFIX, dir=target.parent)


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w", **kwargs: Any) -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path``; on success fsync it and rename it over ``path``."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = temporary_beside(target)
    if "b" not in mode:
        kwargs.setdefault("encoding", "utf-8")
    try:
        with os.fdopen(fd, mode, **kwargs) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        # mkstemp creates 0600; give the file the mode any other new file would get.
        os.chmod(tmp_name, 0o666 & ~_current_umask())
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise


def _current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    with atomic_open(path, "wb") as handle:
        handle.write(data)


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    with atomic_open(path, "w") as handle:
        handle.write(text)


def atomic_write_json(path: str | os.PathLike[str], obj: Any, *, indent: int | None = 2) -> None:
    """Write JSON (UTF-8, non-ASCII kept readable) atomically."""
    atomic_write_text(path, json.dumps(obj, ensure_ascii=False, indent=indent) + "\n")


def atomic_write_compact_json(path: str | os.PathLike[str], obj: Any) -> None:
    """Write compact JSON atomically, for files this project alone reads back (checkpoints): by
    orjson, several times faster than the standard library, which :func:`read_json` reads to the
    same values; by the standard library where orjson cannot (integers beyond 64 bits)."""
    try:
        data = orjson.dumps(obj)
    except TypeError:
        data = json.dumps(obj, ensure_ascii=False).encode()
    atomic_write_bytes(path, data + b"\n")


def atomic_link_or_copy(source: str | os.PathLike[str], target: str | os.PathLike[str]) -> None:
    """Hard-link ``source`` at ``target`` (a copy where no link can be made: another file system), through a
    temporary name beside ``target``: a reader sees the old file or the whole new one."""
    path = Path(target)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}{TMP_SUFFIX}")
    try:
        try:
            os.link(source, temporary)
        except OSError:  # another file system, links not allowed, or a killed run's temporary of this pid
            shutil.copyfile(source, temporary)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def rename_in_order(staged: Iterable[tuple[Path, Path]]) -> None:
    """Rename each complete (staged, target) file over its target, in the order given."""
    for temporary, target in staged:
        os.replace(temporary, target)


class StagedFiles:
    """Temporary names for ``targets`` (``.NAME.staged.tmp`` beside each: a killed run's are removed like
    every temporary here), renamed over the targets together by :meth:`commit`, once every one is complete;
    leaving without a commit removes them, so a failed or killed run never changes the previous outputs."""

    def __init__(self, targets: Sequence[Path]) -> None:
        self.paths = {target: target.with_name(f".{target.name}.staged{TMP_SUFFIX}") for target in targets}

    def __enter__(self) -> StagedFiles:
        for target, staged in self.paths.items():
            remove_temporaries_of(target)
            remove_temporaries_of(staged)
        return self

    def __getitem__(self, target: Path) -> Path:
        return self.paths[target]

    def commit(self) -> None:
        """Rename the staged files over the targets, the last target last; it is removed first, so that
        while it exists every target comes from the same run (a run killed here leaves it missing)."""
        *others, (last_target, last_staged) = self.paths.items()
        last_target.unlink(missing_ok=True)
        rename_in_order([(staged, target) for target, staged in others] + [(last_staged, last_target)])

    def __exit__(self, *exc_info: object) -> None:
        for staged in self.paths.values():
            staged.unlink(missing_ok=True)


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of a file's bytes, read a block at a time (memory stays flat for any size)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_json(path: str | os.PathLike[str]) -> Any:
    """A whole JSON file, held to the limits of :mod:`ruclevr.jsonlimits` (ValueError beyond them)."""
    if not is_regular_or_missing(path) and not os.path.isdir(path):  # a FIFO would wait forever
        raise OSError(0, "not a regular file", os.fspath(path))
    with open(path, "rb") as handle:
        data = handle.read()
    data.decode("utf-8")  # UnicodeDecodeError for bytes that are not UTF-8, as a text read gives
    try:
        return jsonlimits.loads(data)
    except jsonlimits.JsonLimitError as error:
        raise jsonlimits.JsonLimitError(f"{os.fspath(path)} {error}") from None


def read_json_input(path: str | os.PathLike[str], label: str) -> Any:
    """Read a JSON file the user named; a missing or malformed one is a UsageError that starts with ``label``."""
    try:
        return read_json(path)
    except FileNotFoundError:
        raise UsageError(f"{label} does not exist") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise UsageError(f"{label} is not valid JSON: {error}") from None
    except jsonlimits.JsonLimitError as error:
        raise UsageError(f"{label} {str(error).removeprefix(os.fspath(path) + ' ')}") from None
    except RecursionError:
        raise UsageError(f"{label} is nested too deep to read") from None
    except MemoryError:
        raise UsageError(f"{label} is too large to read") from None
    except OSError as error:
        raise UsageError(f"{label} cannot be read: {error.strerror}") from None


def remove_stale_temporaries(folder: str | os.PathLike[str]) -> int:
    """Delete temporaries left by a killed run in ``folder`` (not recursive); return how many."""
    removed = 0
    directory = Path(folder)
    if not directory.is_dir():
        return 0
    for stale in directory.glob(f".*{TMP_SUFFIX}"):
        with contextlib.suppress(FileNotFoundError):
            stale.unlink()
            removed += 1
    return removed


def remove_temporaries_of(target: str | os.PathLike[str]) -> int:
    """Delete the temporaries a killed run left for ``target`` only (``.NAME.*.tmp`` beside it):
    another stage may be writing into the same folder right now. Return how many."""
    path = Path(target)
    removed = 0
    for stale in path.parent.glob(f".{glob.escape(path.name)}.*{TMP_SUFFIX}"):
        stale.unlink(missing_ok=True)
        removed += 1
    return removed


def process_scratch_directory(prefix: str) -> tempfile.TemporaryDirectory:
    """A private temporary folder for this process, named ``{prefix}{host}-{pid}-{random}``.

    A process killed outright (SIGKILL, the out-of-memory killer) cannot remove its folder, so
    folders of the same ``prefix`` whose process is gone from this host are removed first.
    """
    remove_scratch_of_dead_processes(prefix)
    return tempfile.TemporaryDirectory(prefix=f"{prefix}{_host()}-{os.getpid()}-")


def remove_scratch_of_dead_processes(prefix: str) -> int:
    """Delete this host's ``prefix`` scratch folders whose process no longer exists; return how many."""
    removed = 0
    host = _host()
    for folder in Path(tempfile.gettempdir()).glob(f"{prefix}*"):
        owner = folder.name[len(prefix):].rsplit("-", 2)  # host, pid, random part (which has no "-")
        if len(owner) != 3 or owner[0] != host or not (owner[1].isascii() and owner[1].isdigit()) or _process_exists(int(owner[1])):
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed += not folder.exists()
    return removed


def _host() -> str:
    return socket.gethostname().replace("/", "_") or "localhost"


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


@contextlib.contextmanager
def hold_output_folder(folder: str | os.PathLike[str], flag: str = "--out", shared: bool = False,
                       output: str | os.PathLike[str] | None = None, remove_when_free: bool = False) -> Iterator[None]:
    """Hold an exclusive lock on an output folder for the whole run: ``fcntl.flock`` on the
    folder itself (no lock file is left in it). A second run into a held folder stops at once with
    a UsageError, before it writes anything. The folder is created if need be; folders created
    here and still empty at the end (the run stopped before writing) are removed again. ``shared``:
    a lock that shards of one run hold together (a whole run's exclusive lock still excludes them);
    ``output``: the output the message names, when it is not the folder itself; ``remove_when_free``: remove
    the (empty) folder at the end when no other holder is left (a lock folder beside a file output)."""
    target = Path(folder)
    created = [parent for parent in (target, *target.parents) if not parent.exists()]
    target.mkdir(parents=True, exist_ok=True)
    descriptor = _locked_folder(target, flag, shared, output)
    try:
        yield
    finally:
        if remove_when_free:
            _remove_if_free(target, descriptor)
        os.close(descriptor)
        for made in created:
            try:
                made.rmdir()
            except FileNotFoundError:
                continue  # removed already (a lock folder beside a file output)
            except OSError:
                break  # not empty (the run wrote into it), or not ours to remove


def hold_stage_output(out: str | os.PathLike[str], kind: str, shared: bool = False) -> contextlib.AbstractContextManager[None]:
    """The folder lock of a stage's ``--out`` (``kind`` "dir": the folder itself; "file": a hidden folder
    ``.NAME.lock`` beside the file, removed at the end), as every ``dataset`` command holds it, so that two
    runs into one output cannot both go on. ``shared``: a shard of a run (``--shard``)."""
    target = Path(out)
    if kind == "dir":
        return hold_output_folder(target, "--out", shared=shared)
    return _hold_lock_folder(target.with_name(f".{target.name}.lock"), shared, target)


def _hold_lock_folder(folder: Path, shared: bool, output: Path) -> contextlib.AbstractContextManager[None]:
    """Hold ``folder`` (created if need be) and remove it once the last holder releases it; a run refused
    because another holds it leaves it alone."""
    return hold_output_folder(folder, "--out", shared=shared, output=output, remove_when_free=True)


def _locked_folder(target: Path, flag: str, shared: bool, output: str | os.PathLike[str] | None) -> int:
    """A descriptor of ``target`` holding its lock; UsageError when another run holds it. A lock taken on
    a folder another run removed meanwhile (its last holder, :func:`_remove_if_free`) is taken again on
    the folder now at that path, so two runs never hold two different folders of one name."""
    for _ in range(3):
        target.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(target, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(descriptor, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(descriptor)
            named = str(output if output is not None else target)
            raise UsageError(f"{flag} {named!r} is being written by another run; wait for it to finish "
                             "or choose another folder") from None
        with contextlib.suppress(FileNotFoundError):
            if os.stat(target).st_ino == os.fstat(descriptor).st_ino:
                return descriptor
        os.close(descriptor)
    raise UsageError(f"{flag} {str(output if output is not None else target)!r} is being written by another run; "
                     "wait for it to finish or choose another folder")


def _remove_if_free(target: Path, descriptor: int) -> None:
    """Remove the empty folder ``target`` if this holder is its last: its lock becomes exclusive only when
    no shard of the run holds it any more (``rmdir`` alone would succeed under another shard's lock)."""
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return  # another shard of the run still holds it: the last one removes it
    with contextlib.suppress(OSError):
        target.rmdir()


def read_lines(path: str | os.PathLike[str], label: str, max_bytes: int = jsonlimits.MAX_LINE_BYTES) -> Iterator[tuple[int, str]]:
    """(number, text) of each line of a text file the user named, without its line end, one at a
    time: memory stays bounded by ``max_bytes`` whatever the file (``/dev/zero`` included). A
    longer line or one that is not UTF-8 is a UsageError naming ``label`` and the line; so is a FIFO."""
    if not is_regular_or_missing(path) and not os.path.isdir(path):
        raise UsageError(f"{label} is not a regular file")
    try:
        handle = open(path, "rb")
    except FileNotFoundError:
        raise UsageError(f"{label} does not exist") from None
    except OSError as error:
        raise UsageError(f"{label} cannot be read: {error.strerror}") from None
    with handle:
        number = 0
        while line := handle.readline(max_bytes + 1):
            number += 1
            if len(line) > max_bytes and not (len(line) == max_bytes + 1 and line.endswith(b"\n")):
                raise UsageError(f"{label} line {number} is longer than the limit of {max_bytes} bytes")
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError as error:
                raise UsageError(f"{label} line {number} is not UTF-8 text ({error.reason})") from None
            yield number, text.rstrip("\r\n")


def parse_json_line(line: str, where: str, expected: str) -> Any:
    """One line of a JSON-lines file the user named, parsed within the JSON limits (NaN, lone surrogates,
    keys given twice and 5,000-digit numbers refused): anything else is one UsageError naming ``where``
    and what was ``expected``."""
    try:
        return jsonlimits.loads(line)
    except json.JSONDecodeError as error:
        raise UsageError(f"{where}: not JSON ({error.msg}); expected {expected}") from None
    except jsonlimits.JsonLimitError as error:
        raise UsageError(f"{where}: {error}") from None
