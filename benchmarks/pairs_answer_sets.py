"""Two answer sets for an export's test split, to read `dataset evaluate`'s EM and group EM against:
the gold answers (EM and group EM 1.0) and the per-type majority answer (every item of a question
type answered with that type's most common gold answer in the split, ties to the first word).

    python benchmarks/pairs_answer_sets.py --data PAIRS/mera --out DIR
    python -m dataset evaluate --data PAIRS/mera --predictions DIR/gold.jsonl
    python -m dataset evaluate --data PAIRS/mera --predictions DIR/majority.jsonl
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from dataset.mera.document import stream_document


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="an export folder (or a build folder)")
    parser.add_argument("--split", default="test")
    parser.add_argument("--out", type=Path, required=True, help="folder for gold.jsonl and majority.jsonl")
    args = parser.parse_args()
    items = [item for item, _ in stream_document(args.data).records(args.split)]
    answers: dict[str, Counter[str]] = {}
    for item in items:
        answers.setdefault(item["meta"]["question_type"], Counter())[item["outputs"]] += 1
    majority = {name: min(counts, key=lambda answer: (-counts[answer], answer)) for name, counts in answers.items()}
    args.out.mkdir(parents=True, exist_ok=True)
    for name, answer_of in (("gold", lambda item: item["outputs"]), ("majority", lambda item: majority[item["meta"]["question_type"]])):
        lines = [json.dumps({"id": item["meta"]["id"], "prediction": answer_of(item)}, ensure_ascii=False) for item in items]
        (args.out / f"{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{args.out}: gold.jsonl and majority.jsonl for {len(items)} items of split {args.split}")


if __name__ == "__main__":
    main()
