"""Shared by the annotation tests: a small export, a planned crowd, and the figures worked out by hand.

The hand computations here are written from the definitions (majority vote; Krippendorff's
coincidence matrix for nominal data), independently of ``dataset.annotate``, so a test compares
the command's figures with figures obtained another way.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sample_outputs import write_sample_stage_outputs

from dataset.mera.document import SPLITS, load_document
from dataset.mera.export import SAMPLES_DIR, ExportSettings, export_dataset, write_export
from ruclevr.io import read_json

WRONG = {"binary": "ДА", "count": "99", "colors": "серый", "materials": "резина", "shapes": "куб", "size": "большой"}


def small_export(folder: Path, n_scenes: int = 4, shots: int = 2) -> Path:
    paths = write_sample_stage_outputs(folder / "src", n_scenes=n_scenes)
    export_dataset(paths["questions"], paths["scenes"], folder / "mera",
                   ExportSettings(shots, 0))
    return folder / "mera"


def wrong_answer(item: Mapping[str, Any]) -> str:
    """An answer of the item's type that differs from gold."""
    answer = WRONG[item["meta"]["question_type"]]
    return answer if answer.lower() != item["outputs"] else {"да": "нет", "99": "98"}.get(answer.lower(), "зеленый")


def planned_answers(document: Mapping[str, Any]) -> dict[str, dict[int, str]]:
    """Three annotators' raw answers ``{annotator: {id: text}}`` with a known outcome.

    On test item k (in id order): ann1 always gives gold, spelled with odd case, spaces and a full
    stop; ann2 gives gold except on items 0 and 2; ann3 gives gold except on items 0, 1 and 3, and
    answers no control correctly. Item 0 is a three-way tie, item 2's and item 1's majorities are gold.
    """
    test = document["data"]["test"]
    shots = document["data"]["shots"]
    plan: dict[str, dict[int, str]] = {"ann1": {}, "ann2": {}, "ann3": {}}
    for k, item in enumerate(test):
        gold, wrong = item["outputs"], wrong_answer(item)
        plan["ann1"][item["meta"]["id"]] = f"  {gold.upper()}. "
        plan["ann2"][item["meta"]["id"]] = ("другое" if k == 0 else wrong) if k in (0, 2) else gold
        plan["ann3"][item["meta"]["id"]] = wrong if k in (0, 1, 3) else gold.replace("е", "ё")
    for item in shots:
        plan["ann1"][item["meta"]["id"]] = item["outputs"]
        plan["ann2"][item["meta"]["id"]] = item["outputs"]
        plan["ann3"][item["meta"]["id"]] = wrong_answer(item)
    return plan


def by_hand_normalise(text: str) -> str:
    return " ".join(text.lower().replace(".", "").split()).replace("ё", "е")


def hand_alpha(units: list[list[str]]) -> float:
    """Nominal Krippendorff's alpha from the coincidence matrix: 1 - (n - 1) * D_o / D_e."""
    observed: Counter[tuple[str, str]] = Counter()
    for values in units:
        if len(values) < 2:
            continue
        for i, a in enumerate(values):
            for j, b in enumerate(values):
                if i != j:
                    observed[a, b] += 1 / (len(values) - 1)
    totals: Counter[str] = Counter()
    for (a, _), weight in observed.items():
        totals[a] += weight
    n = sum(totals.values())
    disagreement = sum(weight for (a, b), weight in observed.items() if a != b)
    expected = sum(totals[a] * totals[b] for a in totals for b in totals if a != b)
    return 1 - (n - 1) * disagreement / expected


def hand_figures(document: Mapping[str, Any], plan: Mapping[str, Mapping[int, str]]) -> dict[str, Any]:
    """Human exact match (overall, per type), alpha and disputed ids, worked out from the plan."""
    test = document["data"]["test"]
    correct: Counter[str] = Counter()
    total: Counter[str] = Counter()
    disputed, units = [], []
    for item in test:
        answers = [by_hand_normalise(plan[name][item["meta"]["id"]]) for name in sorted(plan)
                   if item["meta"]["id"] in plan[name]]
        units.append(answers)
        counts = Counter(answers).most_common()
        winner = counts[0][0] if len(counts) == 1 or counts[0][1] > counts[1][1] else None
        kind = item["meta"]["question_type"]
        total[kind] += 1
        correct[kind] += winner == item["outputs"]
        if winner != item["outputs"]:
            disputed.append(item["meta"]["id"])
    return {
        "exact_match": sum(correct.values()) / sum(total.values()),
        "per_type": {kind: correct[kind] / total[kind] for kind in total},
        "alpha": hand_alpha(units),
        "disputed": disputed,
    }


def load(path: Path) -> dict[str, Any]:
    return read_json(path)


def read_dataset(export: Path) -> dict[str, Any]:
    """An export as one object ``{"info", "data": {"shots", "test"}, "provenance"}``, read as the commands read it."""
    document = load_document(export)
    return {"info": dict(document.info), "data": {split: document.items(split) for split in SPLITS},
            "provenance": list(document.provenance.values())}


def write_dataset(export: Path, document: dict[str, Any]) -> None:
    """Write ``document`` back into the export folder, in the exporter's own layout."""
    write_export(document, export / SAMPLES_DIR, export)
