"""The dataset card (``README.md`` of the Hugging Face copy), generated from the export's records.

Everything the card says about how the data was made is read from the ``info`` records the
stages wrote and from the items' provenance (families, translator, filter scores), never typed
by hand, so the card cannot drift from the data it describes.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import yaml
from jinja2 import StrictUndefined
from jinja2.sandbox import SandboxedEnvironment

from assets.vocabulary import load_vocabulary
from dataset.document import SPLITS, MeraDocument
from translate.answers import russian_answer_words

CARD_TEMPLATE_PATH = Path(__file__).parent / "templates" / "card.md.j2"
# Stage records are shown in full in the card, but a huge value (a list of every file) is cut.
MAX_RECORD_VALUE_CHARS = 160


def size_category(n_items: int) -> str:
    """Hugging Face's size_categories bucket for a number of items."""
    bounds = [(1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")]
    for bound, name in bounds:
        if n_items < bound:
            return name
    return "1M<n<10M"


def front_matter(dataset_info: Mapping[str, Any], license_id: str, n_items: int) -> dict[str, Any]:
    """The YAML header: what the Hub and ``datasets.load_dataset`` read."""
    return {
        "dataset_info": dict(dataset_info),
        "configs": [
            {
                "config_name": "default",
                "data_files": [{"split": split, "path": f"data/{split}-*"} for split in SPLITS],
            }
        ],
        "license": license_id,
        "task_categories": ["visual-question-answering"],
        "language": ["ru"],
        "pretty_name": "ruCLEVR (generated with ruclevr)",
        "size_categories": [size_category(n_items)],
        "tags": ["synthetic", "clevr", "mera", "blender"],
    }


def flatten_record(record: Any, prefix: str = "") -> Iterator[tuple[str, str]]:
    """Scalar leaves of a nested record as ``("a.b.c", "value")`` lines, in record order."""
    if isinstance(record, Mapping):
        for key, value in record.items():
            yield from flatten_record(value, f"{prefix}.{key}" if prefix else str(key))
    else:
        text = json.dumps(record, ensure_ascii=False) if not isinstance(record, str) else record
        if len(text) > MAX_RECORD_VALUE_CHARS:
            text = text[: MAX_RECORD_VALUE_CHARS - 1] + "…"
        yield prefix, text.replace("\n", "\\n")


def provenance_summary(document: MeraDocument, field: str, describe: Any) -> list[tuple[str, int]]:
    """How many items share each value of a provenance field (translator, filter settings...)."""
    counts = Counter(describe(record.get(field)) for record in document.provenance.values())
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def describe_acceptability(acceptability: Any) -> str:
    if not isinstance(acceptability, Mapping):
        return "not recorded"
    return f"{acceptability.get('backend', '?')}, threshold {acceptability.get('threshold', '?')}"


def card_context(
    document: MeraDocument,
    dataset_info: Mapping[str, Any],
    statistics: Mapping[str, Any],
    baselines: Mapping[str, Any],
    license_id: str,
    plots: Sequence[tuple[str, str]] = (),
) -> dict[str, Any]:
    info = document.info
    n_items = sum(len(document.items(split)) for split in SPLITS)
    example_split = "test" if document.items("test") else "shots"
    sources = info.get("sources", {})
    return {
        "yaml_header": yaml.safe_dump(front_matter(dataset_info, license_id, n_items), allow_unicode=True, sort_keys=False),
        "version": info.get("version", "unknown"),
        "seed": info.get("seed"),
        "settings": info.get("settings", {}),
        "counts": info.get("counts", {}),
        "splits": {split["name"]: split for split in dataset_info["splits"]},
        "n_items": n_items,
        "n_images": statistics["all"]["objects_per_scene"]["scenes"],
        "example": json.dumps(document.items(example_split)[0], ensure_ascii=False, indent=2),
        "statistics": statistics,
        "baselines": baselines,
        "translators": provenance_summary(document, "translator", lambda value: str(value or "not recorded")),
        "filters": provenance_summary(document, "acceptability", describe_acceptability),
        "families": statistics["all"]["families"],
        "records": {name: list(flatten_record(source.get("info", {}))) for name, source in sources.items()},
        "record_files": {name: source.get("file", "") for name, source in sources.items()},
        "license": license_id,
        "plots": list(plots),
        "answer_vocabulary": answer_vocabulary(),
    }


def answer_vocabulary() -> dict[str, dict[str, list[str]]]:
    """Per MERA question type, its gold answer words and the other words for the same values."""
    vocabulary = load_vocabulary()
    table = {
        "binary": {"gold": [answer["ru"] for answer in vocabulary.answers.values()], "others": []},
        "count": {"gold": ["0", "1", "2", "…"], "others": []},
    }
    for question_type, entries in sorted(russian_answer_words().items()):
        table[question_type] = {
            "gold": sorted(entries),
            "others": sorted({f"{word} ({answer})" for answer, words in entries.items() for word in words}),
        }
    return table


def render_card(
    document: MeraDocument,
    dataset_info: Mapping[str, Any],
    statistics: Mapping[str, Any],
    baselines: Mapping[str, Any],
    license_id: str,
    plots: Sequence[tuple[str, str]] = (),
) -> str:
    environment = SandboxedEnvironment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True)
    template = environment.from_string(CARD_TEMPLATE_PATH.read_text(encoding="utf-8"))
    return template.render(card_context(document, dataset_info, statistics, baselines, license_id, plots))
