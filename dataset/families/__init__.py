"""``python -m dataset families validate [--realise N]``: family files checked by every stage that reads
them (``cli``), and with ``--realise`` said in every language and read back by the filter
(``realise_check``), a check that spans the stages and so lives above them.

This module is the public face: other parts of ``dataset`` import only the names below
(docs/architecture.md, tests/test_package_layers.py)."""

from __future__ import annotations

from dataset.families.cli import add_families_parser, command_families

__all__ = [
    "add_families_parser",
    "command_families",
]
