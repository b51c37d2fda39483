"""Per-family figures of a crowd round from the annotators' TSV answers and the export's gold.

    python benchmarks/crowd/by_family.py EXPORT/mera A01.tsv A02.tsv ...

Each row: items, the share whose majority (at least 2 of the answers, the plurality) is the gold,
the share all answered right, and the share of single answers that are right. Answers are
compared lower-cased, stripped and with ё as е (the crowd's answer words are the gold words).
"""

from __future__ import annotations

import csv
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path


def normalised(answer: str) -> str:
    return answer.strip().lower().replace("ё", "е")


def family_rows(mera: Path, answer_files: list[str]) -> dict[str, list[int]]:
    gold = {str(item["meta"]["id"]): normalised(item["outputs"])
            for item in json.loads((mera / "test.json").read_text(encoding="utf-8"))["data"]}
    provenance = json.loads((mera / "provenance.json").read_text(encoding="utf-8"))["provenance"]
    family = {str(record["id"]): "/".join(record["family"].split("/")[:2]) for record in provenance}
    answers: dict[str, list[str]] = defaultdict(list)
    for name in answer_files:
        with open(name, encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle, delimiter="\t"):
                if row["task_id"] in gold:
                    answers[row["task_id"]].append(normalised(row["answer"]))
    rows: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])  # items, majority, all, single right, single
    for task, right in gold.items():
        given = answers[task]
        top, times = Counter(given).most_common(1)[0] if given else ("", 0)
        for key in (family[task], "all"):
            row = rows[key]
            row[0] += 1
            row[1] += top == right and times >= 2
            row[2] += bool(given) and all(answer == right for answer in given)
            row[3] += sum(answer == right for answer in given)
            row[4] += len(given)
    return rows


def main() -> None:
    rows = family_rows(Path(sys.argv[1]), sys.argv[2:])
    print("| family | items | majority (2 of 3) right | all 3 right | single answers right |")
    print("|---|---:|---:|---:|---:|")
    for key in sorted(rows, key=lambda key: (key == "all", key)):
        items, majority, every, single, given = rows[key]
        print(f"| {key} | {items} | {majority / items:.3f} | {every / items:.3f} | {single / max(given, 1):.3f} |")


if __name__ == "__main__":
    main()
