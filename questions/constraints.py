"""A family's constraints: checking the ``constraints`` mapping of a family file.

The keys and their meaning are in docs/questions.md ("Constraints"); the search
(:mod:`questions.search`) enforces them on every question.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from questions.family import TemplateNode
from questions.functions import INTEGER, OBJECTS

CONSTRAINT_KEYS = ("empty", "not_empty", "min_count", "some_set", "different_outputs", "same_object_allowed", "disjoint", "empty_share")

Path_ = tuple[Any, ...]
Report = Callable[[Path_, str], None]
ParamList = Callable[[Path_, Any, Mapping[str, str], set[str]], frozenset[str]]


@dataclass(frozen=True)
class Constraints:
    """A family's constraints as validated."""

    empty: frozenset[str]
    not_empty: frozenset[str]
    some_set: frozenset[str]
    different: tuple[tuple[int, int], ...]
    least: tuple[tuple[int, int], ...]
    disjoint: tuple[tuple[int, int], ...]
    empty_share: float
    same_object_allowed: tuple[tuple[int, int], ...]


def _is_index(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _filter_of(program: list[TemplateNode], name: str) -> int:
    """The position of the filter node that takes parameter ``name``."""
    return next(position for position, node in enumerate(program) if name in node.value_inputs)


def check_constraints(report: Report, param_list: ParamList, path: Path_, raw: Any, params: Mapping[str, str], program: list[TemplateNode]) -> Constraints:
    if not isinstance(raw, Mapping):
        report(path, f"constraints must be a mapping with keys {', '.join(CONSTRAINT_KEYS)}")
        raw = {}
    for key in raw:
        if key not in CONSTRAINT_KEYS:
            report(path + (key,), f"unknown constraint {key!r}; allowed: {', '.join(CONSTRAINT_KEYS)}")
    macro_params = {value for node in program if node.is_filter_macro for value in node.value_inputs}
    empty = param_list(path + ("empty",), raw.get("empty", []), params, macro_params)
    not_empty_raw = raw.get("not_empty", [])
    not_empty_nodes = [entry for entry in not_empty_raw if _is_index(entry)] if isinstance(not_empty_raw, list) else []
    not_empty_params = [entry for entry in not_empty_raw if not _is_index(entry)] if isinstance(not_empty_raw, list) else not_empty_raw
    not_empty = param_list(path + ("not_empty",), not_empty_params, params, macro_params)
    for name in empty & not_empty:
        report(path, f"{name} cannot be both empty and not_empty")
    some_set = param_list(path + ("some_set",), raw.get("some_set", []), params, macro_params)
    if len({_filter_of(program, name) for name in some_set}) > 1:
        report(path + ("some_set",), "some_set must name parameters of one filter node")
    least = _check_least(report, path, not_empty_nodes, raw.get("min_count", {}), program)
    different = _check_pairs(report, path + ("different_outputs",), raw.get("different_outputs", []), program, "same")
    allowed = _check_pairs(report, path + ("same_object_allowed",), raw.get("same_object_allowed", []), program, "unique")
    disjoint = _check_pairs(report, path + ("disjoint",), raw.get("disjoint", []), program, "disjoint")
    return Constraints(empty, not_empty, some_set, tuple(different), least, tuple(disjoint),
                       _check_share(report, path + ("empty_share",), raw.get("empty_share", 0.0), least), tuple(allowed))

def _check_least(report: Report, path: Path_, nodes: list[int], raw: Any, program: list[TemplateNode]) -> tuple[tuple[int, int], ...]:
    """``not_empty`` node indices (at least 1) and ``min_count: {node: n}``: sets or counts with a floor."""
    if not isinstance(raw, Mapping) or not all(_is_index(k) and _is_index(v) and v >= 1 for k, v in raw.items()):
        report(path + ("min_count",), f"min_count must map node indices to counts of at least 1, got {raw!r}")
        raw = {}
    least: dict[int, int] = {node: 1 for node in nodes}
    for node, count in raw.items():
        least[node] = max(count, least.get(node, 0))
    for node in sorted(least):
        if not 0 <= node < len(program):
            report(path, f"node {node} is not a node of the program (0..{len(program) - 1})")
        elif program[node].output not in (OBJECTS, INTEGER):
            report(path, f"node {node} ({program[node].function}) gives {program[node].output}, not a set or a count")
    return tuple(sorted((node, count) for node, count in least.items() if 0 <= node < len(program)))

def _check_pairs(report: Report, path: Path_, raw: Any, program: list[TemplateNode], kind: str) -> list[tuple[int, int]]:
    """Node pairs: of one type (``same``), two unique nodes (``unique``), or an object and a set (``disjoint``)."""
    if not isinstance(raw, list):
        report(path, "expected a list of [node, node] pairs")
        return []
    pairs: list[tuple[int, int]] = []
    for slot, pair in enumerate(raw):
        where = path + (slot,)
        if not (isinstance(pair, list) and len(pair) == 2 and all(_is_index(i) for i in pair)):
            report(where, f"expected a pair of node indices, got {pair!r}")
        elif not all(0 <= i < len(program) for i in pair) or pair[0] == pair[1]:
            report(where, f"{pair} must name two different nodes of the program (0..{len(program) - 1})")
        elif kind == "same" and program[pair[0]].output != program[pair[1]].output:
            report(where, f"nodes {pair[0]} and {pair[1]} give different types ({program[pair[0]].output}, {program[pair[1]].output})")
        elif kind == "unique" and not all(program[i].function == "unique" for i in pair):
            report(where, f"{pair} must name two unique nodes")
        elif kind == "disjoint" and (program[pair[0]].function != "unique" or program[pair[1]].output != OBJECTS):
            report(where, f"{pair} must name a unique node (an object) and a node giving a set of objects")
        else:
            pairs.append((pair[0], pair[1]))
    return pairs

def _check_share(report: Report, path: Path_, raw: Any, least: tuple[tuple[int, int], ...]) -> float:
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not 0 <= raw <= 1:
        report(path, f"empty_share must be a number from 0 to 1, got {raw!r}")
        return 0.0
    if raw and not least:
        report(path, "empty_share needs not_empty nodes or min_count to relax")
    return float(raw)
