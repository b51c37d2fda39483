"""Dataset statistics: answer distributions per question type and per family, objects per scene.

Skewed answer distributions are what blind baselines exploit, so they are reported next to
the counts; objects per scene tells how crowded (and how hard to count) the scenes are.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from dataset.document import SPLITS, MeraDocument


def _sorted_counts(counter: Counter[Any]) -> dict[str, int]:
    """Most frequent first, ties alphabetical, keys as strings (JSON object keys)."""
    return {str(key): count for key, count in sorted(counter.items(), key=lambda kv: (-kv[1], str(kv[0])))}


def answer_distribution(items: Sequence[Mapping[str, Any]], group_of: Callable[[Mapping[str, Any]], str]) -> dict[str, dict[str, Any]]:
    """Per group: how many items and how often each answer occurs."""
    answers: dict[str, Counter[str]] = {}
    for item in items:
        answers.setdefault(group_of(item), Counter())[item["outputs"]] += 1
    return {
        group: {"items": sum(answers[group].values()), "answers": _sorted_counts(answers[group])}
        for group in sorted(answers)
    }


def objects_per_scene(document: MeraDocument, items: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Histogram of object counts over the distinct images the items use."""
    per_image: dict[str, int] = {}
    for item in items:
        record = document.provenance[item["meta"]["id"]]
        per_image[item["inputs"]["image"]] = int(record["num_objects"])
    counts = list(per_image.values())
    if not counts:
        return {"scenes": 0, "histogram": {}}
    histogram = {str(k): v for k, v in sorted(Counter(counts).items())}
    return {
        "scenes": len(counts),
        "min": min(counts),
        "max": max(counts),
        "mean": round(sum(counts) / len(counts), 3),
        "histogram": histogram,
    }


def compute_statistics(document: MeraDocument) -> dict[str, Any]:
    """Statistics per split and for the whole dataset."""
    statistics: dict[str, Any] = {"splits": {}}
    for split in SPLITS:
        items = document.items(split)
        statistics["splits"][split] = {
            "items": len(items),
            "question_types": answer_distribution(items, lambda item: item["meta"]["question_type"]),
            "families": answer_distribution(items, document.family_of),
            "objects_per_scene": objects_per_scene(document, items),
        }
    everything = [item for split in SPLITS for item in document.items(split)]
    statistics["all"] = {
        "items": len(everything),
        "question_types": answer_distribution(everything, lambda item: item["meta"]["question_type"]),
        "families": answer_distribution(everything, document.family_of),
        "objects_per_scene": objects_per_scene(document, everything),
    }
    return statistics


def _top_answers(answers: Mapping[str, int], total: int, limit: int = 3) -> str:
    return ", ".join(f"{answer} {count / total:.0%}" for answer, count in list(answers.items())[:limit])


def format_statistics(statistics: Mapping[str, Any]) -> str:
    """Plain-text tables for the terminal."""
    lines = [
        "items: " + ", ".join(f"{split} {statistics['splits'][split]['items']}" for split in SPLITS),
        "",
        f"{'question_type':<16}{'shots':>7}{'test':>7}{'share':>7}  top answers (test)",
    ]
    test = statistics["splits"]["test"]
    shots = statistics["splits"]["shots"]
    for name in statistics["all"]["question_types"]:
        in_test = test["question_types"].get(name, {"items": 0, "answers": {}})
        in_shots = shots["question_types"].get(name, {"items": 0})
        top = _top_answers(in_test["answers"], in_test["items"]) if in_test["items"] else "-"
        share = f"{in_test['items'] / test['items']:.1%}" if test["items"] else "-"  # the mix reached
        lines.append(f"{name:<16}{in_shots['items']:>7}{in_test['items']:>7}{share:>7}  {top}")
    lines += ["", f"{'family':<32}{'test':>7}  top answers (test)"]
    for name, family in test["families"].items():
        lines.append(f"{name:<32}{family['items']:>7}  {_top_answers(family['answers'], family['items'])}")
    scenes = statistics["all"]["objects_per_scene"]
    if scenes["scenes"]:
        histogram = ", ".join(f"{k}: {v}" for k, v in scenes["histogram"].items())
        lines += [
            "",
            f"objects per scene over {scenes['scenes']} images: min {scenes['min']}, mean {scenes['mean']}, "
            f"max {scenes['max']} ({histogram})",
        ]
    return "\n".join(lines)
