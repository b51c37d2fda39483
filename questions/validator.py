"""Reading and validating family files: every problem is reported, each with its file, line and place.

Family files are data (YAML or JSON) and are never evaluated. A file holds one family (a
mapping with ``id``) or a group (``{"families": [...]}``). Validation checks each program
against the function signatures of :mod:`questions.functions`, each parameter against the
vocabulary, and each text template against the parameters, and collects all problems
instead of stopping at the first.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

from assets.placeholders import did_you_mean, is_placeholder
from assets.vocabulary import ATTRIBUTES, load_vocabulary
from questions.constraints import Constraints, check_constraints
from questions.family import Family, TemplateNode
from questions.functions import (
    FILTER_MACRO,
    OBJECTS,
    RELATION,
    allowed_values,
    answer_types,
    function_registry,
)
from questions.skills import skill_and_difficulty
from questions.text import english_template_problems, other_language_problems
from ruclevr import jsonlimits

#: What a folder's family files end with: a .json beside them (an output, say) is not one of them.
FAMILY_SUFFIXES = (".yaml", ".yml")
FAMILY_KEYS = ("id", "group", "params", "program", "constraints", "text", "clevr", "skill", "difficulty")
REQUIRED_KEYS = ("id", "group", "params", "program", "text")
NODE_KEYS = ("function", "inputs", "value_inputs")
ID_PATTERN = re.compile(r"[a-z0-9_]+(/[a-z0-9_]+)*")
LANGUAGE_PATTERN = re.compile(r"[a-z]{2,3}")
#: CLEVR 1.0's template files: a family's ``clevr: [file, index]`` names its counterpart there.
CLEVR_TEMPLATE_FILES = (
    "zero_hop.json", "one_hop.json", "two_hop.json", "three_hop.json", "single_and.json",
    "single_or.json", "same_relate.json", "comparison.json", "compare_integer.json",
)

Path_ = tuple[Any, ...]

# libyaml's safe loader when PyYAML was built with it (ten times faster), else the pure-Python one.
_YAML_LOADER = jsonlimits.limited_yaml_loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader))


@dataclass(frozen=True)
class Problem:
    """One thing wrong in a family file, located as precisely as the file allows."""

    file: str
    line: int | None
    where: str
    message: str

    def __str__(self) -> str:
        place = f"{self.file}:{self.line}" if self.line else self.file
        return f"{place}: {self.where}: {self.message}" if self.where else f"{place}: {self.message}"


class FamilyError(ValueError):
    """Family files with problems; ``problems`` lists all of them."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        more = f" (and {len(problems) - 1} more; run `python -m questions validate` to see all)" if len(problems) > 1 else ""
        super().__init__(f"{problems[0]}{more}")


#: The problems of one template (text, the family's parameters); [] when it is fine.
TemplateCheck = Callable[[str, Mapping[str, str]], list[str]]


def template_checker(language: str, checkers: Mapping[str, TemplateCheck] = MappingProxyType({})) -> TemplateCheck:
    """The problems of one template in ``language``, found by the rules its realiser uses:
    English by :mod:`questions.text`; a language in ``checkers`` by the checker given, which the
    command owning that language's realiser passes (``translate`` and ``python -m dataset families
    validate`` give Russian's, the native realiser's compiler); other languages' texts only have
    their placeholders checked."""
    if language == "en":
        return english_template_problems
    return checkers.get(language, other_language_problems)


def param_types() -> tuple[str, ...]:
    """Types a family parameter may have: every vocabulary attribute, and relation."""
    return (*ATTRIBUTES, RELATION)


def validate_files(paths: Iterable[Path], checkers: Mapping[str, TemplateCheck] = MappingProxyType({})) -> tuple[list[Family], list[Problem]]:
    """Validate several files (templates by :func:`template_checker`); family ids must also be unique across them."""
    families: list[Family] = []
    problems: list[Problem] = []
    first_seen: dict[str, str] = {}
    for path in paths:
        found, file_problems = validate_file(path, checkers)
        problems.extend(file_problems)
        for family in found:
            if family.id in first_seen:
                problems.append(Problem(str(path), None, f"family {family.id}", f"id already used in {first_seen[family.id]}"))
            else:
                first_seen[family.id] = str(path)
                families.append(family)
    return families, problems


#: The largest family file read (the shipped ones are at most 73 KB).
MAX_FAMILY_FILE_BYTES = 1 << 20


def validate_file(path: Path, checkers: Mapping[str, TemplateCheck] = MappingProxyType({})) -> tuple[list[Family], list[Problem]]:
    """The valid families of one file and the problems of the others (or of the file itself)."""
    path = Path(path)
    if path.exists() and not path.is_file() and not path.is_dir():  # a FIFO would wait for a writer forever
        return [], [Problem(str(path), None, "", "not a regular file")]
    if path.is_file() and path.stat().st_size > MAX_FAMILY_FILE_BYTES:  # its values would fill the messages
        return [], [Problem(str(path), None, "", f"larger than {MAX_FAMILY_FILE_BYTES:,} bytes, the limit of a family file")]
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return [], [Problem(str(path), None, "", "no such file")]
    except (OSError, UnicodeDecodeError) as error:
        return [], [Problem(str(path), None, "", f"cannot read: {error}")]
    data, lines, problem = _parse(path, text)
    if problem is not None:
        return [], [problem]
    checker = _Checker(str(path), lines, checkers)
    families = checker.check_document(data, path.name)
    return families, checker.problems


def _parse(path: Path, text: str) -> tuple[Any, dict[Path_, int], Problem | None]:
    if path.suffix == ".json":
        try:
            data = jsonlimits.loads(text)
        except json.JSONDecodeError as error:
            return None, {}, Problem(str(path), error.lineno, "", f"invalid JSON: {error.msg} (column {error.colno})")
        except jsonlimits.JsonLimitError as error:
            return None, {}, Problem(str(path), None, "", f"refused: the file {error}")
    else:
        try:
            beyond = jsonlimits.yaml_beyond_limits(text, _YAML_LOADER)
            if beyond is not None:
                return None, {}, Problem(str(path), beyond[0], "", f"refused: {beyond[1]}")
            data = yaml.load(text, Loader=_YAML_LOADER)
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            reason = getattr(error, "problem", None) or str(error).splitlines()[0]
            line = mark.line + 1 if mark is not None else None
            return None, {}, Problem(str(path), line, "", f"invalid YAML: {reason}")
    lines, duplicates = _line_numbers(text)
    if duplicates:
        where, line = duplicates[0]
        return None, {}, Problem(str(path), line, _format_path(where[:-1]), f"key {where[-1]!r} given twice")
    return data, lines, None


def _line_numbers(text: str) -> tuple[dict[Path_, int], list[tuple[Path_, int]]]:
    """Line of every mapping value and list item, by path; and keys given twice (YAML keeps only the last)."""
    lines: dict[Path_, int] = {}
    duplicates: list[tuple[Path_, int]] = []
    try:
        root = yaml.compose(text, Loader=_YAML_LOADER)
    except yaml.YAMLError:
        return lines, duplicates  # JSON that YAML cannot read: report places without lines
    stack: list[tuple[Path_, Any]] = [((), root)] if root is not None else []
    while stack:
        path, node = stack.pop()
        lines[path] = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            seen: set[Any] = set()
            for key, value in node.value:
                name = key.value
                if name in seen:
                    duplicates.append((path + (name,), key.start_mark.line + 1))
                seen.add(name)
                stack.append((path + (name,), value))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((path + (i,), item) for i, item in enumerate(node.value))
    return lines, duplicates


def _format_path(path: Path_) -> str:
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


class _Checker:
    """Walks one file's data, recording problems with their place."""

    def __init__(self, file: str, lines: dict[Path_, int], checkers: Mapping[str, TemplateCheck]) -> None:
        self.file = file
        self.lines = lines
        self.checkers = checkers
        self.problems: list[Problem] = []
        self.label = ""  # "family count/zero_hop" while checking one family

    def report(self, path: Path_, message: str) -> None:
        line = None
        for end in range(len(path), -1, -1):
            if path[:end] in self.lines:
                line = self.lines[path[:end]]
                break
        where = " ".join(part for part in (self.label, _format_path(path)) if part)
        self.problems.append(Problem(self.file, line, where, message))

    # -- the document -------------------------------------------------------------------------
    def check_document(self, data: Any, file_name: str) -> list[Family]:
        if isinstance(data, Mapping) and "families" in data:
            extra = [key for key in data if key != "families"]
            if extra:
                self.report((extra[0],), f"unknown key {extra[0]!r} beside 'families'")
            entries = data["families"]
            if not isinstance(entries, list) or not entries:
                self.report(("families",), "'families' must be a non-empty list of families")
                return []
            located: list[tuple[Path_, Any]] = [(("families", i), entry) for i, entry in enumerate(entries)]
        elif isinstance(data, Mapping) and "id" in data:
            located = [((), data)]
        else:
            self.report((), "expected one family (a mapping with 'id') or {families: [...]}")
            return []
        families = []
        for position, (path, entry) in enumerate(located):
            family = self.check_family(path, entry, file_name, position)
            if family is not None:
                families.append(family)
        return families

    def check_family(self, path: Path_, raw: Any, file_name: str, position: int) -> Family | None:
        self.label = ""
        if not isinstance(raw, Mapping):
            self.report(path, "a family must be a mapping")
            return None
        before = len(self.problems)
        family_id: str = raw.get("id")  # type: ignore[assignment]  # checked against ID_PATTERN below
        if isinstance(family_id, str):
            self.label = f"family {family_id}"
        for key in raw:
            if key not in FAMILY_KEYS:
                self.report(path + (key,), f"unknown key {key!r}{did_you_mean(key, FAMILY_KEYS)}; allowed: {', '.join(FAMILY_KEYS)}")
        for key in REQUIRED_KEYS:
            if key not in raw:
                self.report(path, f"missing {key!r}")
        if before != len(self.problems):
            return None
        if not isinstance(family_id, str) or not ID_PATTERN.fullmatch(family_id):
            self.report(path + ("id",), f"id must look like 'group/name' (lower case, digits, _), got {family_id!r}")
        if not isinstance(raw["group"], str) or not raw["group"]:
            self.report(path + ("group",), "group must be a non-empty string")
        params = self.check_params(path + ("params",), raw["params"])
        program, uses = self.check_program(path + ("program",), raw["program"], params)
        for name in params:
            if uses.get(name, 0) != 1:
                self.report(path + ("params", name), f"parameter {name} is used {uses.get(name, 0)} times in the program; use it once")
        constraints = self.check_constraints(path + ("constraints",), raw.get("constraints") or {}, params, program)
        text = self.check_text(path + ("text",), raw["text"], params)
        clevr = self.check_clevr(path + ("clevr",), raw.get("clevr"))
        answer_type = program[-1].output if program else ""
        functions = [node.function for node in program]
        skill, difficulty, wrong = skill_and_difficulty(raw.get("skill"), raw.get("difficulty"), functions, answer_type)
        for key, message in wrong:
            self.report(path + (key,), message)
        if before != len(self.problems):
            return None
        return Family(
            id=family_id,
            group=raw["group"],
            params=params,
            program=tuple(program),
            empty=constraints.empty,
            not_empty=constraints.not_empty,
            some_set=constraints.some_set,
            different_outputs=constraints.different,
            least=constraints.least,
            disjoint=constraints.disjoint,
            empty_share=constraints.empty_share,
            same_object_allowed=constraints.same_object_allowed,
            text=text,
            source=file_name,
            position=position,
            clevr=clevr,
            skill=skill,
            difficulty=difficulty,
        )

    def check_clevr(self, path: Path_, raw: Any) -> tuple[str, int] | None:
        if raw is None:
            return None
        if (
            isinstance(raw, list) and len(raw) == 2 and raw[0] in CLEVR_TEMPLATE_FILES
            and isinstance(raw[1], int) and not isinstance(raw[1], bool) and raw[1] >= 0
        ):
            return raw[0], raw[1]
        self.report(path, f"clevr must be [CLEVR template file, index], the file one of {', '.join(CLEVR_TEMPLATE_FILES)}; got {raw!r}")
        return None

    # -- parameters ---------------------------------------------------------------------------
    def check_params(self, path: Path_, raw: Any) -> dict[str, str]:
        if not isinstance(raw, Mapping):
            self.report(path, "params must be a mapping from <NAME> to a type")
            return {}
        params: dict[str, str] = {}
        for name, kind in raw.items():
            if not isinstance(name, str) or not is_placeholder(name):
                self.report(path + (name,), f"parameter name {name!r} must look like <Z> or <C2>")
                continue
            if kind not in param_types():
                self.report(path + (name,), f"parameter {name} has unknown type {kind!r}{did_you_mean(kind, param_types())}; "
                            f"allowed: {', '.join(param_types())}")
                continue
            params[name] = kind
        return params

    # -- program ------------------------------------------------------------------------------
    def check_program(self, path: Path_, raw: Any, params: Mapping[str, str]) -> tuple[list[TemplateNode], dict[str, int]]:
        uses: dict[str, int] = {}
        if not isinstance(raw, list) or not raw:
            self.report(path, "program must be a non-empty list of nodes")
            return [], uses
        nodes: list[TemplateNode] = []
        used_as_input: set[int] = set()
        for position, entry in enumerate(raw):
            node = self.check_node(path + (position,), position, entry, nodes, params, uses)
            used_as_input.update(node.inputs)
            nodes.append(node)
        for position, node in enumerate(nodes[:-1]):
            # a swap's scene is read by every later node (questions.hypothetical): its output may go unread
            if position not in used_as_input and node.output != "?" and node.function != "swap":
                self.report(path + (position,), f"the output of node {position} ({node.function}) is never used")
        last = nodes[-1]
        if last.output not in answer_types() and last.output != "?":
            self.report(path + (len(nodes) - 1,), f"the last node gives {last.output}, not an answer ({', '.join(answer_types())})")
        return nodes, uses

    def check_node(
        self, path: Path_, position: int, raw: Any, earlier: list[TemplateNode], params: Mapping[str, str], uses: dict[str, int]
    ) -> TemplateNode:
        if not isinstance(raw, Mapping):
            self.report(path, "a node must be a mapping with 'function', 'inputs', 'value_inputs'")
            return TemplateNode("?", (), (), "?")
        for key in raw:
            if key not in NODE_KEYS:
                hint = " (CLEVR's side_inputs are called value_inputs here)" if key == "side_inputs" else ""
                guess = "" if hint else did_you_mean(key, NODE_KEYS)
                self.report(path + (key,), f"unknown key {key!r}{guess}; allowed: {', '.join(NODE_KEYS)}{hint}")
        inputs = raw.get("inputs", [])
        values = raw.get("value_inputs", [])
        if not isinstance(inputs, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in inputs):
            self.report(path + ("inputs",), "inputs must be a list of node indices")
            inputs = []
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            self.report(path + ("value_inputs",), "value_inputs must be a list of strings")
            values = []
        name: str = raw.get("function")  # type: ignore[assignment]  # checked against the registry below
        registry = function_registry()
        if name != FILTER_MACRO and name not in registry:
            known = ", ".join([FILTER_MACRO, *registry])
            self.report(path + ("function",), f"unknown function {name!r}{did_you_mean(name, [FILTER_MACRO, *registry])}; known: {known}")
            for value in values:  # count its parameters as used: one typo, one problem
                if value in params:
                    uses[value] = uses.get(value, 0) + 1
            return TemplateNode("?", tuple(inputs), (), "?")
        if name == FILTER_MACRO:
            input_types: tuple[str, ...] = (OBJECTS,)
            output = OBJECTS
            self.check_filter_values(path + ("value_inputs",), values, params, uses)
        else:
            function = registry[name]
            input_types, output = function.inputs, function.output
            self.check_values(path + ("value_inputs",), name, function.value_type, values, params, uses)
        if len(inputs) != len(input_types):
            self.report(path + ("inputs",), f"{name} takes {len(input_types)} inputs, got {len(inputs)}")
        else:
            for slot, (source, expected) in enumerate(zip(inputs, input_types, strict=True)):
                if not 0 <= source < position:
                    self.report(path + ("inputs", slot), f"input {source} is not an earlier node (0..{position - 1})")
                elif earlier[source].output not in (expected, "?"):
                    self.report(path + ("inputs", slot), f"{name} needs {expected} here, node {source} ({earlier[source].function}) gives {earlier[source].output}")
        return TemplateNode(name, tuple(inputs), tuple(values), output)

    def check_values(
        self, path: Path_, name: str, value_type: str | None, values: list[str], params: Mapping[str, str], uses: dict[str, int]
    ) -> None:
        wanted = 0 if value_type is None else 1
        if len(values) != wanted:
            self.report(path, f"{name} takes {wanted} value inputs, got {len(values)}")
            return
        if values:
            self.check_value(path + (0,), values[0], value_type, params, uses)

    def check_filter_values(self, path: Path_, values: list[str], params: Mapping[str, str], uses: dict[str, int]) -> None:
        if not values:
            self.report(path, "filter needs at least one value input (a size, color, material or shape parameter)")
        attributes_seen: set[str] = set()
        vocabulary = load_vocabulary()
        for slot, value in enumerate(values):
            if is_placeholder(value):
                attribute = params.get(value)
                if attribute is None:
                    self.report(path + (slot,), f"{value} names no declared parameter{did_you_mean(value, params)}")
                    continue
                if attribute not in ATTRIBUTES:
                    self.report(path + (slot,), f"filter takes attribute parameters, {value} is a {attribute}")
                    continue
                uses[value] = uses.get(value, 0) + 1
            else:
                try:
                    attribute = vocabulary.attribute_of(value)
                except KeyError:
                    self.report(path + (slot,), f"{value!r} is neither a parameter nor a vocabulary value")
                    continue
            if attribute in attributes_seen:
                self.report(path + (slot,), f"filter already has a {attribute} input")
            attributes_seen.add(attribute)

    def check_value(self, path: Path_, value: str, value_type: str | None, params: Mapping[str, str], uses: dict[str, int]) -> None:
        if is_placeholder(value):
            if value not in params:
                self.report(path, f"{value} names no declared parameter{did_you_mean(value, params)}")
            elif params[value] != value_type:
                self.report(path, f"{value} is a {params[value]} parameter, this input needs a {value_type}")
            else:
                uses[value] = uses.get(value, 0) + 1
        elif value not in allowed_values(value_type):
            allowed = ", ".join(allowed_values(value_type))
            self.report(path, f"unknown {value_type} {value!r}{did_you_mean(value, allowed_values(value_type))}; "
                        f"allowed: {allowed} or a parameter")

    # -- constraints --------------------------------------------------------------------------
    def check_constraints(self, path: Path_, raw: Any, params: Mapping[str, str], program: list[TemplateNode]) -> Constraints:
        return check_constraints(self.report, self.check_param_list, path, raw, params, program)

    def check_param_list(self, path: Path_, raw: Any, params: Mapping[str, str], macro_params: set[str]) -> frozenset[str]:
        if not isinstance(raw, list):
            self.report(path, "expected a list of parameters")
            return frozenset()
        names = set()
        for slot, name in enumerate(raw):
            if name not in params:
                self.report(path + (slot,), f"{name!r} names no declared parameter{did_you_mean(name, params)}")
            elif name not in macro_params:
                self.report(path + (slot,), f"{name} is not an input of a filter node, so it always has a value")
            else:
                names.add(name)
        return frozenset(names)

    # -- text ---------------------------------------------------------------------------------
    def check_text(self, path: Path_, raw: Any, params: Mapping[str, str]) -> dict[str, tuple[str, ...]]:
        if not isinstance(raw, Mapping):
            self.report(path, "text must map a language code (en, ru, ...) to a list of templates")
            return {}
        if "en" not in raw:
            self.report(path, "text needs English templates ('en')")
        text: dict[str, tuple[str, ...]] = {}
        for language, templates in raw.items():
            where = path + (language,)
            if not isinstance(language, str) or not LANGUAGE_PATTERN.fullmatch(language):
                self.report(where, f"{language!r} is not a language code (two or three lower-case letters)")
                continue
            if not isinstance(templates, list) or not templates or not all(isinstance(t, str) and t.strip() for t in templates):
                self.report(where, "expected a non-empty list of non-empty strings")
                continue
            check = template_checker(language, self.checkers)
            for slot, template in enumerate(templates):
                for message in check(template, params):
                    self.report(where + (slot,), message)
            text[language] = tuple(templates)
        return text



def located_data(path: Path) -> tuple[Any, dict[Path_, int]]:
    """A readable family file's data and the line of each value in it, by path (``None, {}`` when unreadable)."""
    data, lines, problem = _parse(Path(path), Path(path).read_text(encoding="utf-8"))
    return (None, {}) if problem else (data, lines)
