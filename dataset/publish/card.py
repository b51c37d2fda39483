"""The dataset card (``README.md`` of the Hugging Face copy), generated from the export's records.

Everything the card says about how the data was made is read from the ``info`` records the
stages wrote and from the items' provenance (families, translator, filter scores), never typed
by hand, so the card cannot drift from the data it describes.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from jinja2 import StrictUndefined
from jinja2.sandbox import SandboxedEnvironment

from dataset.mera import SPLITS
from dataset.publish.features import card_dataset_info, copy_features
from dataset.publish.markdown import markdown_text
from translate import answer_vocabulary, recorded_yo_policy

CARD_TEMPLATE_PATH = Path(__file__).parent / "templates" / "card.md.j2"
HUMAN_BASELINE_TEMPLATE_PATH = CARD_TEMPLATE_PATH.with_name("human_baseline.md.j2")
# Stage records are shown in full in the card, but a huge value (a list of every file) is cut.
MAX_RECORD_VALUE_CHARS = 160


def size_category(n_items: int) -> str:
    """Hugging Face's size_categories bucket for a number of items."""
    bounds = [(1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")]
    for bound, name in bounds:
        if n_items < bound:
            return name
    return "1M<n<10M"


def front_matter(dataset_info: Mapping[str, Any], license_id: str, n_items: int) -> str:
    """The YAML header (what the Hub and ``datasets.load_dataset`` read), written by
    ``huggingface_hub.DatasetCardData`` and ``datasets``' ``DatasetInfosDict``, with MERA's
    ``sequence`` spelling of list features.

    ``dataset_info`` holds ``splits`` (name, num_bytes, num_examples), ``download_size`` and
    ``dataset_size``; the features are MERA's.
    """
    from datasets import DatasetInfo, SplitInfo
    from datasets.info import DatasetInfosDict
    from datasets.splits import SplitDict
    from huggingface_hub import DatasetCardData

    splits = SplitDict()
    for split in dataset_info["splits"]:
        splits.add(SplitInfo(name=split["name"], num_bytes=split["num_bytes"], num_examples=split["num_examples"]))
    info = DatasetInfo(features=copy_features(), splits=splits, download_size=dataset_info["download_size"],
                       dataset_size=dataset_info["dataset_size"])
    card_data = DatasetCardData(
        license=license_id,
        task_categories=["visual-question-answering"],
        language=["ru"],
        pretty_name="ruCLEVR (generated with ruclevr)",
        size_categories=[size_category(n_items)],
        tags=["synthetic", "clevr", "mera", "blender"],
        annotations_creators=["machine-generated"],  # every answer is a program's, run on the scene graph
        language_creators=["machine-generated"],  # questions realised from templates (or machine-translated)
        multilinguality=["monolingual"],
        source_datasets=["original"],  # rendered and asked anew; CLEVR's design, none of its data
        task_ids=["visual-question-answering"],
        configs=[{"config_name": "default",
                  "data_files": [{"split": split, "path": f"data/{split}-*"} for split in SPLITS]}],
    )
    DatasetInfosDict({"default": info}).to_dataset_card_data(card_data)
    card_data.dataset_info = card_dataset_info(card_data.dataset_info)  # type: ignore[attr-defined]  # set just above
    return card_data.to_yaml() + "\n"


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


class CardFacts:
    """What the card tells of the items besides their statistics, added one item at a time: the
    export's ``info``, how many items, the first item of each split (the card's example), and how
    many items share each translator and filter setting (counters bounded by those settings)."""

    def __init__(self, info: Mapping[str, Any]) -> None:
        self.info = info
        self.items = 0
        self.first_items: dict[str, Mapping[str, Any]] = {}
        self.translators: Counter[str] = Counter()
        self.filters: Counter[str] = Counter()
        self.copy: Mapping[str, Any] | None = None  # public (watermarked) or private (clean): dataset.publish.watermark

    def add(self, split: str, item: Mapping[str, Any], record: Mapping[str, Any]) -> None:
        self.items += 1
        self.first_items.setdefault(split, item)
        if record:  # items without provenance (MERA's own files) are not counted
            self.translators[str(record.get("translator") or "not recorded")] += 1
            self.filters[describe_acceptability(record.get("acceptability"))] += 1

    def example(self) -> Mapping[str, Any]:
        return self.first_items["test" if "test" in self.first_items else "shots"]


def provenance_summary(counts: Counter[str]) -> list[tuple[str, int]]:
    """How many items share each value of a provenance field (translator, filter settings...), most first."""
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def prompt_files(record: Mapping[str, Any]) -> list[str]:
    """The template files an export's instructions came from (one ``file`` in exports before prompt sets)."""
    if "templates" in record:
        return [str(template.get("file", "?")) for template in record["templates"]]
    return [str(record["file"])] if "file" in record else []


def reasoning_prompts(record: Mapping[str, Any]) -> int:
    """How many of the export's templates ask for «РАССУЖДЕНИЕ» before «ОТВЕТ» (MERA's reasoning prompts)."""
    return sum("РАССУЖДЕНИЕ" in str(template.get("source", "")) and "ОТВЕТ" in str(template.get("source", ""))
               for template in record.get("templates", []))


def describe_acceptability(acceptability: Any) -> str:
    if not isinstance(acceptability, Mapping):
        return "not recorded"
    return f"{acceptability.get('backend', '?')}, threshold {acceptability.get('threshold', '?')}"


#: What the card reads from the export's record (``provenance.json``'s ``info``), as dotted paths.
CARD_RECORD_FIELDS = (
    "seed", "settings.shots", "settings.prompt.sha256", "counts.input_questions", "counts.test",
    "counts.dropped_duplicates", "counts.dropped_sharing_shot_image", "counts.dropped_sharing_shot_question",
)


def missing_card_fields(info: Mapping[str, Any]) -> list[str]:
    """The fields of :data:`CARD_RECORD_FIELDS` that ``info`` lacks (the card says how the data was made)."""
    missing = []
    for field in CARD_RECORD_FIELDS:
        value: Any = info
        for part in field.split("."):
            value = value.get(part) if isinstance(value, Mapping) else None
        if value is None:
            missing.append(field)
    return missing


def card_context(
    facts: CardFacts,
    dataset_info: Mapping[str, Any],
    statistics: Mapping[str, Any],
    baselines: Mapping[str, Any],
    license_id: str,
    plots: Sequence[tuple[str, str]] = (),
    contact: str | None = None,
) -> dict[str, Any]:
    """What the card shows; ``contact`` (one line, shown as text) names who maintains this copy."""
    info = facts.info
    n_items = facts.items
    sources = info.get("sources", {})
    return {
        "yaml_header": front_matter(dataset_info, license_id, n_items),
        "version": info.get("version", "unknown"),
        "seed": info.get("seed"),
        "settings": info.get("settings", {}),
        "prompt_files": prompt_files(info.get("settings", {}).get("prompt", {})),
        "reasoning_prompts": reasoning_prompts(info.get("settings", {}).get("prompt", {})),
        "counts": info.get("counts", {}),
        "splits": {split["name"]: split for split in dataset_info["splits"]},
        "n_items": n_items,
        "n_images": statistics["all"]["objects_per_scene"]["scenes"],
        "example": json.dumps(facts.example(), ensure_ascii=False, indent=2),
        "statistics": statistics,
        "baselines": baselines,
        "translators": provenance_summary(facts.translators),
        "filters": provenance_summary(facts.filters),
        "families": statistics["all"]["families"],
        "family_groups": family_groups(statistics["all"]["families"]),
        "condition": sources.get("scenes", {}).get("info", {}).get("scene_options", {}).get("condition"),
        "mix": find_mix(sources),
        "records": {name: list(flatten_record(source.get("info", {}))) for name, source in sources.items()},
        "record_files": {name: source.get("file", "") for name, source in sources.items()},
        "license": license_id,
        "plots": list(plots),
        "human_review": human_review_section(info),
        "answer_vocabulary": answer_vocabulary(recorded_yo_policy(sources)),
        "loading_example": loading_example(facts.first_items.get("test")),
        "dataset_bibtex": dataset_bibtex(info, dataset_info, n_items, statistics["all"]["objects_per_scene"]["scenes"]),
        "limitations": limitations(statistics, sources),
        "copy": facts.copy,
        "contact": markdown_text(contact) if contact else None,
    }


def loading_example(item: Mapping[str, Any] | None) -> dict[str, str] | None:
    """``test[0]``'s image path, question and answer as Python string literals, for the loading snippet."""
    if item is None:
        return None
    return {"image": string_literal(item["inputs"]["image"]), "question": string_literal(item["inputs"]["question"]),
            "outputs": string_literal(item["outputs"])}


def string_literal(value: str) -> str:
    """``value`` as a Python string literal (a JSON string is one), non-ASCII letters kept."""
    return json.dumps(value, ensure_ascii=False)


def dataset_bibtex(info: Mapping[str, Any], dataset_info: Mapping[str, Any], n_items: int, n_images: int) -> str:
    """A BibTeX entry for the generated dataset itself (no date: the same build gives the same card)."""
    version = info.get("version", "unknown")
    splits = {split["name"]: split["num_examples"] for split in dataset_info["splits"]}
    seed = info.get("seed")
    origin = f"secret seed, commitment {seed[:48]}..." if isinstance(seed, str) else f"seed {seed}"
    key = f"ruclevr_generated_{str(info.get('settings', {}).get('prompt', {}).get('sha256', 'x'))[:8]}_{n_items}"
    return "\n".join([
        f"@misc{{{key},",
        f"  title        = {{{{ruCLEVR}} generated with ruclevr {version}: synthetic {{R}}ussian visual question "
        "answering in {MERA}'s ruCLEVR format},",
        f"  note         = {{{n_items} items ({splits.get('shots', 0)} shots, {splits.get('test', 0)} test) on "
        f"{n_images} rendered images; {origin}}},",
        "  howpublished = {Hugging Face dataset (the card of this copy)},",
        f"  version      = {{{version}}}",
        "}",
    ])


def limitations(statistics: Mapping[str, Any], sources: Mapping[str, Any]) -> dict[str, Any]:
    """What the card's Limitations section names: MERA's rules the build does not meet, and whether
    the render kept only scenes whose every attribute the legibility reader reads as recorded."""
    scenes = sources.get("scenes", {}).get("info", {}) if isinstance(sources.get("scenes"), Mapping) else {}
    return {"unmet_rules": [rule for rule in statistics.get("mera_rules") or [] if not rule.get("met")],
            "legible_only": bool(scenes.get("legible_only")), "legibility_reader": scenes.get("legibility_reader")}


def family_groups(families: Mapping[str, Any]) -> dict[str, int]:
    """How many of the families in the data there are per group (the first part of a family id)."""
    groups: dict[str, int] = {}
    for family_id in families:
        group = family_id.split("/")[0]
        groups[group] = groups.get(group, 0) + 1
    return dict(sorted(groups.items()))


def find_mix(sources: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The ``--mix`` the questions were drawn with, from the first stage record that has one."""
    for source in sources.values():
        found = _mix_in(source.get("info", {}))
        if found is not None:
            return found
    return None


def _mix_in(record: Any) -> Mapping[str, Any] | None:
    if not isinstance(record, Mapping):
        return None
    if isinstance(record.get("mix"), Mapping) and "shares" in record["mix"]:
        return record["mix"]
    for value in record.values():
        found = _mix_in(value)
        if found is not None:
            return found
    return None


def human_review_section(info: Mapping[str, Any]) -> str:
    """The "Human baseline" section when people reviewed the data (``dataset annotate import``), else ""."""
    if not isinstance(info.get("human_review"), Mapping):
        return ""
    return render_card_section(info["human_review"])


def method_label(aggregate: str) -> str:
    """What a report calls the answers of ``annotate import --aggregate``: ``plurality`` for the majority
    (the default), else the method's name."""
    return "plurality" if aggregate == "majority" else aggregate


def review_figures(summary: Mapping[str, Any]) -> dict[str, Any]:
    """``summary`` with its baselines under the names ``annotate import`` writes now: ``human_baseline`` by
    MERA's rule (None in reports older than it) and ``aggregated_baseline``, the plurality or ``--aggregate``
    answer's figure over the answered items, with its ``method``. Earlier reports called that figure
    ``human_baseline`` and MERA's ``human_baseline_mera``; their filtered exports still give their section."""
    if "aggregated_baseline" in summary:
        return dict(summary)
    beside = dict(summary["human_baseline"], method=method_label((summary.get("settings") or {}).get("aggregate") or "majority"))
    return dict(summary, human_baseline=summary.get("human_baseline_mera"), aggregated_baseline=beside)


def render_card_section(summary: Mapping[str, Any]) -> str:
    """The "Human baseline" section of the dataset card (Markdown), from ``dataset annotate import``'s summary
    (any report format, :func:`review_figures`)."""
    environment = SandboxedEnvironment(undefined=StrictUndefined, autoescape=False, trim_blocks=True, lstrip_blocks=True,
                                       keep_trailing_newline=True)
    environment.finalize = markdown_text  # every value from the answers is shown as text, never markup
    template = environment.from_string(HUMAN_BASELINE_TEMPLATE_PATH.read_text(encoding="utf-8"))
    return template.render(review=review_figures(summary))


def render_card(context: Mapping[str, Any]) -> str:
    """The card, from :func:`card_context`'s facts."""
    environment = SandboxedEnvironment(undefined=StrictUndefined, autoescape=False, keep_trailing_newline=True)
    template = environment.from_string(CARD_TEMPLATE_PATH.read_text(encoding="utf-8"))
    return template.render(context)
