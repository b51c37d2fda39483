"""MERA export: the task's document (``dataset.mera.document`` reads it, ``export`` writes it from the
question stages), its splits and groups, instruction prompts (``prompts/``, the block scheme, the
Jinja sandbox), the exact-match rules, the statistics MERA's rules are checked on, and the question
stages' file names inside a build or augmentation folder (``layout``), which export reads.

This module is the public face: other parts of ``dataset`` import only the names below
(docs/architecture.md, tests/test_package_layers.py)."""

from __future__ import annotations

from dataset.mera.document import (
    PROVENANCE_NAME,
    SPLITS,
    Document,
    MeraDocument,
    RecentlySeen,
    StreamedDocument,
    check_image_file,
    family_in,
    load_document,
    locate_document,
    split_path,
    stream_document,
)
from dataset.mera.em_rules import HEADLINE, OTHER_RULES, RULE_LABELS, normalise_answer, task_exact_match
from dataset.mera.export import (
    SAMPLES_DIR,
    ExportSettings,
    check_prompts,
    export_dataset,
    place_image,
    read_stage_file,
    remove_unused_samples,
    write_export,
)
from dataset.mera.groups import GroupScoring, format_group_results
from dataset.mera.layout import QuestionStageFiles
from dataset.mera.prompt import PromptSet
from dataset.mera.prompt_sandbox import format_instruction
from dataset.mera.splits import SplitPositions
from dataset.mera.stats import (
    StatisticsTally,
    compute_statistics,
    format_quality,
    format_statistics,
    mera_rules,
    smallest_image_sides,
    unmet_rules,
)

__all__ = [
    "check_image_file",
    "check_prompts",
    "compute_statistics",
    "Document",
    "export_dataset",
    "ExportSettings",
    "family_in",
    "format_group_results",
    "format_instruction",
    "format_quality",
    "format_statistics",
    "GroupScoring",
    "HEADLINE",
    "load_document",
    "locate_document",
    "mera_rules",
    "MeraDocument",
    "normalise_answer",
    "OTHER_RULES",
    "place_image",
    "PromptSet",
    "PROVENANCE_NAME",
    "QuestionStageFiles",
    "read_stage_file",
    "RecentlySeen",
    "remove_unused_samples",
    "RULE_LABELS",
    "SAMPLES_DIR",
    "smallest_image_sides",
    "split_path",
    "SplitPositions",
    "SPLITS",
    "StatisticsTally",
    "stream_document",
    "StreamedDocument",
    "task_exact_match",
    "unmet_rules",
    "write_export",
]
