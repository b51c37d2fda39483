"""The filter's summary: how many items each family lost, and why."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from typing import Any

EXAMPLES_PER_REASON = 3
HISTOGRAM_BINS = 10


def reason_category(reason: str) -> str:
    """``"agreement: «большой» does not agree with «кубов»"`` -> ``"agreement"``."""
    return reason.split(":", 1)[0].strip()


class Summary:
    """Counts by family and reason category, added up one judged item (with ``acceptability``) at a time.

    A rejected item counts once per category it has, however many reasons of that category.
    Only counts and a few examples are kept, so memory does not grow with the run.
    """

    def __init__(self, is_kept: Callable[[Mapping[str, Any]], bool], bins: int = HISTOGRAM_BINS) -> None:
        self.is_kept = is_kept
        self.families: dict[str, dict[str, Any]] = defaultdict(lambda: {"total": 0, "kept": 0, "rejected": 0, "reasons": Counter()})
        self.reasons: Counter[str] = Counter()
        self.examples: dict[str, list[dict[str, str]]] = defaultdict(list)
        self.histogram = [0] * bins
        self.total = 0
        self.kept = 0

    def add(self, item: Mapping[str, Any]) -> None:
        acceptability = item["acceptability"]
        bins = len(self.histogram)
        self.histogram[min(int(acceptability["score"] * bins), bins - 1)] += 1
        family = self.families[str(item.get("family") or "(no family)")]
        family["total"] += 1
        self.total += 1
        if self.is_kept(acceptability):
            family["kept"] += 1
            self.kept += 1
            return
        family["rejected"] += 1
        for category in dict.fromkeys(map(reason_category, acceptability["reasons"])):
            family["reasons"][category] += 1
            self.reasons[category] += 1
            if len(self.examples[category]) < EXAMPLES_PER_REASON:
                detail = next(r for r in acceptability["reasons"] if reason_category(r) == category)
                self.examples[category].append({"question_ru": item.get("question_ru") or "", "reason": detail})

    def result(self) -> dict[str, Any]:
        bins = len(self.histogram)
        return {
            "counts": {"total": self.total, "kept": self.kept, "rejected": self.total - self.kept},
            "by_family": {name: {**f, "reasons": dict(sorted(f["reasons"].items()))} for name, f in sorted(self.families.items())},
            "by_reason": {
                category: {"rejected": count, "examples": self.examples[category]}
                for category, count in sorted(self.reasons.items(), key=lambda kv: (-kv[1], kv[0]))
            },
            "score_histogram": {"edges": [round(i / bins, 6) for i in range(bins + 1)], "counts": list(self.histogram)},
        }
