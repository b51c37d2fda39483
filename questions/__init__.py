"""The question engine: family files (data) instantiated on scene graphs by executing programs.

Entry points for other stages:

- :func:`questions.executor.execute_program` answers a CLEVR-form program on a scene graph;
- :func:`questions.families.load_families` returns the validated families by id;
- ``python -m questions`` writes ``questions.json``; ``python -m questions validate`` checks family files.

This module is the public face: other packages (``translate``, ``dataset``) import only the names
below, never a module of ``questions`` (docs/architecture.md, tests/test_package_layers.py).
"""

from questions.cli import check_scenes, given_family_files
from questions.executor import execute_program
from questions.families import FAMILIES_DIR, Sources, as_sources, families_digest, load_families
from questions.family import Family, question_type_of
from questions.family_sources import FamilySources, add_family_arguments, recorded_sources, sources_from_arguments
from questions.functions import ExecutionError, MalformedProgram
from questions.hypothetical import plainly_said_kinds
from questions.occlusion import records_occlusion, uses_occlusion
from questions.plan import Plan, expand_program
from questions.random_stream import RandomStream
from questions.readings import NO_TEMPLATE, UNSAFE_FIELD, Structure, admitted, said_apart, structure_of, unsafe_readings
from questions.scene_index import SceneIndex
from questions.scene_questions import QuestionMaker, RunState, Settings, readable_english
from questions.search import SceneSearch
from questions.text import english_readings, without_other
from questions.validator import FamilyError, TemplateCheck, located_data, validate_files

__all__ = [
    "add_family_arguments",
    "admitted",
    "as_sources",
    "check_scenes",
    "english_readings",
    "execute_program",
    "ExecutionError",
    "expand_program",
    "families_digest",
    "FAMILIES_DIR",
    "Family",
    "FamilyError",
    "FamilySources",
    "given_family_files",
    "load_families",
    "located_data",
    "MalformedProgram",
    "NO_TEMPLATE",
    "plainly_said_kinds",
    "Plan",
    "question_type_of",
    "QuestionMaker",
    "RandomStream",
    "readable_english",
    "recorded_sources",
    "records_occlusion",
    "RunState",
    "said_apart",
    "SceneIndex",
    "SceneSearch",
    "Settings",
    "Sources",
    "sources_from_arguments",
    "Structure",
    "structure_of",
    "TemplateCheck",
    "UNSAFE_FIELD",
    "unsafe_readings",
    "uses_occlusion",
    "validate_files",
    "without_other",
]
