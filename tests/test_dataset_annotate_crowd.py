"""Simulated crowds on a real tiny build: answers drawn from gold with known per-annotator error
rates. The human baseline and Krippendorff's alpha land where the rates put them, and every
planted bad item (its gold deliberately changed) is disputed."""

from __future__ import annotations

import itertools
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from annotate_helpers import read_dataset, write_dataset

from dataset.cli import main
from ruclevr.io import read_json

ERROR_RATES = (0.0, 0.05, 0.1, 0.2, 0.3)
PLANTED = 3
WRONG_POOL = {"binary": ["да", "нет"], "count": [str(n) for n in range(11)],
              "colors": ["серый", "красный", "синий", "зеленый", "коричневый", "фиолетовый", "голубой", "желтый"],
              "materials": ["резина", "металл"], "shapes": ["куб", "сфера", "цилиндр"], "size": ["большой", "маленький"]}


def other_answer(gold: str, kind: str, rng: np.random.Generator) -> str:
    choices = [answer for answer in WRONG_POOL[kind] if answer != gold]
    return choices[int(rng.integers(len(choices)))]


def at_least(k: int, probabilities: list[float]) -> float:
    """P(at least k of independent events with these probabilities happen)."""
    return sum(math.prod(p if i in chosen else 1 - p for i, p in enumerate(probabilities))
               for size in range(k, len(probabilities) + 1) for chosen in itertools.combinations(range(len(probabilities)), size))


@pytest.fixture(scope="module")
def build(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("crowd") / "DATA"
    command = [sys.executable, "-m", "dataset", "build", "--n", "4", "--out", str(root), "--width", "96",
               "--height", "64", "--samples", "2", "--shots", "2", "--seed", "3"]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    return root


@pytest.mark.blender
@pytest.mark.slow
def test_simulated_crowd_gives_the_expected_baseline_and_alpha_and_disputes_planted_items(build, tmp_path) -> None:
    original = read_dataset(build / "mera")
    test = original["data"]["test"]
    assert len(test) >= 10
    rng = np.random.default_rng([7, 0])
    planted = sorted(int(i) for i in rng.choice(len(test), size=PLANTED, replace=False))
    # The dataset people are checked against: a copy with the gold of the planted items changed.
    reviewed = tmp_path / "mera"
    shutil.copytree(build / "mera", reviewed)
    changed = json.loads(json.dumps(original))
    for index in planted:
        item = changed["data"]["test"][index]
        item["outputs"] = other_answer(item["outputs"], item["meta"]["question_type"], rng)
    write_dataset(reviewed, changed)
    # Annotators answer from what the picture shows: the original gold, wrong at their error rate.
    rows = ["task_id\tannotator\tanswer"]
    for annotator, rate in enumerate(ERROR_RATES):
        for item in test + original["data"]["shots"]:
            draw = np.random.default_rng([11, annotator, item["meta"]["id"]])
            wrong = draw.random() < rate
            answer = other_answer(item["outputs"], item["meta"]["question_type"], draw) if wrong else item["outputs"]
            rows.append(f"{item['meta']['id']}\tw{annotator}\t{answer}")
    (tmp_path / "crowd.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    assert main(["annotate", "import", "--data", str(reviewed), "--answers", str(tmp_path / "crowd.tsv"),
                 "--out", str(tmp_path / "report"), "--write-filtered", str(tmp_path / "filtered")]) == 0
    report = read_json(tmp_path / "report" / "human.json")

    # Every planted item is disputed (its majority is the true answer, not the changed gold).
    disputed = {record["id"] for record in report["disputed"]}
    assert {test[index]["meta"]["id"] for index in planted} <= disputed
    assert len(read_dataset(tmp_path / "filtered")["data"]["test"]) == len(test) - len(disputed)

    # Baseline: an item's majority is surely right when at least 3 of the 5 answer right, so the expected
    # number of correct majorities on the untouched items is at least sum P(>= 3 right); planted ones are wrong.
    n, clean = len(test), len(test) - PLANTED
    p_sure = at_least(3, [1 - rate for rate in ERROR_RATES])
    low = (clean * p_sure - 3 * math.sqrt(clean * p_sure * (1 - p_sure))) / n
    baseline = report["aggregated_baseline"]["overall"]["exact_match"]
    assert low <= baseline <= clean / n, (low, baseline, clean / n)

    # Alpha: observed disagreement between two annotators is about 1 - (1 - e_i)(1 - e_j) (two wrong
    # answers rarely coincide), expected disagreement is 1 - sum of squared answer shares.
    pairs = list(itertools.combinations(ERROR_RATES, 2))
    observed = sum(1 - (1 - a) * (1 - b) for a, b in pairs) / len(pairs)
    shares = np.unique([item["outputs"] for item in test], return_counts=True)[1] / n
    expected = 1 - observed / (1 - float(np.sum(shares ** 2)))
    alpha = report["agreement"]["krippendorff_alpha"]["overall"]
    assert abs(alpha - expected) < 0.15, (alpha, expected)
    # The perfect annotator never misses a control.
    assert next(a for a in report["annotators"] if a["annotator"] == "w0")["control_accuracy"] == 1.0

    # Dawid–Skene on the same answers (the shots are the controls it learns the annotators from): the
    # planted items stay disputed, and human.json reports both methods' baselines alike either way.
    assert main(["annotate", "import", "--data", str(reviewed), "--answers", str(tmp_path / "crowd.tsv"),
                 "--out", str(tmp_path / "report_ds"), "--aggregate", "dawid-skene"]) == 0
    by_ds = read_json(tmp_path / "report_ds" / "human.json")
    assert {test[index]["meta"]["id"] for index in planted} <= {record["id"] for record in by_ds["disputed"]}
    assert by_ds["baselines"] == report["baselines"]
    assert by_ds["aggregated_baseline"]["overall"]["exact_match"] == report["baselines"]["dawid-skene"]["exact_match"]
    assert low <= by_ds["aggregated_baseline"]["overall"]["exact_match"] <= clean / n
    assert report["honeypots"]["items"] == len(original["data"]["shots"])
