"""Repeats across balance blocks: what dropping them (``--unique-across-blocks``) costs, in one run.

``python -m questions`` runs twice on the same scenes, through its command line: with the default
(no two questions of a balance block alike, a question may come back in a later block, on another
image) and with ``--unique-across-blocks`` (a question an earlier block of the split asked is
dropped). For each: questions written, scenes left with fewer than ``--per-image``, how many texts
occur more than once, and how balanced the answers are per question type (the most common
answer's share; a blind model that always gives it scores that much).

    python benchmarks/repeats_bench.py --scenes OUT/graphs/scenes.json --n 10000 --out /tmp/repeats
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path

from scale_bench import ROOT, first_scenes, run_stage

SETTINGS = {"per block (default)": [], "--unique-across-blocks": ["--unique-across-blocks"]}


def summarise(path: Path, scenes: int, per_image: int) -> dict[str, object]:
    """Counts, repeated texts and answer balance per question type of one questions.json, read item by item."""
    sys.path.insert(0, str(ROOT))
    from ruclevr.jsonstream import JsonDocument

    texts: Counter[str] = Counter()
    per_scene: Counter[int] = Counter()
    answers: dict[str, Counter[str]] = {}
    for question in JsonDocument(path, "questions").items():
        texts[question["question"].lower()] += 1
        per_scene[question["image_index"]] += 1
        answers.setdefault(question["question_type"], Counter())[question["answer"]] += 1
    questions = sum(per_scene.values())
    top_share = {kind: round(max(counts.values()) / sum(counts.values()), 4) for kind, counts in sorted(answers.items())}
    return {
        "questions": questions,
        "scenes_with_fewer": scenes - sum(1 for count in per_scene.values() if count >= per_image),
        "distinct_texts": len(texts),
        "texts_asked_more_than_once": sum(1 for count in texts.values() if count > 1),
        "question_types": {kind: sum(counts.values()) for kind, counts in sorted(answers.items())},
        "top_answer_share": top_share,
        "binary_yes_share": round(answers.get("binary", Counter())["yes"] / max(1, sum(answers.get("binary", Counter()).values())), 4),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scenes", type=Path, required=True, help="scenes.json (graphs-only is fine); its first --n scenes are used")
    parser.add_argument("--n", type=int, default=10000, help="scenes (default 10000)")
    parser.add_argument("--per-image", type=int, default=10)
    parser.add_argument("--out", type=Path, required=True, help="scratch folder")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    scenes_file = args.out / "scenes.json"
    first_scenes(args.scenes, args.n, scenes_file)
    report: dict[str, object] = {"scenes": args.n, "per_image": args.per_image}
    for index, (name, extra) in enumerate(SETTINGS.items()):
        out = args.out / f"questions-{index}.json"
        measured = run_stage(["questions", "--in", str(scenes_file), "--out", str(out), "--per-image", str(args.per_image),
                              "--quiet", "--overwrite", *extra])
        report[name] = {"cpu_s": round(measured["cpu_s"], 1), **summarise(out, args.n, args.per_image)}
        print(f"  {name}: {report[name]}", file=sys.stderr)
    report["load_average"] = os.getloadavg()
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
