"""The sandbox that instruction templates run in: Jinja's own, and bounds on what one render may
build and how long it may run.

``jinja2.sandbox.SandboxedEnvironment`` stops a template from reaching Python's internals, not
from spending memory or time: ``'%1000000000d' % 1``, ``'{:1000000000}'.format(1)``,
``([a] * 20000)|join``, ``replace('x', 'y' * 20000)``, ``s ~ s`` fifteen times, an integer
squared over and over and three nested ``range(1000)`` loops each cost gigabytes or minutes.
:class:`LimitedSandbox` refuses each of them (``SecurityError``) before the value is built:

* every number argument, repetition and power result is at most :data:`MAX_VALUE_SIZE`;
* every string or list an operation, filter, method or ``~`` builds is at most
  :data:`MAX_STRING_CHARS` long, estimated from its inputs before it is built (``%`` and
  ``format`` from their width and precision fields, ``join`` and ``replace`` from their parts);
* every integer result is at most :data:`MAX_INTEGER_BITS` bits;
* ``range()`` gives at most :data:`MAX_LOOP` numbers, and one render runs at most
  :data:`MAX_STEPS` lines of template code (:func:`step_budget`: loops of any kind, empty ones too).
"""

from __future__ import annotations

import contextlib
import functools
import re
import string
import sys
from collections.abc import Callable, Iterator
from typing import Any

import jinja2
from jinja2.compiler import CodeGenerator, Frame
from jinja2.exceptions import SecurityError
from jinja2.sandbox import SandboxedEnvironment

MAX_OUTPUT_CHARS = 20_000  # an instruction is a paragraph; MERA's are under 1,000 characters
MAX_VALUE_SIZE = 20_000  # the largest number argument, repeated sequence or power result (in digits) allowed
MAX_STRING_CHARS = 20_000  # the longest string or list one operation may build
MAX_INTEGER_BITS = 66_500  # an integer of about MAX_VALUE_SIZE decimal digits
MAX_LOOP = 1_000  # range() of at most this many numbers
MAX_STEPS = 200_000  # lines of template code one render may run (a loop body costs one or more a turn)

_TEMPLATE_FILE = "<template>"  # what compiled template code names as its file
_PRINTF_FIELD = re.compile(r"%(?:\([^)]*\))?[-+ #0]*(\*|\d+)?(?:\.(\*|\d+))?")
_NUMBERS = re.compile(r"\d+")
#: str methods whose result can be far longer than their inputs, with the estimate checked first.
_GROWING_METHODS = frozenset({"format", "format_map", "replace", "join", "expandtabs"})


def _check_size(value: Any, what: str) -> None:
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_VALUE_SIZE:
        raise SecurityError(f"{what} {value} is larger than the limit of {MAX_VALUE_SIZE}")


def _check_length(length: int, what: str) -> None:
    if length > MAX_STRING_CHARS:
        raise SecurityError(f"{what} of about {length} characters or items is longer than the limit of {MAX_STRING_CHARS}")


def _check_result(value: Any, what: str) -> Any:
    """``value`` once it is within the limits of a string, list or integer a template may hold."""
    if isinstance(value, (str, list, tuple, dict)):
        _check_length(len(value), what)
    elif isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > MAX_INTEGER_BITS:
        raise SecurityError(f"{what} is an integer of more than {MAX_INTEGER_BITS} bits")
    return value


def _printf_width(text: str, args: Any) -> int:
    """The characters the width and precision fields of a ``%`` format can add."""
    values = args if isinstance(args, tuple) else (args,)
    for value in values:
        _check_size(value, "a % argument")
    total = 0
    for width, precision in _PRINTF_FIELD.findall(text):
        for field in (width, precision):
            number = MAX_VALUE_SIZE if field == "*" else int(field or 0)
            _check_size(number, "a % field width")
            total += number
    return total


def _format_width(text: str) -> int:
    """The characters the format specs of a ``str.format`` string can add (nested specs included)."""
    total = 0
    try:
        fields = list(string.Formatter().parse(text))
    except ValueError:
        return 0  # format itself refuses it
    for _, _, spec, _ in fields:
        for number in _NUMBERS.findall(spec or ""):
            _check_size(int(number), "a format width")
            total += int(number)
    return total


def format_instruction(instruction: str, inputs: dict[str, Any]) -> str:
    """MERA's ``instruction.format(**inputs)`` of an item from anywhere, its size estimated first (a format
    width like ``{question:>300000000}`` is refused, as in a template): SecurityError past the limits."""
    _check_str_method(instruction, "format", (), inputs)
    return instruction.format(**inputs)


def _check_str_method(text: str, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Refuse a call of a growing str method whose result would pass MAX_STRING_CHARS."""
    if name in ("format", "format_map"):
        values = [*args, *kwargs.values(), *(args[0].values() if name == "format_map" and args and isinstance(args[0], dict) else ())]
        _check_length(len(text) + _format_width(text) + sum(len(str(value)) for value in values), f"str.{name}")
    elif name == "replace" and len(args) >= 2 and isinstance(args[0], str) and isinstance(args[1], str):
        count = len(text) + 1 if not args[0] else text.count(args[0])
        _check_length(len(text) + count * max(0, len(args[1]) - len(args[0])), "str.replace")
    elif name == "expandtabs":
        size = args[0] if args else kwargs.get("tabsize", 8)
        _check_size(size, "a tab size")
        _check_length(len(text) + text.count("\t") * int(size), "str.expandtabs")


def _check_join(separator: str, items: list[Any]) -> None:
    _check_length(sum(len(str(item)) for item in items) + len(separator) * max(0, len(items) - 1), "a join")


class _LimitedCodeGenerator(CodeGenerator):
    """Jinja's code generator with ``a ~ b`` compiled to :meth:`LimitedSandbox.concat` (it is no
    operator the sandbox could intercept)."""

    def visit_Concat(self, node: jinja2.nodes.Concat, frame: Frame) -> None:  # noqa: N802 - as jinja2 names it
        self.write("environment.limited_concat((")
        for argument in node.nodes:
            self.visit(argument, frame)
            self.write(", ")
        self.write("))")


class LimitedSandbox(SandboxedEnvironment):
    """A sandbox that also bounds the size of what a template can build (see the module docstring)."""

    code_generator_class = _LimitedCodeGenerator
    intercepted_binops = frozenset({"*", "**", "+", "%", "//", "-"})

    def __init__(self) -> None:
        super().__init__(undefined=jinja2.StrictUndefined, autoescape=False, loader=None)
        self.globals["range"] = self.limited_range
        self.filters = {name: self.limited_filter(name, function) for name, function in self.filters.items()}

    @staticmethod
    def limited_range(*args: int) -> range:
        numbers = range(*args)
        if len(numbers) > MAX_LOOP:
            raise SecurityError(f"range of {len(numbers)} numbers is more than the limit of {MAX_LOOP}")
        return numbers

    @staticmethod
    def limited_concat(parts: tuple[Any, ...]) -> str:
        texts = [str(part) for part in parts]
        _check_length(sum(map(len, texts)), "a ~ concatenation")
        return "".join(texts)

    @staticmethod
    def limited_filter(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def guarded(*args: Any, **kwargs: Any) -> Any:
            arguments = list(args)
            if arguments and isinstance(arguments[0], (jinja2.runtime.Context, jinja2.nodes.EvalContext, jinja2.Environment)):
                arguments = arguments[1:]  # pass_context / pass_eval_context / pass_environment filters
            for value in (*arguments[1:], *kwargs.values()):
                _check_size(value, "a filter argument")
            if arguments:
                _check_filter(name, arguments[0], arguments[1:], kwargs)
            return _check_result(function(*args, **kwargs), f"the {name} filter's result")

        return guarded

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "*":
            for count, other in ((left, right), (right, left)):
                if isinstance(count, int) and hasattr(other, "__len__"):
                    _check_size(count * len(other), "a repeated sequence of length")
            if isinstance(left, int) and isinstance(right, int) and left.bit_length() + right.bit_length() > MAX_INTEGER_BITS:
                raise SecurityError(f"a product of more than {MAX_INTEGER_BITS} bits")
        if operator == "**" and isinstance(left, int) and isinstance(right, int) and abs(left) > 1:
            _check_size(right * len(str(abs(left))), "a power of about this many digits:")
        if operator == "%" and isinstance(left, str):
            _check_length(len(left) + _printf_width(left, right), "a % format")
        if operator == "+" and hasattr(left, "__len__") and hasattr(right, "__len__"):
            _check_length(len(left) + len(right), "a + concatenation")
        return _check_result(super().call_binop(context, operator, left, right), f"the result of {operator}")

    def getattr(self, obj: Any, attribute: str) -> Any:
        value = super().getattr(obj, attribute)
        if isinstance(obj, str) and attribute in _GROWING_METHODS and callable(value):
            return _guarded_str_method(obj, attribute, value)
        return value

    def getitem(self, obj: Any, argument: Any) -> Any:
        if isinstance(obj, str) and isinstance(argument, str):
            return self.getattr(obj, argument)
        return super().getitem(obj, argument)

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N805 - as jinja2 names it
        for value in (*args, *kwargs.values()):
            _check_size(value, "a number argument")
        return _check_result(super().call(__context, __obj, *args, **kwargs), "a call's result")


def _guarded_str_method(text: str, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
    def guarded(*args: Any, **kwargs: Any) -> Any:
        if name == "join":
            items = list(args[0]) if args else []
            _check_length(len(items), "a join of items")
            _check_join(text, items)
            return method(items)
        _check_str_method(text, name, args, kwargs)
        return method(*args, **kwargs)

    return guarded


def _check_filter(name: str, value: Any, args: list[Any], kwargs: dict[str, Any]) -> None:
    """The estimate for a filter whose result can be far longer than its input."""
    if name == "join" and hasattr(value, "__iter__") and not isinstance(value, str):
        items = list(value) if isinstance(value, (list, tuple)) else None
        if items is not None:
            separator = args[0] if args else kwargs.get("d", "")
            _check_join(str(separator), items)
    elif name == "replace" and isinstance(value, str):
        _check_str_method(value, "replace", tuple(str(arg) for arg in args[:2]), {})
    elif name == "format" and isinstance(value, str):
        _check_length(len(value) + _printf_width(value, tuple(args) or tuple(kwargs.values())), "the format filter")
    elif name == "indent" and isinstance(value, str):
        width = args[0] if args else kwargs.get("width", 4)
        _check_length(len(value) + (value.count("\n") + 1) * (len(width) if isinstance(width, str) else int(width)),
                      "the indent filter")


@contextlib.contextmanager
def step_budget(limit: int = MAX_STEPS) -> Iterator[None]:
    """Count the lines of template code run inside this block (a loop turn is at least one);
    past ``limit`` the template's code raises SecurityError. Python's tracer is on only here,
    and whatever tracer was on before (a coverage tool) is put back."""
    steps = 0

    def count_line(frame: Any, event: str, arg: Any) -> Any:
        nonlocal steps
        steps += 1
        if steps > limit:
            raise SecurityError(f"the template ran more than {limit} steps (a loop too long?)")
        return count_line

    def in_templates_only(frame: Any, event: str, arg: Any) -> Any:
        return count_line if frame.f_code.co_filename == _TEMPLATE_FILE else None

    previous = sys.gettrace()
    sys.settrace(in_templates_only)
    try:
        yield
    finally:
        sys.settrace(previous)
