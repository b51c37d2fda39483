"""Blind baselines: how much of the answer the question text alone gives away, per MERA question type.

Trained on the questions of some scenes and scored on the questions of the others (scenes never
shared), beside the per-type majority answer a model without the text would give:

- majority: the most common answer of the type in training;
- family majority: the most common answer of the question's family in training (a model that
  knows which template it reads, nothing more);
- text only: TF-IDF of the Russian question's word 1-2-grams and a logistic regression, one per type.

"gain" is text only minus majority: near 0 means the text does not tell the answer.

    python -m render --graphs-only --n 6000 --out S
    python -m questions --in S/scenes.json --out S/questions.json
    python -m translate --in S/questions.json --out S/questions_ru.json
    python benchmarks/blind_bench.py --in S/questions_ru.json --train-scenes 5000
    python benchmarks/blind_bench.py --in S/questions_ru.json --train-scenes 5000 --by skill   # rows per skill, type within
    python benchmarks/blind_bench.py --in A/questions_ru.json --in B/questions_ru.json --folds 5 --by skill --families 0

With ``--folds K`` every question is scored once: the scenes fall into K folds by ``image_index``
modulo K, each fold is scored by models trained on the other folds, and the figures are the
folds' weighted by their test questions (for small sets, such as rendered scenes with occlusion
records, where one held-out slice leaves a row standing on a few dozen questions).

With ``--by skill`` a row is a family skill (questions/skills.py) and the majority and the text-only
model are per MERA type within it (a skill mixes yes/no and count questions), so "gain" is still
against the per-type majority.

Needs scikit-learn (the ``dev`` extra).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

TYPES = ("binary", "colors", "count", "materials", "shapes", "size")


def majority(answers: Iterable[str]) -> str:
    """The most common answer (ties: the first in sorted order, so reruns agree)."""
    counts = Counter(answers)
    return min(counts, key=lambda answer: (-counts[answer], answer))


def accuracy(predicted: Sequence[str], truth: Sequence[str]) -> float:
    return sum(p == t for p, t in zip(predicted, truth, strict=True)) / len(truth) if truth else float("nan")


def text_only(train: Sequence[Mapping[str, Any]], test: Sequence[Mapping[str, Any]], seed: int) -> list[str]:
    """Predictions of TF-IDF word 1-2-grams + logistic regression trained on ``train``'s Russian questions."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    answers = [q["answer"] for q in train]
    if len(set(answers)) < 2:
        return [answers[0]] * len(test) if answers else []
    vectoriser = TfidfVectorizer(ngram_range=(1, 2), lowercase=True, token_pattern=r"(?u)\b\w+\b", sublinear_tf=True)
    features = vectoriser.fit_transform([q["question_ru"] for q in train])
    model = LogisticRegression(C=4.0, max_iter=2000, random_state=seed)
    model.fit(features, answers)
    return [str(answer) for answer in model.predict(vectoriser.transform([q["question_ru"] for q in test]))]


def blind_table(
    questions: Sequence[Mapping[str, Any]], train_scenes: int, seed: int = 0, skill_of: Mapping[str, str] | None = None
) -> dict[str, dict[str, float]]:
    """Per type (and "all"): majority, family majority and text-only accuracy on the held-out scenes, and question counts.
    With ``skill_of`` (family -> skill): per skill, each scored per type within it."""
    if skill_of is not None:
        return _by_skill(questions, train_scenes, seed, skill_of)
    train = [q for q in questions if int(q["image_index"]) < train_scenes]
    test = [q for q in questions if int(q["image_index"]) >= train_scenes]
    family_majority = {family: majority(answers) for family, answers in _group(train, "family").items()}
    rows: dict[str, dict[str, float]] = {}
    totals: Counter[str] = Counter()
    by_type_train, by_type_test = _group_records(train), _group_records(test)
    for kind in TYPES:
        kind_train, kind_test = by_type_train.get(kind, []), by_type_test.get(kind, [])
        if not kind_train or not kind_test:
            continue
        truth = [q["answer"] for q in kind_test]
        guess = majority(q["answer"] for q in kind_train)
        by_family = [family_majority.get(q["family"], guess) for q in kind_test]
        text = text_only(kind_train, kind_test, seed)
        scores = {"majority": accuracy([guess] * len(truth), truth), "family": accuracy(by_family, truth), "text": accuracy(text, truth)}
        rows[kind] = {**scores, "train": len(kind_train), "test": len(kind_test)}
        for name, score in scores.items():
            totals[name] += score * len(truth)
        totals["test"] += len(truth)
        totals["train"] += len(kind_train)
    if totals["test"]:
        rows["all"] = {name: totals[name] / totals["test"] for name in ("majority", "family", "text")}
        rows["all"].update(train=totals["train"], test=totals["test"])
    return rows


def folded_table(
    questions: Sequence[Mapping[str, Any]], folds: int, seed: int = 0, skill_of: Mapping[str, str] | None = None
) -> dict[str, dict[str, float]]:
    """:func:`blind_table` over ``folds`` folds of scenes (``image_index`` modulo ``folds``), each scored once."""
    per_fold = []
    for fold in range(folds):
        # the fold's scenes move past the split, the others before it: scene identity stays whole
        moved = [{**q, "image_index": 1 if int(q["image_index"]) % folds == fold else 0} for q in questions]
        per_fold.append(blind_table(moved, 1, seed, skill_of))
    rows: dict[str, dict[str, float]] = {}
    for name in dict.fromkeys(name for table in per_fold for name in table):
        tables = [table[name] for table in per_fold if name in table]
        test = sum(row["test"] for row in tables)
        rows[name] = {key: sum(row[key] * row["test"] for row in tables) / test for key in ("majority", "family", "text")}
        rows[name].update(train=sum(row["train"] for row in tables) / len(tables), test=test)
    return rows


def _by_skill(
    questions: Sequence[Mapping[str, Any]], train_scenes: int, seed: int, skill_of: Mapping[str, str]
) -> dict[str, dict[str, float]]:
    grouped: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for q in questions:
        grouped[skill_of[q["family"]]].append(q)
    rows = {}
    for skill in sorted(grouped):
        row = blind_table(grouped[skill], train_scenes, seed).get("all")
        if row is not None:
            rows[skill] = row
    return rows


def _group(records: Iterable[Mapping[str, Any]], key: str) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = defaultdict(list)
    for record in records:
        grouped[record[key]].append(record["answer"])
    return grouped


def _group_records(records: Iterable[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    grouped: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for record in records:
        grouped[record["question_type"]].append(record)
    return grouped


def family_text_gains(questions: Sequence[Mapping[str, Any]], train_scenes: int, seed: int = 0, top: int = 8) -> list[tuple[str, float, float, int]]:
    """The families whose text tells most: (family, family majority, text-only accuracy, test questions), largest gain first."""
    train, test = _group_family(questions, train_scenes)
    rows = []
    for family, family_test in test.items():
        family_train = train.get(family, [])
        if len(family_test) < 20 or not family_train:
            continue
        truth = [q["answer"] for q in family_test]
        base = accuracy([majority(q["answer"] for q in family_train)] * len(truth), truth)
        rows.append((family, base, accuracy(text_only(family_train, family_test, seed), truth), len(truth)))
    rows.sort(key=lambda row: row[1] - row[2])
    return rows[:top]


def _group_family(questions: Sequence[Mapping[str, Any]], train_scenes: int) -> tuple[dict[str, list], dict[str, list]]:
    train: dict[str, list] = defaultdict(list)
    test: dict[str, list] = defaultdict(list)
    for q in questions:
        (train if int(q["image_index"]) < train_scenes else test)[q["family"]].append(q)
    return train, test


def format_table(rows: Mapping[str, Mapping[str, float]]) -> str:
    lines = ["| type | train | test | majority | family majority | text only | gain |", "|---|---:|---:|---:|---:|---:|---:|"]
    for kind, row in rows.items():
        gain = row["text"] - row["majority"]
        lines.append(f"| {kind} | {int(row['train'])} | {int(row['test'])} | {row['majority']:.3f} | {row['family']:.3f} | {row['text']:.3f} | {gain:+.3f} |")
    return "\n".join(lines)


def read_questions(paths: Sequence[Path]) -> list[dict[str, Any]]:
    """The questions of every file; with more than one, file k's scene ``i`` is scene ``k * 10**6 + i`` (none shared)."""
    if len(paths) == 1:
        return json.loads(paths[0].read_text(encoding="utf-8"))["questions"]
    return [{**q, "image_index": k * 10**6 + int(q["image_index"])}
            for k, path in enumerate(paths) for q in json.loads(path.read_text(encoding="utf-8"))["questions"]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--in", dest="paths", type=Path, required=True, action="append",
                        help="questions_ru.json from python -m translate; repeatable (file k's scenes become k * 1e6 + image_index)")
    parser.add_argument("--train-scenes", type=int, default=5000, help="scenes with image_index below this train, the rest test (default 5000)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the logistic regression (default 0)")
    parser.add_argument("--families", type=int, default=8, help="also list this many families whose text tells most (default 8; 0: none)")
    parser.add_argument("--json", action="store_true", help="print the table as one JSON object")
    parser.add_argument("--folds", type=int, default=0,
                        help="score every question once over this many folds of scenes instead of --train-scenes")
    parser.add_argument("--by", choices=("type", "skill"), default="type", help="a row per MERA type (default) or per family skill")
    args = parser.parse_args()
    questions = read_questions(args.paths)
    skill_of = None
    if args.by == "skill":
        from questions.families import load_families

        skill_of = {family.id: family.skill for family in load_families().values()}
    if args.folds > 1:
        rows = folded_table(questions, args.folds, args.seed, skill_of)
        split = f"{args.folds} folds of scenes (image_index mod {args.folds}), each scored by the others (train: mean per fold)"
    else:
        rows = blind_table(questions, args.train_scenes, args.seed, skill_of)
        split = f"train: scenes < {args.train_scenes}, test: the others"
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{len(questions)} questions; {split}")
    print(format_table(rows))
    if args.families:
        print("\nfamilies whose text tells most (family majority -> text only, test questions):")
        for family, base, text, count in family_text_gains(questions, args.train_scenes, args.seed, args.families):
            print(f"  {family}: {base:.3f} -> {text:.3f} ({count})")


if __name__ == "__main__":
    main()
