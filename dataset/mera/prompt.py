"""Instruction templates: Jinja files rendered in a sandbox into MERA's ``instruction`` field.

Templates are data a user may supply, so they only ever run in a
``jinja2.sandbox.SandboxedEnvironment`` with undefined names as errors, no loader
(``include``, ``import`` and ``extends`` are refused when the template is read), and limits
on what one evaluation may build and run (:mod:`dataset.mera.prompt_sandbox`), and at most
:data:`MAX_OUTPUT_CHARS` of output. The rendered
instruction keeps MERA's literal ``{question}`` placeholder (single braces are plain text to
Jinja) and the ``<image>`` marker. MERA fills the instruction with
``instruction.format(**inputs)``, so a rendered instruction may name no other field: ``{image}``
would be filled with the image's path, ``{answer}`` raises KeyError, ``{}`` IndexError. Every
instruction is checked for exactly that before anything is written.

A :class:`PromptSet` is several templates; :meth:`PromptSet.assign` spreads them over the items so
that every prompt gets an equal share of every question type. The default set, ``mera-blocks``, is
MERA Multi's block scheme (:mod:`dataset.mera.prompt_blocks`, data in ``dataset/mera/prompts/blocks.json``)
without the layouts that ask for reasoning (``mera-blocks-reasoning``, ``mera-blocks-all`` by name);
the earlier single-style set, one file per prompt in ``dataset/mera/prompts/instructions/``, is still
there by the name ``single-style``.
"""

from __future__ import annotations

import hashlib
import string
from collections.abc import Sequence
from pathlib import Path

import jinja2
import numpy as np
from jinja2 import nodes
from jinja2.exceptions import SecurityError

import dataset.mera.prompt_blocks as prompt_blocks
from dataset.mera.prompt_sandbox import MAX_OUTPUT_CHARS, LimitedSandbox, step_budget
from ruclevr import streams
from ruclevr.cli import UsageError
from ruclevr.io import file_problem

PROMPTS_DIR = Path(__file__).parent / "prompts"
SINGLE_STYLE_DIR = PROMPTS_DIR / "instructions"  # the set shipped before the block scheme
SINGLE_STYLE_NAME = "single-style"
PROMPT_SET_NAMES = (*prompt_blocks.SET_NAMES, SINGLE_STYLE_NAME)
DEFAULT_PROMPTS_DIR = SINGLE_STYLE_DIR  # its name while it was the default; the default is now mera-blocks
CARD_PROMPT_PATH = PROMPTS_DIR / "card.j2"
TEMPLATE_SUFFIX = ".j2"
#: The largest template file read (the card's is about a kilobyte; the sandbox runs what it compiles).
MAX_TEMPLATE_BYTES = 1 << 20
REQUIRED_MARKERS = ("<image>", "{question}")
FORMAT_FIELDS = ("question",)  # the only inputs field an instruction may name


def instruction_format_problem(text: str) -> str | None:
    """Why ``text.format(**inputs)`` would fail or fill in more than the question, or None."""
    try:
        fields = list(string.Formatter().parse(text))
    except ValueError as error:
        return f"str.format cannot read it ({error}); write a literal brace as {{{{ or }}}}"
    for _, field, spec, conversion in fields:
        if field is None:
            continue
        if field not in FORMAT_FIELDS or spec or conversion:
            shown = "{" + field + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
            return f"{shown} is a str.format field, and MERA fills only {{question}}"
    return None


LOADING_NODES = {nodes.Include: "include", nodes.Import: "import", nodes.FromImport: "from ... import",
                 nodes.Extends: "extends"}


class InstructionTemplate:
    """A compiled instruction template; ``render(question_type=..., split=...)`` gives the instruction."""

    def __init__(self, source: str, name: str) -> None:
        self.source = source
        self.name = name
        # Instructions depend only on (question_type, split): a few distinct texts for thousands of items.
        self._rendered: dict[tuple[tuple[str, str], ...], str] = {}
        environment = LimitedSandbox()
        try:
            tree = environment.parse(source)
        except jinja2.TemplateSyntaxError as error:
            raise UsageError(f"prompt template {name} line {error.lineno}: {error.message}") from None
        for node_type, tag in LOADING_NODES.items():
            for node in tree.find_all(node_type):
                raise UsageError(f"prompt template {name} line {node.lineno}: '{tag}' is not allowed "
                                 "(a prompt is one self-contained file)")
        self._template = environment.from_string(tree)

    @classmethod
    def from_file(cls, path: str | Path | None = None) -> InstructionTemplate:
        """Read a template file (the ruCLEVR card's Russian prompt when ``path`` is None)."""
        template_path = Path(path) if path is not None else CARD_PROMPT_PATH
        problem = file_problem(template_path)
        if problem is not None and problem != "does not exist":  # a FIFO would wait for a writer forever
            raise UsageError(f"prompt template {template_path} {problem}")
        try:
            with open(template_path, "rb") as handle:
                data = handle.read(MAX_TEMPLATE_BYTES + 1)
            if len(data) > MAX_TEMPLATE_BYTES:
                raise UsageError(f"prompt template {template_path} is larger than {MAX_TEMPLATE_BYTES:,} bytes, "
                                 "the limit of a template file")
            source = data.decode("utf-8")
        except FileNotFoundError:
            raise UsageError(f"prompt template {template_path} does not exist") from None
        except (OSError, UnicodeDecodeError) as error:
            raise UsageError(f"prompt template {template_path} cannot be read as UTF-8 text: {error}") from None
        return cls(source, template_path.name)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.source.encode("utf-8")).hexdigest()

    def render(self, **context: str) -> str:
        """The instruction for one item; the variables are ``question_type`` and ``split``."""
        key = tuple(sorted(context.items()))
        if key not in self._rendered:
            self._rendered[key] = self._render(dict(key))
        return self._rendered[key]

    def record(self) -> dict[str, str]:
        """What goes into the export's ``info``: enough to rebuild with the same prompt."""
        return {"file": self.name, "sha256": self.sha256, "source": self.source}

    def _render(self, context: dict[str, str]) -> str:
        try:
            text = self._bounded_render(context)
        except jinja2.exceptions.SecurityError as error:
            raise UsageError(f"prompt template {self.name} tried an unsafe operation: {error}") from None
        except (OverflowError, MemoryError, RecursionError, ArithmeticError, TypeError, ValueError) as error:
            raise UsageError(f"prompt template {self.name} failed: {type(error).__name__}: {error}") from None
        except jinja2.TemplateError as error:
            allowed = ", ".join(context)
            raise UsageError(f"prompt template {self.name}: {error} (variables available: {allowed})") from None
        missing = [marker for marker in REQUIRED_MARKERS if marker not in text]
        if missing:
            raise UsageError(
                f"prompt template {self.name} must produce {' and '.join(REQUIRED_MARKERS)}; "
                f"missing {', '.join(missing)}"
            )
        problem = instruction_format_problem(text)
        if problem is not None:
            where = ", ".join(f"{name}={value}" for name, value in sorted(context.items()))
            raise UsageError(f"prompt template {self.name} ({where}): {problem}")
        return text

    def _bounded_render(self, context: dict[str, str]) -> str:
        """Render piece by piece, stopping once the output passes :data:`MAX_OUTPUT_CHARS`."""
        pieces, size = [], 0
        with step_budget():
            for piece in self._template.generate(context):
                size += len(piece)
                if size > MAX_OUTPUT_CHARS:
                    raise SecurityError(f"the instruction is longer than the limit of {MAX_OUTPUT_CHARS} characters")
                pieces.append(piece)
        return "".join(pieces)


class PromptSet:
    """Instruction templates used side by side, each for an equal share of every question type."""

    def __init__(self, templates: Sequence[InstructionTemplate]) -> None:
        if not templates:
            raise UsageError("no prompt templates given")
        names = [template.name for template in templates]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise UsageError(f"prompt templates share the file name {repeated[0]}; give each prompt its own name")
        self.templates = list(templates)

    @classmethod
    def from_paths(cls, paths: Sequence[str | Path] | None = None) -> PromptSet:
        """Templates from files, folders (each folder's ``*.j2`` in name order) and set names
        (:data:`PROMPT_SET_NAMES`, where no such file exists); the shipped ``mera-blocks`` set by default."""
        templates: list[InstructionTemplate] = []
        for given in [Path(p) for p in paths] if paths else [Path(prompt_blocks.SET_NAME)]:
            if str(given) in prompt_blocks.SET_NAMES and not given.exists():
                templates.extend(InstructionTemplate(source, name)
                                 for name, source in prompt_blocks.block_templates(set_name=str(given)))
            else:
                templates.extend(InstructionTemplate.from_file(path) for path in cls._template_files(given))
        return cls(templates)

    @staticmethod
    def _template_files(given: Path) -> list[Path]:
        """The template files a ``--prompt`` value names: a file, a folder's ``*.j2``, or the single-style set."""
        if str(given) == SINGLE_STYLE_NAME and not given.exists():
            given = SINGLE_STYLE_DIR
        if not given.is_dir():
            return [given]
        found = sorted(given.glob(f"*{TEMPLATE_SUFFIX}"))
        if not found:
            raise UsageError(f"prompt folder {given} holds no *{TEMPLATE_SUFFIX} templates")
        return found

    @property
    def sha256(self) -> str:
        """One hash of every template, in order: a changed, added or reordered prompt changes it."""
        digest = hashlib.sha256()
        for template in self.templates:
            digest.update(template.sha256.encode("ascii"))
        return digest.hexdigest()

    def record(self) -> dict[str, object]:
        return {"sha256": self.sha256, "templates": [template.record() for template in self.templates]}

    def assign(self, question_types: Sequence[str], types_in_order: Sequence[str], seed: int) -> list[int]:
        """A template index per item: the k-th item of a type gets its type's rotation at k.

        Each type walks through all templates in an order drawn from ``(seed, type)``, so over
        any prefix of the items every template has an equal share of each type (counts differ
        by at most one). ``types_in_order`` fixes each type's number in the seed.
        """
        numbers = {name: number for number, name in enumerate(types_in_order)}
        return [int(index) for index in self.assign_numbers(np.array([numbers[t] for t in question_types], dtype=np.intp), seed)]

    def assign_numbers(self, type_numbers: np.ndarray, seed: int) -> np.ndarray:
        """:meth:`assign` for items given as their type's number in ``types_in_order``, as an array."""
        assigned = np.zeros(len(type_numbers), dtype=np.intp)
        for number in np.unique(type_numbers):
            items = np.flatnonzero(type_numbers == number)
            rotation = streams.generator("dataset.prompt", seed, type_number=int(number)).permutation(len(self.templates))
            assigned[items] = rotation[np.arange(items.size) % len(self.templates)]
        return assigned
