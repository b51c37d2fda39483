"""Russian questions and answers: the native realiser (family templates said by rule), MT backends,
answer words and the ё spelling policy. Run it as ``python -m translate``.

This module is the public face: other packages (``dataset``) import only the names below, never
a module of ``translate`` (docs/architecture.md, tests/test_package_layers.py).
"""

from translate.answers import answer_to_russian, answer_vocabulary, recorded_yo_policy, russian_answer_words
from translate.base import BACKENDS
from translate.native import NativeRealiser, RealisationError
from translate.records import realised_record
from translate.spelling import DEFAULT_YO_POLICY, YO_POLICIES, apply_yo_policy
from translate.templates import validate_template

__all__ = [
    "answer_to_russian",
    "answer_vocabulary",
    "apply_yo_policy",
    "BACKENDS",
    "DEFAULT_YO_POLICY",
    "NativeRealiser",
    "RealisationError",
    "realised_record",
    "recorded_yo_policy",
    "russian_answer_words",
    "validate_template",
    "YO_POLICIES",
]
