"""The limits every JSON text this project reads is held to, and the one strict parser of a text.

A hostile file can be small and still cost without bound: ``[`` nested 100,000 deep (the
standard library recurses until it fails), a 5,000-digit integer (Python refuses to convert
it), a lone surrogate (``"\\ud800"``, which no UTF-8 file can then hold), ``NaN`` (which is not
JSON). :func:`loads` refuses each of them with :class:`JsonLimitError` (a ``ValueError``) before
or instead of building the value. The limits (docs/reliability.md quotes them):
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import yaml

#: Containers inside containers: a scene is 5 deep, a MERA item 4, a provenance record under 20.
MAX_DEPTH = 64
#: Digits of one integer literal (64-bit integers have at most 20).
MAX_INTEGER_DIGITS = 40
#: Bytes of one item of a list file, one of its lines, one member value, one string.
MAX_ITEM_BYTES = 64 << 20
#: Bytes of one line of a line-by-line file (predictions JSONL, answer files, TSVs).
MAX_LINE_BYTES = 1 << 20

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_LONG_INTEGER = re.compile(rb"[0-9]{%d}" % (MAX_INTEGER_DIGITS + 1))
_NOT_BRACKETS = bytes(sorted(set(range(256)) - set(b"[]{}")))
_INNERMOST_PAIR = re.compile(rb"\[\]|\{\}")
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
#: A line of an indent-2 item (itself at indent 4) deeper than MAX_DEPTH.
TOO_DEEP_INDENT = re.compile(rb"\n" + b" " * (4 + 2 * MAX_DEPTH))


class JsonLimitError(ValueError):
    """A JSON text beyond one of this module's limits, or one holding what JSON cannot carry."""


def check_text(text: bytes) -> None:
    """Refuse a text nested more than MAX_DEPTH deep or holding an integer of more than
    MAX_INTEGER_DIGITS digits, before any parser sees it (all scans run in C: strings are cut out,
    then innermost bracket pairs removed, one level a pass)."""
    outside_strings = _STRING.sub(b'""', text)
    if _LONG_INTEGER.search(outside_strings):
        raise JsonLimitError(f"holds an integer of more than {MAX_INTEGER_DIGITS} digits")
    brackets = outside_strings.translate(None, _NOT_BRACKETS)
    for _ in range(MAX_DEPTH):
        if not brackets:
            return
        shorter = _INNERMOST_PAIR.sub(b"", brackets)
        if len(shorter) == len(brackets):  # unbalanced, so not JSON: the parser says where, unless that is deep
            if len(brackets) > MAX_DEPTH:
                raise JsonLimitError(f"is not valid JSON ({len(brackets)} brackets never closed or opened)")
            return
        brackets = shorter
    if _INNERMOST_PAIR.search(brackets):
        raise JsonLimitError(f"is nested more than {MAX_DEPTH} deep")


def _refuse_constant(name: str) -> Any:
    raise JsonLimitError(f"holds {name}, which is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise JsonLimitError(f"holds the number {text[:40]}, too large for a float")
    return value


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object, refused when it names a key twice (readers would disagree on which value counts)."""
    value = dict(pairs)
    if len(value) != len(pairs):
        seen: set[str] = set()
        twice = next(key for key, _ in pairs if key in seen or seen.add(key))  # type: ignore[func-returns-value]
        raise JsonLimitError(f"names the key {twice[:40]!r} twice in one object")
    return value


def loads(text: bytes | str) -> Any:
    """``json.loads`` within the limits: JsonLimitError for what :func:`check_text` refuses, NaN
    and Infinity, a number too large for a float, a lone surrogate and a key given twice in one object; json.JSONDecodeError for
    text that is not JSON."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    check_text(data)
    value = json.loads(data, parse_constant=_refuse_constant, parse_float=_finite_float, object_pairs_hook=_unique_keys)
    if _SURROGATE_ESCAPE.search(data):
        check_strings(value)
    return value


def check_strings(value: Any, depth: int = 0) -> None:
    """Refuse a string (key or value) inside ``value`` that holds a lone surrogate."""
    if depth > MAX_DEPTH:
        raise JsonLimitError(f"is nested more than {MAX_DEPTH} deep")
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise JsonLimitError(f"holds a lone surrogate ({value[:30].encode('utf-8', 'backslashreplace').decode()!r})"
                                 " that UTF-8 text cannot carry") from None
    elif isinstance(value, dict):
        for key, item in value.items():
            check_strings(key, depth + 1)
            check_strings(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            check_strings(item, depth + 1)


def yaml_beyond_limits(text: str, loader: Any) -> tuple[int, str] | None:
    """(line, reason) for a YAML text that uses aliases (``*name``: 1.3 KB of nested aliases expand
    to gigabytes in any walk over the value) or nests deeper than MAX_DEPTH; read as events, so
    nothing is built. None for a text within the limits (or one the YAML parser refuses itself)."""
    depth = 0
    try:
        for event in yaml.parse(text, Loader=loader):
            if isinstance(event, yaml.AliasEvent):
                return _line(event), f"YAML aliases (*{event.anchor}) are not allowed here"
            if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                depth += 1
                if depth > MAX_DEPTH:
                    return _line(event), f"nested more than {MAX_DEPTH} deep"
            elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                depth -= 1
    except yaml.YAMLError:
        return None
    return None


def _line(event: Any) -> int:
    mark = event.start_mark
    return mark.line + 1 if mark is not None else 0


def limited_yaml_loader(base: Any) -> Any:
    """A subclass of the YAML loader ``base`` that reads scalars as the JSON path does: an integer of more
    than :data:`MAX_INTEGER_DIGITS` digits, NaN and infinities are refused (a ``ConstructorError``, one line
    where it stands), and a date stays the string it was written as (``2024-13-45`` is no traceback)."""
    from yaml.constructor import ConstructorError, SafeConstructor

    def construct_int(loader: Any, node: Any) -> Any:
        text = loader.construct_scalar(node)
        if sum(character.isdigit() for character in text) > MAX_INTEGER_DIGITS:
            raise ConstructorError(None, None, f"an integer of more than {MAX_INTEGER_DIGITS} digits", node.start_mark)
        return SafeConstructor.construct_yaml_int(loader, node)

    def construct_float(loader: Any, node: Any) -> Any:
        value = SafeConstructor.construct_yaml_float(loader, node)
        if not math.isfinite(value):
            raise ConstructorError(None, None, f"a number that is not finite ({loader.construct_scalar(node)})",
                                   node.start_mark)
        return value

    loader: Any = type(f"Limited{base.__name__}", (base,), {})
    loader.add_constructor("tag:yaml.org,2002:int", construct_int)
    loader.add_constructor("tag:yaml.org,2002:float", construct_float)
    loader.add_constructor("tag:yaml.org,2002:timestamp", lambda loader, node: loader.construct_scalar(node))
    return loader
