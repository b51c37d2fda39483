"""Acceptability filter: scores Russian questions (RuCoLA classifier, morphological checker or none),
keeps the acceptable ones and explains every rejection. Run it as ``python -m filter``.

This module is the public face: other packages (``dataset``) import only the names below, never
a module of ``filter`` (docs/architecture.md, tests/test_package_layers.py).
"""

from filter.backends import BACKENDS, make_scorer
from filter.base import Scorer
from filter.morph import MorphChecker
from filter.pipeline import FilterJob, OutputPaths, run_filter
from filter.rucola import RucolaOptions, is_local_model, model_token_limit

__all__ = [
    "BACKENDS",
    "FilterJob",
    "is_local_model",
    "make_scorer",
    "model_token_limit",
    "MorphChecker",
    "OutputPaths",
    "RucolaOptions",
    "run_filter",
    "Scorer",
]
