"""The spread of a model's score across fresh test sets made ``--like`` one earlier set.

The "model" here answers from priors alone: fitted once on the earlier set's test split (the most
frequent answer of each family, else of the question type), it is scored with
``python -m dataset evaluate``'s exact match on each fresh set (its predictions written as JSON
lines, read back as the command reads them). A real model's predictions go the same way: run
``dataset evaluate --data FRESH --predictions P`` on each set and quote the mean and the spread.

    python benchmarks/like_spread.py --earlier DATA --fresh DATA2 DATA3 ...
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from collections import Counter
from pathlib import Path

from dataset.evaluation.evaluate import evaluate, read_predictions
from dataset.mera.document import family_in, stream_document


def fit_prior(data: Path) -> tuple[dict[str, str], dict[str, str]]:
    by_family: dict[str, Counter[str]] = {}
    by_type: dict[str, Counter[str]] = {}
    for item, record in stream_document(data).records("test"):
        by_family.setdefault(family_in(record), Counter())[item["outputs"]] += 1
        by_type.setdefault(item["meta"]["question_type"], Counter())[item["outputs"]] += 1
    return ({name: counts.most_common(1)[0][0] for name, counts in by_family.items()},
            {name: counts.most_common(1)[0][0] for name, counts in by_type.items()})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--earlier", type=Path, required=True)
    parser.add_argument("--fresh", type=Path, nargs="+", required=True)
    args = parser.parse_args()

    families, types = fit_prior(args.earlier)
    scores = []
    for data in [args.earlier, *args.fresh]:
        document = stream_document(data)
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "predictions.jsonl"
            with open(path, "w", encoding="utf-8") as out:
                for item, record in document.records("test"):
                    answer = families.get(family_in(record)) or types.get(item["meta"]["question_type"], "")
                    out.write(json.dumps({"id": item["meta"]["id"], "prediction": answer}, ensure_ascii=False) + "\n")
            result = evaluate(document, "test", read_predictions(path))
        score = result["predictions"]["overall"]["exact_match"]
        print(f"{data}: exact match {score:.4f}{' (the set it was fitted on)' if data == args.earlier else ''}")
        if data != args.earlier:
            scores.append(score)
    if len(scores) > 1:
        print(f"fresh sets: mean {statistics.mean(scores):.4f}, spread (max - min) {max(scores) - min(scores):.4f}, "
              f"standard deviation {statistics.stdev(scores):.4f} over {len(scores)} sets")


if __name__ == "__main__":
    main()
