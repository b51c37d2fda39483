"""Dataset statistics: answer distributions per question type and per family, objects per scene.

Skewed answer distributions are what blind baselines exploit, so they are reported next to
the counts; objects per scene tells how crowded (and how hard to count) the scenes are.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from dataset.mera.document import SPLITS, MeraDocument, StreamedDocument, family_in


def _sorted_counts(counter: Counter[Any]) -> dict[str, int]:
    """Most frequent first, ties alphabetical, keys as strings (JSON object keys)."""
    return {str(key): count for key, count in sorted(counter.items(), key=lambda kv: (-kv[1], str(kv[0])))}


class _Tally:
    """What the statistics of a set of items need, added one item at a time: answers per question type
    and per family, and the object count of each image (memory grows with the groups and images, not the items: a
    dict entry of about 150 bytes per distinct image, some 15 MB at CLEVR's 100,000 images)."""

    def __init__(self) -> None:
        self.items = 0
        self.question_types: dict[str, Counter[str]] = {}
        self.families: dict[str, Counter[str]] = {}
        self.objects_per_image: dict[str, int] = {}
        self.instructions: dict[str, set[str]] = {}  # distinct instruction texts per question type (a few dozen)
        self.degenerate = DegenerateTally()

    def add(self, item: Mapping[str, Any], record: Mapping[str, Any]) -> None:
        self.items += 1
        self.question_types.setdefault(item["meta"]["question_type"], Counter())[item["outputs"]] += 1
        self.families.setdefault(family_in(record), Counter())[item["outputs"]] += 1
        self.instructions.setdefault(item["meta"]["question_type"], set()).add(item.get("instruction", ""))
        if "num_objects" in record:
            self.objects_per_image[item["inputs"]["image"]] = int(record["num_objects"])
        self.degenerate.add(item["meta"]["question_type"], str(item["outputs"]), record.get("comparison"), record.get("counts"))

    def as_dict(self) -> dict[str, Any]:
        return {
            "items": self.items,
            "question_types": answer_distribution(self.question_types),
            "families": answer_distribution(self.families),
            "objects_per_scene": objects_per_scene(list(self.objects_per_image.values())),
            "instructions_per_question_type": {name: len(self.instructions[name]) for name in sorted(self.instructions)},
            "degenerate": self.degenerate.as_dict(),
            "majority_baselines": majority_baselines(self.question_types, self.families),
        }


def majority_baselines(question_types: Mapping[str, Counter[str]], families: Mapping[str, Counter[str]]) -> dict[str, Any]:
    """The accuracy of answering each question with the most common answer of its type, or of its
    family, on these items: what a model that reads nothing (or only which template it got) scores."""
    def majority(groups: Mapping[str, Counter[str]]) -> float | None:
        total = sum(sum(counts.values()) for counts in groups.values())
        return round(sum(max(counts.values()) for counts in groups.values() if counts) / total, 4) if total else None

    return {
        "per_type": {name: majority({name: counts}) for name, counts in sorted(question_types.items())},
        "type_majority": majority(question_types),
        "family_majority": majority(families),
    }


def answer_distribution(answers: Mapping[str, Counter[str]]) -> dict[str, dict[str, Any]]:
    """Per group: how many items and how often each answer occurs."""
    return {
        group: {"items": sum(answers[group].values()), "answers": _sorted_counts(answers[group])}
        for group in sorted(answers)
    }


def objects_per_scene(counts: Sequence[int]) -> dict[str, Any]:
    """Histogram of object counts over the distinct images the items use."""
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


class StatisticsTally:
    """The statistics per split and for the whole dataset, added one (split, item, record) at a time."""

    def __init__(self) -> None:
        self.splits = {split: _Tally() for split in SPLITS}
        self.everything = _Tally()

    def add(self, split: str, item: Mapping[str, Any], record: Mapping[str, Any]) -> None:
        self.splits[split].add(item, record)
        self.everything.add(item, record)

    def as_dict(self) -> dict[str, Any]:
        return {"splits": {split: tally.as_dict() for split, tally in self.splits.items()}, "all": self.everything.as_dict()}


def compute_statistics(document: MeraDocument | StreamedDocument) -> dict[str, Any]:
    """Statistics per split and for the whole dataset, in one pass over the items, and the MERA rules
    (with the smallest image, read from the images' headers)."""
    tally = StatisticsTally()
    for split in SPLITS:
        for item, record in document.records(split):
            tally.add(split, item, record)
    statistics = tally.as_dict()
    statistics["mera_rules"] = mera_rules(statistics, smallest_image_sides(document))
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
    instructions = test.get("instructions_per_question_type", {})
    if instructions:
        lines += ["", "distinct instructions per question type (test): "
                  + ", ".join(f"{name} {count}" for name, count in instructions.items())]
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


#: The integer comparisons: their records' ``counts`` hold the two compared counts.
INTEGER_COMPARISONS = ("equal_integer", "less_than", "greater_than")


def integer_comparison(question: Mapping[str, Any]) -> str | None:
    """The question's last function where it compares two counts, else None."""
    program = question.get("program") or [{}]
    last = program[-1].get("function")
    return last if last in INTEGER_COMPARISONS else None


class DegenerateTally:
    """How often integer comparisons have a count of 0 on a side (and 0 on both), how many of their
    "yes, equal" answers are 0 = 0, and how many count answers are 0: questions that test whether
    something exists rather than counting. Records carry ``counts`` (the program's count nodes,
    from the questions stage) and ``comparison`` (the last function where it compares two counts)."""

    def __init__(self) -> None:
        self.comparisons = self.zero_side = self.both_zero = self.equal_yes = self.equal_yes_zero = 0
        self.count_answers = self.zero_counts = 0

    def add(self, question_type: str, answer: str, comparison: str | None, counts: Sequence[int] | None) -> None:
        if question_type == "count":
            self.count_answers += 1
            self.zero_counts += answer == "0"
        if comparison not in INTEGER_COMPARISONS or not counts or len(counts) != 2:
            return
        self.comparisons += 1
        self.zero_side += 0 in counts
        self.both_zero += counts[0] == counts[1] == 0
        if comparison == "equal_integer" and counts[0] == counts[1]:
            self.equal_yes += 1
            self.equal_yes_zero += counts[0] == 0

    def as_dict(self) -> dict[str, Any]:
        def share(part: int, whole: int) -> float | None:
            return round(part / whole, 4) if whole else None

        return {
            "integer_comparisons": self.comparisons,
            "zero_side": share(self.zero_side, self.comparisons),
            "zero_vs_zero": share(self.both_zero, self.comparisons),
            "equal_yes": self.equal_yes,
            "equal_yes_zero": share(self.equal_yes_zero, self.equal_yes),
            "count_answers": self.count_answers,
            "zero_count_answers": share(self.zero_counts, self.count_answers),
        }


def degenerate_shares(questions: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """:class:`DegenerateTally` of question records (``questions.json``'s, with their programs)."""
    tally = DegenerateTally()
    for question in questions:
        tally.add(question["question_type"], str(question["answer"]), integer_comparison(question), question.get("counts"))
    return tally.as_dict()


#: MERA's rules for a task (MERA Multi paper and repository): at least this many items ...
MERA_MIN_ITEMS = 300
#: ... 100 to 1,000 test items per question type ...
MERA_ITEMS_PER_TYPE = (100, 1000)
#: ... balanced answers: the most common answer of a type at most this share of its items (the
#: question engine's own caps, docs/questions.md "Balance") ...
MERA_TOP_ANSWER = {"binary": 0.6, "materials": 0.6, "size": 0.6, "shapes": 0.45, "colors": 0.25, "count": 0.35}
#: ... and images at least this many pixels on each side.
MERA_MIN_SIDE = 224


def mera_rules(statistics: Mapping[str, Any], image_sides: tuple[int, int] | None) -> list[dict[str, Any]]:
    """Each MERA rule with whether these statistics meet it and why: ``rule``, ``met``, ``detail``.
    ``image_sides``: the smallest width and height of the items' images (None: not measured)."""
    test = statistics["splits"]["test"]
    items = statistics["all"]["items"]
    rules = [{"rule": f"items >= {MERA_MIN_ITEMS}", "met": items >= MERA_MIN_ITEMS, "detail": f"{items} items"}]
    low, high = MERA_ITEMS_PER_TYPE
    for name in sorted(MERA_TOP_ANSWER):
        group = test["question_types"].get(name, {"items": 0, "answers": {}})
        count = group["items"]
        detail = f"{count} test items" + (f", {low - count} short" if count < low else f", {count - high} over" if count > high else "")
        rules.append({"rule": f"{name}: {low}-{high} test items", "met": low <= count <= high, "detail": detail})
        if count:
            answer, top = next(iter(group["answers"].items()))
            share = top / count
            rules.append({"rule": f"{name}: top answer <= {MERA_TOP_ANSWER[name]:.0%}", "met": share <= MERA_TOP_ANSWER[name],
                          "detail": f"{answer!r} {share:.1%}"})
    if image_sides is not None:
        width, height = image_sides
        rules.append({"rule": f"image sides >= {MERA_MIN_SIDE} px", "met": min(width, height) >= MERA_MIN_SIDE,
                      "detail": f"smallest image {width}x{height}"})
    return rules


def smallest_image_sides(document: MeraDocument | StreamedDocument) -> tuple[int, int] | None:
    """The smallest width and height over the distinct images of the items (headers only), None without images."""
    from PIL import Image

    seen: set[str] = set()
    width = height = None
    for split in SPLITS:
        for item, _ in document.records(split):
            name = item["inputs"]["image"]
            if name in seen:
                continue
            seen.add(name)
            try:
                with Image.open(document.image_path(item)) as image:
                    w, h = image.size
            except (OSError, ValueError):
                continue
            width, height = (w, h) if width is None or height is None else (min(width, w), min(height, h))
    return None if width is None or height is None else (width, height)


def unmet_rules(rules: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per MERA rule not met."""
    return [f"MERA rule not met: {rule['rule']} ({rule['detail']})" for rule in rules if not rule["met"]]


def format_quality(statistics: Mapping[str, Any]) -> str:
    """Degenerate shares, majority baselines and the MERA rules, for the terminal."""
    def percent(value: float | None) -> str:
        return "-" if value is None else f"{value:.1%}"

    everything = statistics["all"]
    degenerate, baselines = everything["degenerate"], everything["majority_baselines"]
    lines = [
        f"integer comparisons {degenerate['integer_comparisons']}: a count of 0 on a side {percent(degenerate['zero_side'])}, "
        f"0 vs 0 {percent(degenerate['zero_vs_zero'])}; 'equal: yes' {degenerate['equal_yes']}, of them 0 = 0 "
        f"{percent(degenerate['equal_yes_zero'])}; count answers {degenerate['count_answers']}, 0 {percent(degenerate['zero_count_answers'])}",
        f"majority baselines: per type {percent(baselines['type_majority'])} ("
        + ", ".join(f"{name} {percent(share)}" for name, share in baselines["per_type"].items())
        + f"), per family {percent(baselines['family_majority'])}",
    ]
    for rule in statistics.get("mera_rules", []):
        lines.append(f"MERA rule {'met' if rule['met'] else 'NOT met'}: {rule['rule']} ({rule['detail']})")
    return "\n".join(lines)
