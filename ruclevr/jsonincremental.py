"""Members of a JSON object in any layout (compact JSON from another tool), read with ijson.

ijson's ``basic_parse`` gives events without the path of each (its ``parse`` builds a prefix
string per event: for ``[`` nested 100,000 deep, gigabytes); the depth is counted here and held
to :data:`ruclevr.jsonlimits.MAX_DEPTH`, each string to ``MAX_ITEM_BYTES``. Its C backend refuses
integers beyond 64 bits, NaN and numbers too large for a float.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import IO, Any

import ijson

from ruclevr.jsonlimits import MAX_DEPTH, MAX_ITEM_BYTES, JsonLimitError

_OPENERS = ("start_map", "start_array")
_CLOSERS = ("end_map", "end_array")


class IncrementalError(ValueError):
    """A text that is not JSON, or one the reader stops inside; the message says which."""


class NotAnObjectError(IncrementalError):
    """Valid JSON that is not an object (a bare list)."""


def _object_members(events: Iterator[tuple[str, Any]]) -> Iterator[tuple[str, Any]]:
    """The events after the opening brace of a document that must be an object."""
    event, _ = next(events)
    if event != "start_map":
        raise NotAnObjectError("is not a JSON object")
    return events


#: Bytes ijson reads at a time: its C backend copies a token that spans reads once per read, so a long
#: string costs time quadratic in its length over the size of a read (64 KiB: 3 s for 32 MB; 4 MiB: well under 1 s for 64 MB).
READ_BYTES = 4 << 20

_LAST_BARE_QUOTE = re.compile(rb'.*(?:\A|[^\\])"', re.DOTALL)
_BARE_QUOTE = re.compile(rb'(?:\A|[^\\])"')



class StringBound:
    """A binary reader for ijson that refuses a string as it grows past ``MAX_ITEM_BYTES``, before ijson
    builds it: a string is a stretch between two quotes, so every stretch of the text since the last quote
    not escaped by a backslash (``\\"`` reads as escaped: it only lengthens the stretch) that spans reads is
    held to the limit (one inside a read is at most a read long, and checked once built)."""

    def __init__(self, handle: IO[bytes], limit: int = MAX_ITEM_BYTES) -> None:
        self.handle, self.limit, self.stretch, self.previous = handle, limit, 0, b""

    def read(self, size: int = -1) -> bytes:
        chunk = self.handle.read(size)
        text = self.previous + chunk
        first = _BARE_QUOTE.search(text)
        if first is None:
            self.stretch += len(chunk)
        elif self.stretch + first.end() - len(self.previous) > self.limit:
            self.stretch = self.limit + 1  # the stretch ends in this chunk, past the limit
        else:
            self.stretch = len(text) - _LAST_BARE_QUOTE.match(text).end()  # type: ignore[union-attr]
        self.previous = chunk[-1:]
        if self.stretch > self.limit:
            raise JsonLimitError(f"holds a string longer than the limit of {self.limit} bytes")
        return chunk


def bounded_events(handle: IO[bytes]) -> Iterator[tuple[str, Any]]:
    """ijson's events of ``handle``, strings held to the limit as they are read."""
    return ijson.basic_parse(StringBound(handle, MAX_ITEM_BYTES), use_float=True, buf_size=READ_BYTES)


def members(handle: IO[bytes], key: str, stop_at_list: bool) -> Iterator[tuple[str, Any]]:
    """(name, value) of each top-level member; ``key``'s value (a list) is an iterator of its items."""
    events = bounded_events(handle)
    try:
        for event, value in _object_members(events):
            if event == "end_map":
                return
            if event != "map_key":
                raise IncrementalError(f"unexpected {event}")
            if value == key:
                if stop_at_list:
                    return
                yield value, _items(events, value)
            else:
                event, first = next(events)
                yield value, _build(events, event, first)
    except StopIteration:
        pass
    except ijson.JSONError as error:
        raise IncrementalError(f"is not valid JSON ({first_line(error)})") from None
    raise IncrementalError("ends before its closing brace (a truncated file?)")


def _items(events: Iterator[tuple[str, Any]], name: str, refusal: str = "{name!r} is not a list") -> Iterator[Any]:
    try:
        event, _ = next(events)
        if event != "start_array":
            raise IncrementalError(refusal.format(name=name))
        for event, value in events:
            if event == "end_array":
                return
            yield _build(events, event, value)
    except StopIteration:
        pass
    except ijson.JSONError as error:
        raise IncrementalError(f"is not valid JSON ({first_line(error)})") from None
    raise IncrementalError("ends inside its list (a truncated file?)")


def _build(events: Iterator[tuple[str, Any]], event: str, value: Any) -> Any:
    """The value that starts with (event, value), its depth counted from its own brackets."""
    builder = ijson.ObjectBuilder()
    builder.event(event, value)
    if event not in _OPENERS:
        _check_string(value)
        return builder.value
    depth = 1
    for event, value in events:
        if event in _OPENERS:
            depth += 1
            if depth > MAX_DEPTH:
                raise JsonLimitError(f"is nested more than {MAX_DEPTH} deep")
        elif event in _CLOSERS:
            depth -= 1
        else:
            _check_string(value)
        builder.event(event, value)
        if depth == 0:
            return builder.value
    raise IncrementalError("ends inside a value (a truncated file?)")


def _check_string(value: Any) -> None:
    if isinstance(value, str) and len(value) > MAX_ITEM_BYTES:
        raise JsonLimitError(f"holds a string longer than the limit of {MAX_ITEM_BYTES} characters")


def first_line(error: Exception) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0].strip()


def nested_list_items(handle: IO[bytes], key: str) -> Iterator[tuple[str, Any]]:
    """(name, item) for each item of each list in ``{..., key: {name: [items], ...}, ...}`` (MERA's
    submission: ``{"data": {"test": [...]}}``), one item at a time; other members are skipped."""
    events = bounded_events(handle)
    try:
        for event, value in _object_members(events):
            if event == "end_map":
                return
            event, first = next(events)
            if value != key or event != "start_map":
                _build(events, event, first)
                continue
            for event, name in events:
                if event == "end_map":
                    break
                for item in _items(events, name, f"{key}.{{name}} of a MERA submission must be a list"):
                    yield name, item
        raise IncrementalError("ends before its closing brace (a truncated file?)")
    except StopIteration:
        raise IncrementalError("ends before its closing brace (a truncated file?)") from None
    except ijson.JSONError as error:
        raise IncrementalError(f"is not valid JSON ({first_line(error)})") from None


def top_list_items(handle: IO[bytes], key: str = "data") -> Iterator[Any]:
    """Each item of a file that is a list (``[...]``) or an object holding one under ``key``
    (``{"data": [...]}``), one at a time, held to the limits; other members of the object are skipped."""
    events = bounded_events(handle)
    try:
        event, _ = next(events)
        if event == "start_array":
            for event, value in events:
                if event == "end_array":
                    return
                yield _build(events, event, value)
            raise IncrementalError("ends inside its list (a truncated file?)")
        if event != "start_map":
            raise NotAnObjectError("is neither a list nor an object")
        for event, value in events:
            if event == "end_map":
                return
            if value == key:
                yield from _items(events, value)
                continue
            event, first = next(events)
            _build(events, event, first)
        raise IncrementalError("ends before its closing brace (a truncated file?)")
    except StopIteration:
        raise IncrementalError("ends before it is complete (a truncated file?)") from None
    except ijson.JSONError as error:
        raise IncrementalError(f"is not valid JSON ({first_line(error)})") from None
