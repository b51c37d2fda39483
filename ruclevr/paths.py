"""Paths that come from data files, and user strings that become file names.

A dataset's files travel between people and machines, so a path written inside one of them
(``inputs.image`` in MERA items, ``image_filename`` in scene and question records, scene and
mask files) is data, not a place to read from: it must be relative, and it must resolve
(symlinks included) inside the folder it belongs to. Anything else is a :class:`UsageError`
naming the record and the path. Files the user names on the command line (prompt, family
files, ``--out``) are the user's own and may lie anywhere.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from ruclevr.cli import UsageError
from ruclevr.io import file_problem


def confined_path(folder: str | os.PathLike[str], relative: object, what: str) -> Path:
    """``folder / relative`` once it is sure to stay inside ``folder``; else a UsageError naming ``what``.

    ``what`` names the record the path came from (e.g. ``"item 12: inputs.image"``).
    """
    if not isinstance(relative, str) or not relative:
        raise UsageError(f"{what}: the path {relative!r} is not a non-empty string")
    if "\0" in relative or PurePosixPath(relative).is_absolute() or PureWindowsPath(relative).is_absolute() \
            or PureWindowsPath(relative).drive:
        raise UsageError(f"{what}: the path {relative!r} must be relative to its folder")
    if ".." in PurePosixPath(relative.replace("\\", "/")).parts:
        raise UsageError(f"{what}: the path {relative!r} leads out of its folder ('..')")
    base = Path(folder).resolve()
    target = base / relative
    resolved = target.resolve()
    if resolved != base and base not in resolved.parents:
        raise UsageError(f"{what}: the path {relative!r} resolves outside its folder {str(folder)!r} (a symbolic link?)")
    return target


def check_name_part(value: str, flag: str) -> str:
    """A user string that becomes part of a file name (``--prefix``, a split name): no separators, no ``..``."""
    if not value or any(sep in value for sep in ("/", "\\", "\0")) or value in (".", "..") or ".." in value:
        raise UsageError(f"{flag} {value!r} must be a non-empty name without '/', '\\' or '..'")
    return value


def relative_paths(value: Any, base: str | os.PathLike[str]) -> Any:
    """``value`` (a JSON-like record) with every absolute path string rewritten relative to ``base``,
    so that a published file never holds the machine's own folders."""
    if isinstance(value, dict):
        return {key: relative_paths(item, base) for key, item in value.items()}
    if isinstance(value, list):
        return [relative_paths(item, base) for item in value]
    if isinstance(value, str) and os.path.isabs(value):  # any absolute path, a newline in it or not
        return Path(os.path.relpath(value, Path(base).resolve())).as_posix()
    return value


def path_from_output(input_path: str | os.PathLike[str], output: str | os.PathLike[str]) -> str:
    """``input_path`` as the record inside ``output`` names it: relative to the folder ``output`` is in,
    so that the same build in another folder (or with an absolute ``--out``) writes the same bytes."""
    folder = os.path.dirname(os.path.abspath(output))
    return Path(os.path.relpath(os.path.abspath(input_path), folder)).as_posix()


def check_output_location(path: str | os.PathLike[str], kind: str, flag: str = "--out") -> Path:
    """Refuse, before any work, an output location that cannot be written: ``kind`` is "file" or
    "dir" (what the command will write there). An existing entry of the other kind, a regular file
    on the way, or a place the system will not let us write (``/proc``, read-only, no permission)
    is a UsageError naming ``flag``. Nothing is created."""
    if not str(path).strip():
        raise UsageError(f"cannot write to {flag} '': name a file or folder")
    target = Path(path)
    if target.exists() and kind == "dir" and not target.is_dir():
        raise UsageError(f"cannot write to {flag} {str(target)!r}: it is a file, not a folder")
    if target.is_dir() and kind == "file":
        raise UsageError(f"cannot write to {flag} {str(target)!r}: it is a folder; name a file to write")
    if target.exists() and kind == "file" and not target.is_file():
        raise UsageError(f"cannot write to {flag} {str(target)!r}: it is not a regular file (a FIFO, a device "
                         "or a socket); name a file to write")
    nearest = target if kind == "dir" else target.parent
    nearest = Path(os.path.abspath(nearest))
    while not os.path.lexists(nearest) and nearest != nearest.parent:
        nearest = nearest.parent
    if not nearest.is_dir():
        raise UsageError(f"cannot write to {flag} {str(target)!r}: {str(nearest)!r} is not a folder")
    try:
        with tempfile.TemporaryFile(dir=nearest):
            pass
    except OSError as error:
        raise UsageError(f"cannot write to {flag} {str(target)!r}: {error.strerror or error} "
                         f"(in {str(nearest)!r})") from None
    return target


def check_not_an_input(out: str | os.PathLike[str], inputs: Mapping[str, str | os.PathLike[str] | None],
                       flag: str = "--out") -> None:
    """Refuse an output that is one of the run's inputs (``inputs``: the flag that names each):
    the same path once resolved (symbolic links followed), or the same file under another name
    (a hard link). Checked before any work."""
    target = Path(out)
    resolved = target.resolve()
    for input_flag, source in inputs.items():
        if source is None:
            continue
        same = Path(source).resolve() == resolved
        if not same and target.exists() and Path(source).exists():
            same = os.path.samefile(target, source)
        if same:
            raise UsageError(f"{flag} must differ from {input_flag}: {str(target)!r} is that input "
                             f"({str(source)!r}), and writing it would destroy it")


def check_own_output(out: str | os.PathLike[str], stage: str, is_own: Callable[[dict[str, Any]], bool],
                     flag: str = "--out") -> None:
    """Refuse to replace an existing file that this stage did not write (another stage's
    ``questions.json``, a MERA ``test.json``, a predictions file): a file of this project's
    stages opens with its ``info`` object, and ``is_own`` tells from it whether ``stage`` wrote it."""
    target = Path(out)
    if not target.is_file():
        return
    info: Any = None
    with open(target, "rb") as handle:
        head = handle.read(len(_INFO_OPENING))
    if head == _INFO_OPENING:
        from ruclevr.jsonstream import DocumentError, JsonDocument

        try:
            info = JsonDocument(target, "\0").info()
        except (DocumentError, UnicodeDecodeError):
            info = None
    if not isinstance(info, dict) or not is_own(info):
        raise UsageError(f"{flag} {str(target)!r} exists and was not written by {stage}; it may be an input or "
                         "another stage's file: remove it yourself or name another file")


_INFO_OPENING = b'{\n  "info": {'


def check_apart_from(out: str | os.PathLike[str], inputs: Mapping[str, str | os.PathLike[str] | None],
                     flag: str = "--out") -> None:
    """Refuse an output that is, contains, or lies inside one of ``inputs`` (the flag that names each),
    symbolic links followed: writing it would replace or clean part of that input. Checked before any work."""
    resolved = Path(out).resolve()
    for input_flag, source in inputs.items():
        if source is None:
            continue
        other = Path(source).resolve()
        if other == resolved or (Path(out).exists() and Path(source).exists() and os.path.samefile(out, source)):
            relation = "is"
        elif other in resolved.parents:
            relation = "lies inside"
        elif resolved in other.parents:
            relation = "contains"
        else:
            continue
        raise UsageError(f"{flag} {str(out)!r} {relation} {input_flag} {str(source)!r}; writing it would change "
                         "that input: choose a folder apart from it")


def check_real_folders(base: str | os.PathLike[str], relatives: Sequence[str], flag: str = "--out") -> None:
    """Refuse when a folder a writer fills or cleans (``base`` / each of ``relatives``, or a folder on the
    way) is a symbolic link: removing stale files there would delete files in the link's target."""
    for relative in relatives:
        path = Path(base)
        for name in PurePosixPath(relative).parts:
            path = path / name
            if path.is_symlink():
                raise UsageError(f"{flag}: {str(path)!r} is a symbolic link; files are written and removed only in "
                                 "real folders of the output: remove the link or choose another folder")
            if path.exists() and not path.is_dir():
                raise UsageError(f"{flag}: {str(path)!r} is not a folder")


def check_not_another_export(folder: str | os.PathLike[str], flag: str, marker: str | None,
                             source: str | os.PathLike[str] | None = None) -> None:
    """Refuse a folder that holds an export (its ``provenance.json`` or ``test.json``) that is not a copy this
    command wrote (``marker``: the file that says so, written last; None for a command that writes no
    export): it is an export of its own, perhaps of another build. A copy whose ``provenance.json`` is
    that of ``source`` (a run killed before its marker) is ours."""
    import filecmp

    target = Path(folder)
    if not target.is_dir() or (marker is not None and (target / marker).is_file()):
        return
    if source is not None and (target / "provenance.json").is_file() and (Path(source) / "provenance.json").is_file() \
            and filecmp.cmp(target / "provenance.json", Path(source) / "provenance.json", shallow=False):
        return
    for name in ("provenance.json", "test.json", "shots.json"):
        if (target / name).exists():
            raise UsageError(f"{flag} {str(target)!r} holds an export ({name}) that is not a copy written by this "
                             "command; writing into it would change that export: choose another folder")


def regular_file(path: str | os.PathLike[str], label: str) -> Path:
    """``path`` once it is a regular file (symbolic links followed): a FIFO, a device or a folder where a
    file is expected is refused in one line instead of hanging or reading without end."""
    problem = file_problem(path)
    if problem is not None:
        raise UsageError(f"{label} {str(path)!r} {problem}")
    return Path(path)
