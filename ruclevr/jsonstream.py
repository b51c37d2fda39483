"""CLEVR-form JSON documents (``{"info": ..., "<items>": [...]}``) read and written one item at a time.

Every stage's list file is one JSON object with an ``info`` object and one long list. Loading it
whole costs memory in proportion to the list; these helpers keep one item at a time.

Reading: files in the layout :func:`json.dumps` writes with ``indent=2`` (every file this project
writes) are split into items line by line, each parsed with the standard library's C decoder:
JSON escapes newlines inside strings, so a line indented by exactly four spaces that opens or
closes an item can only be that. Any other layout (compact JSON from another tool) is read with
ijson, a maintained incremental parser (its C backend refuses integers beyond 64 bits). Items are parsed and encoded with orjson where it gives
exactly the standard library's result (see :func:`encode_item`).

Writing: :class:`DocumentWriter` appends items to a temporary file beside the target and, once
``info`` is known (it holds counts), writes the target atomically: exactly the bytes of
``json.dumps({"info": info, key: items}, ensure_ascii=False, indent=2) + "\\n"``.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import ijson
import orjson

from ruclevr.cli import UsageError
from ruclevr.io import TMP_SUFFIX, atomic_open

_MEMBER_INDENT = "  "
_ITEM_INDENT = "    "
_COPY_BUFFER = 1 << 20


class DocumentError(ValueError):
    """A list file that is not ``{"info": ..., key: [...]}`` JSON."""


class JsonDocument:
    """One ``{info, key: [...]}`` file; ``info()`` and ``items()`` each read it afresh, never whole."""

    def __init__(self, path: str | os.PathLike[str], key: str) -> None:
        self.path = Path(path)
        self.key = key

    def info(self) -> dict[str, Any]:
        """The ``info`` object (``{}`` when the file has none); read without parsing the list when it comes first."""
        for name, value in self._members(stop_at_list=True):
            if name == "info":
                return value if isinstance(value, dict) else {}
        return {}

    def items(self) -> Iterator[Any]:
        """The list's items in order; DocumentError if the file is not such a document."""
        found = False
        for name, value in self._members(stop_at_list=False):
            if name == self.key:
                found = True
                try:
                    yield from value
                except ijson.JSONError as error:
                    raise DocumentError(f"is not valid JSON ({_first_line(error)})") from None
        if not found:
            raise DocumentError(f"has no {self.key!r} list")

    def count(self) -> int:
        return sum(1 for _ in self.items())

    # -- the two readers -----------------------------------------------------------------------------

    def _members(self, *, stop_at_list: bool) -> Iterator[tuple[str, Any]]:
        """(name, value) of each top-level member; the list's value is an iterator of its items."""
        with open(self.path, "rb") as probe:
            head = probe.read(64)
        if head.startswith(b'{\n  "'):
            yield from self._indented_members(stop_at_list)
        else:
            yield from self._incremental_members(stop_at_list)

    def _indented_members(self, stop_at_list: bool) -> Iterator[tuple[str, Any]]:
        with open(self.path, encoding="utf-8", newline="") as handle:
            reader = _TextReader(handle)
            reader.readline()  # "{"
            while (line := reader.readline()) is not None:
                if line == "}":
                    return
                if not line.startswith(_MEMBER_INDENT + '"'):
                    raise DocumentError(f"unexpected line {line[:60]!r}")
                name_text, _, rest = line[len(_MEMBER_INDENT):].partition(": ")
                name = _loads(name_text)
                if name == self.key and rest == "[":
                    if stop_at_list:
                        return
                    yield name, _indented_items(reader)
                    continue
                yield name, _loads(_member_text(rest, reader))
            raise DocumentError("ends before its closing brace (a truncated file?)")

    def _incremental_members(self, stop_at_list: bool) -> Iterator[tuple[str, Any]]:
        with open(self.path, "rb") as handle:
            try:
                events = ijson.parse(handle, use_float=True)
                prefix, event, _ = next(events)
                if event != "start_map":
                    raise DocumentError("is not a JSON object")
                for prefix, event, value in events:
                    if event == "end_map" and prefix == "":
                        return
                    if event != "map_key":
                        continue
                    name = value
                    if name == self.key:
                        if stop_at_list:
                            return
                        yield name, _incremental_items(events, name)
                    else:
                        yield name, _incremental_value(events, name)
            except ijson.JSONError as error:
                raise DocumentError(f"is not valid JSON ({_first_line(error)})") from None
            raise DocumentError("ends before its closing brace (a truncated file?)")


class _TextReader:
    """Lines of a text file, and stretches up to a marker, from one read-ahead buffer (few Python steps per item)."""

    def __init__(self, handle: IO[str]) -> None:
        self.handle = handle
        self.buffer = ""
        self.pos = 0

    def _fill(self) -> bool:
        more = self.handle.read(_READ_SIZE)
        if not more:
            return False
        self.buffer = self.buffer[self.pos:] + more
        self.pos = 0
        return True

    def readline(self) -> str | None:
        """The next line without its newline; None at the end."""
        while (end := self.buffer.find("\n", self.pos)) < 0:
            if not self._fill():
                if self.pos == len(self.buffer):
                    return None
                line, self.pos = self.buffer[self.pos:], len(self.buffer)
                return line
        line, self.pos = self.buffer[self.pos:end], end + 1
        return line

    def startswith(self, text: str) -> bool:
        while len(self.buffer) - self.pos < len(text) and self._fill():
            pass
        return self.buffer.startswith(text, self.pos)

    def through(self, marker: str) -> str | None:
        """The text from here through the next ``marker``; None if the file ends first."""
        searched = 0  # characters after self.pos known to hold no marker start
        while (end := self.buffer.find(marker, self.pos + searched)) < 0:
            searched = max(0, len(self.buffer) - self.pos - len(marker) + 1)
            if not self._fill():
                return None
        text, self.pos = self.buffer[self.pos:end + len(marker)], end + len(marker)
        return text


_READ_SIZE = 1 << 20


def _member_text(rest: str, reader: _TextReader) -> str:
    """The text of a member value that starts with ``rest`` on the member's line."""
    if rest not in ("{", "["):
        return rest.removesuffix(",")
    parts = [rest]
    while (line := reader.readline()) is not None:
        if line.startswith(_MEMBER_INDENT + "}") or line.startswith(_MEMBER_INDENT + "]"):
            parts.append(line.removesuffix(","))
            return "\n".join(parts)
        parts.append(line)
    raise DocumentError("ends inside a value (a truncated file?)")


def _indented_items(reader: _TextReader) -> Iterator[Any]:
    """Items at indent 4: an object or list item ends at the first line that is its indent and a
    closing bracket (deeper lines are indented more, and strings hold no raw newline)."""
    while True:
        if reader.startswith(_MEMBER_INDENT + "]"):
            reader.readline()
            return
        opening = reader.startswith(_ITEM_INDENT + "{") or reader.startswith(_ITEM_INDENT + "[")
        if opening and not (reader.startswith(_ITEM_INDENT + "{}") or reader.startswith(_ITEM_INDENT + "[]")):
            closer = "\n" + _ITEM_INDENT + ("}" if reader.startswith(_ITEM_INDENT + "{") else "]")
            text = reader.through(closer)
            after = reader.readline()
            if text is None or after not in ("", ","):
                raise DocumentError("ends inside an item (a truncated file?)" if text is None or after is None
                                    else f"unexpected text after an item: {after[:60]!r}")
            yield _loads_item(text[len(_ITEM_INDENT):])
            continue
        line = reader.readline()
        if line is None:
            raise DocumentError("ends inside its list (a truncated file?)")
        if not line.startswith(_ITEM_INDENT) or line[len(_ITEM_INDENT):][:1] in (" ", ""):
            raise DocumentError(f"unexpected line {line[:60]!r}")
        yield _loads(line.removesuffix(","))


def _incremental_items(events: Iterator[tuple[str, str, Any]], name: str) -> Iterator[Any]:
    prefix, event, _ = next(events)
    if event != "start_array":
        raise DocumentError(f"{name!r} is not a list")
    for prefix, event, value in events:
        if event == "end_array" and prefix == name:
            return
        yield _build(events, event, value)
    raise DocumentError("ends inside its list (a truncated file?)")


def _incremental_value(events: Iterator[tuple[str, str, Any]], name: str) -> Any:
    _, event, value = next(events)
    return _build(events, event, value)


def _build(events: Iterator[tuple[str, str, Any]], event: str, value: Any) -> Any:
    builder = ijson.ObjectBuilder()
    builder.event(event, value)
    if event not in ("start_map", "start_array"):
        return builder.value
    depth = 1
    for _, event, value in events:
        builder.event(event, value)
        if event in ("start_map", "start_array"):
            depth += 1
        elif event in ("end_map", "end_array"):
            depth -= 1
            if depth == 0:
                return builder.value
    raise DocumentError("ends inside a value (a truncated file?)")


def _first_line(error: Exception) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0].strip()


def _loads_item(text: str) -> Any:
    """An object or list item of an indent-2 list (from its opening bracket), parsed by orjson when that is exactly right.

    orjson reads an integer beyond 64 bits as a float, silently; so its result is kept only when
    it encodes back to the very text it came from (the file was written as this module writes),
    which also holds for every item this project writes. Otherwise the standard library parses it.
    """
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return _loads(text)
    return value if encode_item(value) == text else _loads(text)


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise DocumentError(f"is not valid JSON ({error.msg})") from None


def input_document(path: str | os.PathLike[str], key: str, label: str) -> JsonDocument:
    """A list file the user named, checked to exist and be readable; UsageError starting with ``label``."""
    try:
        with open(path, "rb") as handle:
            handle.read(1)
    except FileNotFoundError:
        raise UsageError(f"{label} does not exist") from None
    except OSError as error:
        raise UsageError(f"{label} cannot be read: {error.strerror}") from None
    return JsonDocument(path, key)


def checked_items(document: JsonDocument, label: str) -> Iterator[Any]:
    """``document.items()`` with a malformed file turned into a UsageError starting with ``label``."""
    try:
        yield from document.items()
    except (DocumentError, UnicodeDecodeError) as error:
        raise UsageError(f"{label} {error}") from None


def checked_info(document: JsonDocument, label: str) -> dict[str, Any]:
    try:
        return document.info()
    except (DocumentError, UnicodeDecodeError) as error:
        raise UsageError(f"{label} {error}") from None


def encode_item(item: Any) -> str:
    """One item as it appears inside an indent-2 document's list (without the leading indent).

    orjson writes what ``json.dumps(item, ensure_ascii=False, indent=2)`` writes, several times
    faster, except for floats below 1e-4 in size (``0.00002`` or ``2e-9`` against ``2e-05`` and
    ``2e-09``) and integers beyond 64 bits: an item whose orjson text shows such a float (or a
    string that looks like one) is encoded by the standard library instead.
    """
    try:
        text = orjson.dumps(item, option=orjson.OPT_INDENT_2).decode()
    except TypeError:
        text = None
    if text is None or "e-" in text or "0.0000" in text:
        text = json.dumps(item, ensure_ascii=False, indent=2)
    return text.replace("\n", "\n" + _ITEM_INDENT)


class DocumentWriter:
    """Items appended one at a time; :meth:`finish` writes ``{info, key: items}`` atomically.

    The items wait in a temporary file beside the target (named like every temporary of
    :mod:`ruclevr.io`, so a killed run's leftovers are cleared the same way). Use as a context
    manager: leaving it without :meth:`finish` removes the temporary and writes nothing.
    """

    def __init__(self, path: str | os.PathLike[str], key: str) -> None:
        self.path = Path(path)
        self.key = key
        self.count = 0
        self._spool: IO[str] | None = None
        self._spool_name = ""

    def __enter__(self) -> DocumentWriter:
        return self

    def _open_spool(self) -> IO[str]:
        """The temporary file, made at the first item (bad input found before it leaves no trace)."""
        if self._spool is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, self._spool_name = tempfile.mkstemp(prefix=f".{self.path.name}.items.", suffix=TMP_SUFFIX, dir=self.path.parent)
            self._spool = os.fdopen(fd, "w+", encoding="utf-8")
        return self._spool

    def write(self, item: Any) -> None:
        self._open_spool().write(("\n" if self.count == 0 else ",\n") + _ITEM_INDENT + encode_item(item))
        self.count += 1

    def finish(self, info: Any) -> None:
        spool = self._open_spool()
        spool.flush()
        spool.seek(0)
        with atomic_open(self.path) as handle:
            handle.write("{\n" + _MEMBER_INDENT + '"info": ' + json.dumps(info, ensure_ascii=False, indent=2).replace("\n", "\n" + _MEMBER_INDENT))
            handle.write(",\n" + _MEMBER_INDENT + json.dumps(self.key) + ": [")
            shutil.copyfileobj(spool, handle, _COPY_BUFFER)
            handle.write(("\n" + _MEMBER_INDENT + "]" if self.count else "]") + "\n}\n")

    def __exit__(self, *exc_info: object) -> None:
        if self._spool is not None:
            self._spool.close()
            os.unlink(self._spool_name)
            self._spool = None
