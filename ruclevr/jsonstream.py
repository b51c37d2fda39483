"""CLEVR-form JSON documents (``{"info": ..., "<items>": [...]}``) read and written one item at a time.

Every stage's list file is one JSON object with an ``info`` object and one long list. Loading it
whole costs memory in proportion to the list; these helpers keep one item at a time.

Reading: files in the layout :func:`json.dumps` writes with ``indent=2`` (every file this project
writes) are read as bytes and split into items line by line: JSON escapes newlines inside
strings, so a line indented by exactly four spaces that opens or closes an item can only be that.
Each item is parsed with orjson where that gives exactly the standard library's result (see
:func:`_loads_item`), and keeps its text when that is exactly how it is written, so a stage can
pass it on (:func:`encode_extended`) and leave a member it never reads unparsed
(:class:`UnreadMember`). Any other layout (compact JSON from another tool) is read with ijson, a
maintained incremental parser (its C backend refuses integers beyond 64 bits).

Writing: :class:`DocumentWriter` appends items to a temporary file beside the target and, once
``info`` is known (it holds counts), writes the target atomically: exactly the bytes of
``json.dumps({"info": info, key: items}, ensure_ascii=False, indent=2) + "\\n"``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import orjson

from ruclevr import jsonincremental
from ruclevr.cli import UsageError
from ruclevr.io import atomic_open, is_regular_or_missing, temporary_beside
from ruclevr.jsonlimits import MAX_DEPTH, MAX_ITEM_BYTES, TOO_DEEP_INDENT, JsonLimitError, loads

_MEMBER_INDENT = "  "
_MEMBER_PREFIX = b"  "
_ITEM_PREFIX = b"    "
#: How an item of more than one line ends in an indent-2 document's list (without the item's indent).
_ITEM_END = b"\n" + _ITEM_PREFIX + b"}"
#: An item over lines: its opening line, and its end as a compiled literal (bytes.find is 2x slower in indented JSON).
_MULTILINE_CLOSERS = {_ITEM_PREFIX + b"{\n": re.compile(rb"\n    \}"), _ITEM_PREFIX + b"[\n": re.compile(rb"\n    \]")}
_COPY_BUFFER = 1 << 20
_READ_SIZE = 1 << 20


class DocumentError(ValueError):
    """A list file that is not ``{"info": ..., key: [...]}`` JSON."""


class DocumentShapeError(DocumentError):
    """Valid JSON of another shape than ``{"info": ..., key: [...]}`` (a bare list, another stage's file)."""


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
        for item, _ in self.items_with_text():
            yield item

    def items_with_text(self, unread: UnreadMember | None = None) -> Iterator[tuple[Any, bytes | None]]:
        """Each item with its text as :func:`encode_item_bytes` writes it, when the file holds it in
        exactly that form (else None): such a text can be passed on without encoding the item again.

        With ``unread``, an item whose text holds that member in its exact form is parsed without
        it (the member is left out of the item, and kept in the text): what a stage never reads
        costs no parsing. Elsewhere the whole item is parsed, the member with it.
        """
        found = False
        for name, value in self._members(stop_at_list=False, unread=unread):
            if name == self.key:
                found = True
                position = 0
                try:
                    for position, item in enumerate(value):  # noqa: B007  (named in the error)
                        yield item
                except (JsonLimitError, jsonincremental.IncrementalError, RecursionError, MemoryError) as error:
                    raise DocumentError(f"{self.key} item {position}: {_reason(error)}") from None
        if not found:
            raise DocumentShapeError(f"has no {self.key!r} list")

    def count(self) -> int:
        return sum(1 for _ in self.items())

    # -- the two readers -----------------------------------------------------------------------------

    def _members(self, *, stop_at_list: bool, unread: UnreadMember | None = None) -> Iterator[tuple[str, Any]]:
        """(name, value) of each top-level member; the list's value is an iterator of its items."""
        if not is_regular_or_missing(self.path):  # a FIFO would wait for a writer forever
            raise DocumentError("is not a regular file")
        with open(self.path, "rb") as probe:
            head = probe.read(64)
        seen: set[str] = set()
        try:
            members = self._indented_members(stop_at_list, unread) if head.startswith(b'{\n  "') else \
                self._incremental_members(stop_at_list)
            for name, value in members:
                if name in seen:  # json.loads keeps the last, a streaming reader the first: neither, then
                    raise DocumentError(f"names the member {name[:40]!r} twice")
                seen.add(name)
                yield name, value
        except jsonincremental.NotAnObjectError as error:
            raise DocumentShapeError(str(error)) from None
        except (JsonLimitError, jsonincremental.IncrementalError, RecursionError, MemoryError) as error:
            raise DocumentError(_reason(error)) from None

    def _indented_members(self, stop_at_list: bool, unread: UnreadMember | None) -> Iterator[tuple[str, Any]]:
        with open(self.path, "rb") as handle:
            reader = _BytesReader(handle)
            reader.readline()  # "{"
            while (line := reader.readline()) is not None:
                if line == b"}":
                    return
                if not line.startswith(_MEMBER_PREFIX + b'"'):
                    raise DocumentError(f"unexpected line {_shown(line)!r}")
                name_text, _, rest = line[len(_MEMBER_PREFIX):].partition(b": ")
                name = _loads(name_text)
                if name == self.key and rest == b"[":
                    if stop_at_list:
                        return
                    yield name, _indented_items(reader, unread)
                    continue
                yield name, _loads(_member_text(rest, reader))
            raise DocumentError("ends before its closing brace (a truncated file?)")

    def _incremental_members(self, stop_at_list: bool) -> Iterator[tuple[str, Any]]:
        with open(self.path, "rb") as handle:
            for name, value in jsonincremental.members(handle, self.key, stop_at_list):
                yield name, (((item, None) for item in value) if name == self.key else value)


class _BytesReader:
    """Lines of a file, and stretches up to a marker, from one read-ahead buffer (few Python steps
    per item); bytes, as orjson parses them without a detour through ``str``."""

    def __init__(self, handle: IO[bytes]) -> None:
        self.handle = handle
        self.buffer = b""
        self.pos = 0

    def _fill(self) -> bool:
        """Read more: at least as much as is held, so a long line costs linear time; a line or item
        past MAX_ITEM_BYTES is refused."""
        held = len(self.buffer) - self.pos
        if held > MAX_ITEM_BYTES:
            raise JsonLimitError(f"holds a line or item longer than the limit of {MAX_ITEM_BYTES} bytes")
        more = self.handle.read(max(_READ_SIZE, held))
        if not more:
            return False
        self.buffer = self.buffer[self.pos:] + more
        self.pos = 0
        return True

    def readline(self) -> bytes | None:
        """The next line without its newline; None at the end."""
        searched = self.pos
        while (end := self.buffer.find(b"\n", searched)) < 0:
            searched = len(self.buffer) - self.pos
            if not self._fill():
                if self.pos == len(self.buffer):
                    return None
                line, self.pos = self.buffer[self.pos:], len(self.buffer)
                return line
        line, self.pos = self.buffer[self.pos:end], end + 1
        return line

    def peek(self, size: int) -> bytes:
        """The next ``size`` bytes (fewer at the end), left to be read."""
        while len(self.buffer) - self.pos < size and self._fill():
            pass
        return self.buffer[self.pos:self.pos + size]

    def through(self, marker: re.Pattern[bytes]) -> bytes | None:
        """The text from here through the next match of ``marker`` (a literal); None if the file ends first."""
        searched = 0  # characters after self.pos known to hold no marker start
        while (found := marker.search(self.buffer, self.pos + searched)) is None:
            searched = max(0, len(self.buffer) - self.pos - len(marker.pattern) + 1)
            if not self._fill():
                return None
        text, self.pos = self.buffer[self.pos:found.end()], found.end()
        return text


def _member_text(rest: bytes, reader: _BytesReader) -> bytes:
    """The text of a member value that starts with ``rest`` on the member's line."""
    if rest not in (b"{", b"["):
        return rest.removesuffix(b",")
    parts, size = [rest], len(rest)
    while (line := reader.readline()) is not None:
        size += len(line) + 1
        if size > MAX_ITEM_BYTES:
            raise JsonLimitError(f"holds a member longer than the limit of {MAX_ITEM_BYTES} bytes")
        if line.startswith(_MEMBER_PREFIX + b"}") or line.startswith(_MEMBER_PREFIX + b"]"):
            parts.append(line.removesuffix(b","))
            return b"\n".join(parts)
        parts.append(line)
    raise DocumentError("ends inside a value (a truncated file?)")


def _indented_items(reader: _BytesReader, unread: UnreadMember | None) -> Iterator[tuple[Any, bytes | None]]:
    """Items at indent 4, each with its text when that is exactly what :func:`encode_item_bytes`
    writes: an object or list item ends at the first line that is its indent and a closing bracket
    (deeper lines are indented more, and strings hold no raw newline)."""
    while True:
        head = reader.peek(len(_ITEM_PREFIX) + 2)
        if head.startswith(_MEMBER_PREFIX + b"]"):
            reader.readline()
            return
        # An object or list spread over lines opens with its bracket alone on the line (as json.dumps
        # indents it); one written on a single line is read as a line.
        closer = _MULTILINE_CLOSERS.get(head)
        if closer is not None:
            reader.pos += len(_ITEM_PREFIX)  # the item's text starts at its bracket (peek read the indent)
            text = reader.through(closer)
            after = reader.readline()
            if text is None or after not in (b"", b","):
                raise DocumentError("ends inside an item (a truncated file?)" if text is None or after is None
                                    else f"unexpected text after an item: {_shown(after)!r}")
            yield (unread.loads_item(text) if unread is not None else None) or _loads_item(text)
            continue
        line = reader.readline()
        if line is None:
            raise DocumentError("ends inside its list (a truncated file?)")
        if not line.startswith(_ITEM_PREFIX) or line[len(_ITEM_PREFIX):][:1] in (b" ", b""):
            raise DocumentError(f"unexpected line {_shown(line)!r}")
        yield _loads(line.removesuffix(b",")), None


def _shown(line: bytes) -> str:
    """The start of a line, for an error message."""
    return line[:60].decode("utf-8", errors="replace")


def _loads_item(text: bytes) -> tuple[Any, bytes | None]:
    """An object or list item of an indent-2 list (from its opening bracket), parsed by orjson when
    that is exactly right, and ``text`` when it is the item's encoding.

    orjson reads an integer beyond 64 bits as a float, silently; so its result is kept only when
    it encodes back to the very text it came from (the file was written as this module writes),
    which also holds for every item this project writes. Otherwise the standard library parses it.
    """
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return _loads(text), None
    if encode_item_bytes(value) != text:
        return _loads(text), None
    if TOO_DEEP_INDENT.search(text):
        raise DocumentError(f"is nested more than {MAX_DEPTH} deep")
    return value, text


class UnreadMember:
    """A member of list items that a stage passes on without reading: ``pattern`` matches it in
    its exact encoding inside an item's text, from the newline before it through its comma (so
    only ever a member of the item itself: strings hold no raw newline), and nothing else."""

    def __init__(self, name: str, pattern: re.Pattern[bytes]) -> None:
        self.name = name
        self.pattern = pattern

    def loads_item(self, text: bytes) -> tuple[Any, bytes] | None:
        """The item of ``text`` without this member, and ``text``, where the member is there in its
        exact form and the rest of the item is as :func:`encode_item_bytes` writes it; else None."""
        found = self.pattern.search(text)
        if found is None:
            return None
        rest = text[:found.start()] + text[found.end():]
        try:
            value = orjson.loads(rest)
        except orjson.JSONDecodeError:
            return None
        if not isinstance(value, dict) or self.name in value or encode_item_bytes(value) != rest \
                or TOO_DEEP_INDENT.search(text):
            return None
        return value, text


def _loads(text: bytes) -> Any:
    try:
        return loads(text)
    except json.JSONDecodeError as error:
        raise DocumentError(f"is not valid JSON ({error.msg})") from None


def _reason(error: BaseException) -> str:
    """What is wrong, for a text beyond the limits (or one the interpreter could not hold)."""
    if isinstance(error, RecursionError):
        return "is nested too deep to read"
    if isinstance(error, MemoryError):
        return "is too large to read"
    return str(error)


def input_document(path: str | os.PathLike[str], key: str, label: str) -> JsonDocument:
    """A list file the user named, checked to exist and be readable; UsageError starting with ``label``."""
    if not is_regular_or_missing(path) and not os.path.isdir(path):
        raise UsageError(f"{label} is not a regular file")
    try:
        with open(path, "rb") as handle:
            handle.read(1)
    except FileNotFoundError:
        raise UsageError(f"{label} does not exist") from None
    except OSError as error:
        raise UsageError(f"{label} cannot be read: {error.strerror}") from None
    return JsonDocument(path, key)


def input_error(error: DocumentError | UnicodeDecodeError, label: str, shape: str | None = None) -> UsageError:
    """The one line for a list file the user named that cannot be read: ``shape`` (what the file
    must be) when it is JSON of another shape and ``shape`` is given, else ``label`` and what is wrong."""
    if shape is not None and isinstance(error, DocumentShapeError):
        return UsageError(shape)
    reason = f"is not UTF-8 text ({error.reason})" if isinstance(error, UnicodeDecodeError) else str(error)
    return UsageError(f"{label} {reason}")


def checked_items(document: JsonDocument, label: str, shape: str | None = None) -> Iterator[Any]:
    """``document.items()`` with a malformed file turned into :func:`input_error`."""
    try:
        yield from document.items()
    except (DocumentError, UnicodeDecodeError) as error:
        raise input_error(error, label, shape) from None


def checked_info(document: JsonDocument, label: str, shape: str | None = None) -> dict[str, Any]:
    """``document.info()`` with a malformed file turned into :func:`input_error`."""
    try:
        return document.info()
    except (DocumentError, UnicodeDecodeError) as error:
        raise input_error(error, label, shape) from None


def encode_item(item: Any) -> str:
    """One item as it appears inside an indent-2 document's list (without the leading indent)."""
    return encode_item_bytes(item).decode()


def encode_item_bytes(item: Any) -> bytes:
    """:func:`encode_item` in UTF-8.

    orjson writes what ``json.dumps(item, ensure_ascii=False, indent=2)`` writes, several times
    faster, except for floats below 1e-4 in size (``0.00002`` or ``2e-9`` against ``2e-05`` and
    ``2e-09``) and integers beyond 64 bits: an item whose orjson text shows such a float (or a
    string that looks like one) is encoded by the standard library instead.
    """
    try:
        text = orjson.dumps(item, option=orjson.OPT_INDENT_2)
    except TypeError:
        text = None
    if text is None or b"e-" in text or b"0.0000" in text:
        text = json.dumps(item, ensure_ascii=False, indent=2).encode()
    return text.replace(b"\n", b"\n" + _ITEM_PREFIX)


def encode_extended(item: Mapping[str, Any], text: bytes | None, extra: Mapping[str, Any]) -> bytes:
    """The encoding of ``{**item, **extra}``, from ``text`` (the encoding of ``item``, when known;
    ``item`` may lack an unread member that ``text`` holds) where ``extra``'s keys are new:
    ``extra``'s lines spliced in before the closing brace."""
    if text is None:
        return encode_item_bytes({**item, **extra})
    if not text.endswith(_ITEM_END) or not item.keys().isdisjoint(extra):
        whole = _loads_item(text)[0]  # the item with any member it was read without
        return encode_item_bytes({**whole, **extra})
    added = encode_item_bytes(extra if type(extra) is dict else dict(extra))
    return b"".join((text[: -len(_ITEM_END)], b",", added[1:]))


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
        self._spool: IO[bytes] | None = None
        self._spool_name = ""

    def __enter__(self) -> DocumentWriter:
        return self

    def _open_spool(self) -> IO[bytes]:
        """The temporary file, made at the first item (bad input found before it leaves no trace)."""
        if self._spool is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, self._spool_name = temporary_beside(self.path, "items")
            self._spool = os.fdopen(fd, "w+b")
        return self._spool

    def write(self, item: Any) -> None:
        self.write_encoded([encode_item_bytes(item)])

    def write_encoded(self, texts: Sequence[bytes]) -> None:
        """Append items given as :func:`encode_item_bytes` (or :func:`encode_extended`) wrote them, in one write."""
        if not texts:
            return
        joined = (b",\n" + _ITEM_PREFIX).join(texts)
        self._open_spool().write((b"\n" if self.count == 0 else b",\n") + _ITEM_PREFIX + joined)
        self.count += len(texts)

    def finish(self, info: Any) -> None:
        spool = self._open_spool()
        spool.flush()
        spool.seek(0)
        head = "{\n" + _MEMBER_INDENT + '"info": ' + json.dumps(info, ensure_ascii=False, indent=2).replace("\n", "\n" + _MEMBER_INDENT)
        head += ",\n" + _MEMBER_INDENT + json.dumps(self.key) + ": ["
        with atomic_open(self.path, "wb") as handle:
            handle.write(head.encode())
            shutil.copyfileobj(spool, handle, _COPY_BUFFER)
            handle.write((("\n" + _MEMBER_INDENT + "]" if self.count else "]") + "\n}\n").encode())

    def __exit__(self, *exc_info: object) -> None:
        if self._spool is not None:
            self._spool.close()
            os.unlink(self._spool_name)
            self._spool = None


class LazyList:
    """A list inside a JSON value that :func:`write_json` writes one item at a time (subclasses give ``__iter__``)."""

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError


def write_json(path: str | os.PathLike[str], value: Any) -> None:
    """Atomically write exactly what :func:`ruclevr.io.atomic_write_json` writes
    (``json.dumps(value, ensure_ascii=False, indent=2) + "\\n"``), with every :class:`LazyList`
    inside ``value`` written one item at a time, never held as a whole."""
    lazy: list[LazyList] = []
    text = json.dumps(_with_placeholders(value, lazy), ensure_ascii=False, indent=2) + "\n"
    with atomic_open(path) as handle:
        for index, lazy_list in enumerate(lazy):
            before, text = text.split(_placeholder(index), 1)
            handle.write(before)
            line = before[before.rfind("\n") + 1:]
            _write_list(handle, lazy_list, "\n" + " " * (len(line) - len(line.lstrip(" "))))
        handle.write(text)


def _placeholder(index: int) -> str:
    return f'"\\u0000lazy list {index}\\u0000"'


def _with_placeholders(value: Any, lazy: list[LazyList]) -> Any:
    """``value`` with each LazyList replaced by a string no JSON text of other values can hold."""
    if isinstance(value, LazyList):
        lazy.append(value)
        return f"\0lazy list {len(lazy) - 1}\0"
    if isinstance(value, dict):
        return {key: _with_placeholders(item, lazy) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_with_placeholders(item, lazy) for item in value]
    return value


def _write_list(handle: IO[str], items: Iterable[Any], indent: str) -> None:
    """A list as json.dumps(indent=2) writes it at the indent of the line it starts on."""
    inner = indent + "  "
    first = True
    for item in items:
        handle.write(("[" if first else ",") + inner + encode_item(item).replace("\n" + _ITEM_PREFIX.decode(), inner))
        first = False
    handle.write("[]" if first else indent + "]")
