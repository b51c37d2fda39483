"""The filter's summary: how many items each family lost, and why."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any, Callable, Mapping, Sequence

EXAMPLES_PER_REASON = 3
HISTOGRAM_BINS = 10


def reason_category(reason: str) -> str:
    """``"agreement: «большой» does not agree with «кубов»"`` -> ``"agreement"``."""
    return reason.split(":", 1)[0].strip()


def summarise(judged: Sequence[Mapping[str, Any]], is_kept: Callable[[Mapping[str, Any]], bool]) -> dict[str, Any]:
    """Counts by family and reason category over items that carry ``acceptability``.

    A rejected item counts once per category it has, however many reasons of that category.
    """
    families: dict[str, dict[str, Any]] = defaultdict(lambda: {"total": 0, "kept": 0, "rejected": 0, "reasons": Counter()})
    reasons: Counter[str] = Counter()
    examples: dict[str, list[dict[str, str]]] = defaultdict(list)
    for item in judged:
        acceptability = item["acceptability"]
        family = families[str(item.get("family") or "(no family)")]
        family["total"] += 1
        if is_kept(acceptability):
            family["kept"] += 1
            continue
        family["rejected"] += 1
        for category in dict.fromkeys(map(reason_category, acceptability["reasons"])):
            family["reasons"][category] += 1
            reasons[category] += 1
            if len(examples[category]) < EXAMPLES_PER_REASON:
                detail = next(r for r in acceptability["reasons"] if reason_category(r) == category)
                examples[category].append({"question_ru": item.get("question_ru") or "", "reason": detail})
    return {
        "counts": {
            "total": len(judged),
            "kept": sum(f["kept"] for f in families.values()),
            "rejected": sum(f["rejected"] for f in families.values()),
        },
        "by_family": {name: {**f, "reasons": dict(sorted(f["reasons"].items()))} for name, f in sorted(families.items())},
        "by_reason": {
            category: {"rejected": count, "examples": examples[category]}
            for category, count in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))
        },
        "score_histogram": score_histogram([item["acceptability"]["score"] for item in judged]),
    }


def score_histogram(scores: Sequence[float], bins: int = HISTOGRAM_BINS) -> dict[str, list[float] | list[int]]:
    """Counts of scores in equal bins over [0, 1] (1.0 falls in the last), to help pick a threshold."""
    counts = [0] * bins
    for score in scores:
        counts[min(int(score * bins), bins - 1)] += 1
    return {"edges": [round(i / bins, 6) for i in range(bins + 1)], "counts": counts}
