"""Publishing: the Hugging Face copy (parquet, features) and its card, the card's plots, the gallery page,
the watermarked public copy, Markdown escaping, and the MERA submission zip of a model's answers.

This module is the public face: other parts of ``dataset`` import only the names below
(docs/architecture.md, tests/test_package_layers.py)."""

from __future__ import annotations

from dataset.publish.card import method_label, render_card_section
from dataset.publish.gallery import GallerySettings, url_from, write_gallery
from dataset.publish.hf import (
    CARD_NAME,
    check_contact,
    check_hf_inputs,
    check_license,
    survey_statistics,
    write_hf_copy,
)
from dataset.publish.plots import CARD_PLOTS_DIR, PLOT_FILES, write_card_plots
from dataset.publish.submission import add_submission_parser, command_submission
from dataset.publish.watermark import (
    MARK_FILE,
    add_watermark_options,
    hf_copies,
    watermark_from_args,
    write_public_export,
)

__all__ = [
    "add_submission_parser",
    "add_watermark_options",
    "CARD_NAME",
    "CARD_PLOTS_DIR",
    "check_contact",
    "check_hf_inputs",
    "check_license",
    "command_submission",
    "GallerySettings",
    "hf_copies",
    "MARK_FILE",
    "method_label",
    "PLOT_FILES",
    "render_card_section",
    "survey_statistics",
    "url_from",
    "watermark_from_args",
    "write_card_plots",
    "write_gallery",
    "write_hf_copy",
    "write_public_export",
]
