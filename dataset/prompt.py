"""The instruction template: a Jinja file rendered in a sandbox into MERA's ``instruction`` field.

Templates are data a user may supply, so they only ever run in
``jinja2.sandbox.SandboxedEnvironment`` with undefined names as errors. The rendered
instruction keeps MERA's literal ``{question}`` placeholder (single braces are plain text to
Jinja) and the ``<image>`` marker; MERA fills the question in from ``inputs.question``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import jinja2
from jinja2.sandbox import SandboxedEnvironment

from ruclevr.cli import UsageError

DEFAULT_PROMPT_PATH = Path(__file__).parent / "prompts" / "default.j2"
REQUIRED_MARKERS = ("<image>", "{question}")


class InstructionTemplate:
    """A compiled instruction template; ``render(question_type=..., split=...)`` gives the instruction."""

    def __init__(self, source: str, name: str) -> None:
        self.source = source
        self.name = name
        # Instructions depend only on (question_type, split): a few distinct texts for thousands of items.
        self._rendered: dict[tuple[tuple[str, str], ...], str] = {}
        environment = SandboxedEnvironment(undefined=jinja2.StrictUndefined, autoescape=False)
        try:
            self._template = environment.from_string(source)
        except jinja2.TemplateSyntaxError as error:
            raise UsageError(f"prompt template {name} line {error.lineno}: {error.message}") from None

    @classmethod
    def from_file(cls, path: str | Path | None = None) -> "InstructionTemplate":
        """Read a template file (the ruCLEVR card's Russian prompt when ``path`` is None)."""
        template_path = Path(path) if path is not None else DEFAULT_PROMPT_PATH
        try:
            source = template_path.read_text(encoding="utf-8")
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
            text = self._template.render(context)
        except jinja2.exceptions.SecurityError as error:
            raise UsageError(f"prompt template {self.name} tried an unsafe operation: {error}") from None
        except jinja2.TemplateError as error:
            allowed = ", ".join(context)
            raise UsageError(f"prompt template {self.name}: {error} (variables available: {allowed})") from None
        missing = [marker for marker in REQUIRED_MARKERS if marker not in text]
        if missing:
            raise UsageError(
                f"prompt template {self.name} must produce {' and '.join(REQUIRED_MARKERS)}; "
                f"missing {', '.join(missing)}"
            )
        return text
