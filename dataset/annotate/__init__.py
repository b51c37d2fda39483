"""People in the loop: annotation tasks out (``tasks``), crowd answers in (``answers``), human
baseline, agreement and disputed items (``agreement``, ``report``). See docs/annotation.md.

This module is the public face: other parts of ``dataset`` import only the names below
(docs/architecture.md, tests/test_package_layers.py)."""

from dataset.annotate.cli import add_annotate_parser, command_annotate

__all__ = ["add_annotate_parser", "command_annotate"]

