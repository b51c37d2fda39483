"""Releases: secret seeds and their records (``dataset seed``), a fresh set built like an earlier one
(``--like``), and the leak check of a new test split against the published images.

This module is the public face: other parts of ``dataset`` import only the names below
(docs/architecture.md, tests/test_package_layers.py)."""

from __future__ import annotations

from dataset.releases.leak_check import add_leak_check_parser, command_leak_check
from dataset.releases.like import LikeSelection, add_like_options, like_build_options, like_target, report_closeness
from dataset.releases.seeds import add_seed_parser, check_no_seed_in, command_seed

__all__ = [
    "add_leak_check_parser",
    "add_like_options",
    "add_seed_parser",
    "check_no_seed_in",
    "command_leak_check",
    "command_seed",
    "like_build_options",
    "like_target",
    "LikeSelection",
    "report_closeness",
]
