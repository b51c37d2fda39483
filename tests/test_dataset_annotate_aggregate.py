"""Dawid–Skene and GLAD beside the majority: a worked example of one EM step, and a planted crowd."""

from __future__ import annotations

import numpy as np
import pytest

from dataset.annotate.aggregate import SMOOTHING, Observations, aggregate, dawid_skene_posteriors, majority_answers
from dataset.publish.markdown import markdown_text

POOL = {"binary": ["да", "нет"], "count": [str(n) for n in range(11)],
        "colors": ["серый", "красный", "синий", "зеленый", "коричневый", "фиолетовый", "голубой", "желтый"],
        "materials": ["резина", "металл"], "shapes": ["куб", "сфера", "цилиндр"], "size": ["большой", "маленький"]}


def test_one_dawid_skene_step_as_worked_by_hand() -> None:
    # Two items, annotators A and B: item 1 both say x; item 2 A says x, B says y.
    # Start (vote shares): T1 = (1, 0), T2 = (1/2, 1/2). M-step: prior (3/4, 1/4);
    # A's row x: x 1 + 1/2, y 0; row y: x 1/2, y 0.  B's row x: x 1, y 1/2; row y: x 0, y 1/2 (each cell + s).
    # E-step, item 2 (A: x, B: y):  x: 3/4 * πA[x→x] * πB[x→y],  y: 1/4 * πA[y→x] * πB[y→y].
    s = SMOOTHING
    on_x = 0.75 * (1.5 + s) / (1.5 + 2 * s) * (0.5 + s) / (1.5 + 2 * s)
    on_y = 0.25 * (0.5 + s) / (0.5 + 2 * s) * (0.5 + s) / (0.5 + 2 * s)
    # item 1 (both x):  x: 3/4 * πA[x→x] * πB[x→x],  y: 1/4 * πA[y→x] * πB[y→x]
    one_x = 0.75 * (1.5 + s) / (1.5 + 2 * s) * (1 + s) / (1.5 + 2 * s)
    one_y = 0.25 * (0.5 + s) / (0.5 + 2 * s) * s / (0.5 + 2 * s)
    obs = Observations.of({1: {"A": "x", "B": "x"}, 2: {"A": "x", "B": "y"}})
    posteriors = dawid_skene_posteriors(obs, iterations=1)
    assert posteriors[1] == pytest.approx([on_x / (on_x + on_y), on_y / (on_x + on_y)])
    assert posteriors[0] == pytest.approx([one_x / (one_x + one_y), one_y / (one_x + one_y)])
    assert posteriors[1][0] == pytest.approx(0.5097, abs=1e-4)  # the hand figure with s = 0.01


def test_majority_ties_give_no_answer_and_every_method_agrees_on_a_unanimous_crowd() -> None:
    assert majority_answers({1: {"a": "x", "b": "y"}, 2: {"a": "x", "b": "x", "c": "y"}}) == {1: None, 2: "x"}
    unanimous = {item: {name: answer for name in "abc"} for item, answer in enumerate(["да", "нет", "куб", "3"])}
    for method in ("majority", "dawid-skene", "glad"):
        assert aggregate(unanimous, method) == {0: "да", 1: "нет", 2: "куб", 3: "3"}


def planted_crowd(seed: int, items: int = 300, honeypots: int = 15):
    """One annotator always right, four answering at random from the item's type's answers; 5 % honeypots."""
    rng = np.random.default_rng([23, seed])
    table, gold = {}, {}
    kinds = list(POOL)
    for item in range(items + honeypots):
        pool = POOL[kinds[int(rng.integers(len(kinds)))]]
        gold[item] = pool[int(rng.integers(len(pool)))]
        table[item] = {"right": gold[item], **{f"random{w}": pool[int(rng.integers(len(pool)))] for w in range(4)}}
    known = {item: gold[item] for item in range(items, items + honeypots)}
    return table, gold, known, range(items)


@pytest.mark.parametrize(("seed", "items"), [(0, 300), (1, 300), (2, 300), pytest.param(3, 3000, marks=pytest.mark.slow)])
def test_dawid_skene_and_glad_recover_more_gold_than_the_majority_on_a_planted_crowd(seed, items) -> None:
    table, gold, known, scored = planted_crowd(seed, items=items, honeypots=items // 20)
    answers = {method: aggregate(table, method, known) for method in ("majority", "dawid-skene", "glad")}
    recovered = {method: sum(answers[method][item] == gold[item] for item in scored) for method in answers}
    assert recovered["dawid-skene"] > recovered["majority"] + 0.15 * len(scored), recovered
    assert recovered["glad"] > recovered["majority"], recovered
    assert all(answers[method][item] == gold[item] for method in ("dawid-skene", "glad")
               for item in known)  # honeypots keep their known answer


def test_aggregation_is_deterministic() -> None:
    table, _, known, _ = planted_crowd(5, items=60, honeypots=3)
    assert aggregate(table, "dawid-skene", known) == aggregate(dict(reversed(table.items())), "dawid-skene", known)
    assert aggregate(table, "glad", known) == aggregate(table, "glad", known)


def planted_crowd_file(tmp_path):
    """A small export and a crowd TSV for it: one annotator always right, four at random, the shots as honeypots."""
    from annotate_helpers import read_dataset, small_export

    export = small_export(tmp_path / "DATA", n_scenes=12, shots=4)
    document = read_dataset(export)
    rows = ["task_id\tannotator\tanswer"]
    for item in document["data"]["test"] + document["data"]["shots"]:  # the shots are the honeypots
        draw = np.random.default_rng([31, item["meta"]["id"]])
        pool = POOL[item["meta"]["question_type"]]
        rows.append(f"{item['meta']['id']}\tright\t{item['outputs']}")
        rows += [f"{item['meta']['id']}\trandom{w}\t{pool[int(draw.integers(len(pool)))]}" for w in range(4)]
    (tmp_path / "crowd.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return export, tmp_path / "crowd.tsv"


def test_annotate_import_aggregates_by_the_chosen_method_and_reports_every_baseline(tmp_path, capsys) -> None:
    from annotate_helpers import read_dataset

    from dataset.cli import main
    from ruclevr.io import read_json

    export, _ = planted_crowd_file(tmp_path)
    document = read_dataset(export)
    reports = {}
    for method in ("majority", "dawid-skene", "glad"):
        capsys.readouterr()
        assert main(["annotate", "import", "--data", str(export), "--answers", str(tmp_path / "crowd.tsv"),
                     "--out", str(tmp_path / method), "--aggregate", method]) == 0
        label = "plurality" if method == "majority" else method
        assert f", {label} exact match " in capsys.readouterr().out
        reports[method] = read_json(tmp_path / method / "human.json")
        assert reports[method]["settings"]["aggregate"] == method
        card = (tmp_path / method / "human_baseline.md").read_text(encoding="utf-8")
        # method names are data in the card: escaped as Markdown text ("dawid\-skene" shows as dawid-skene)
        assert markdown_text("dawid-skene") in card and "glad" in card and "% of all answers" in card
    baselines = reports["majority"]["baselines"]
    assert all(report["baselines"] == baselines for report in reports.values())
    for method, report in reports.items():
        assert report["aggregated_baseline"]["overall"]["exact_match"] == baselines[method]["exact_match"]
        assert report["aggregated_baseline"]["method"] == ("plurality" if method == "majority" else method)
        assert report["items"]["disputed"] == baselines[method]["wrong_or_tied"]
    honeypots = reports["majority"]["honeypots"]
    answers = 5 * (len(document["data"]["test"]) + len(document["data"]["shots"]))
    assert honeypots == {"items": len(document["data"]["shots"]), "answers": 5 * len(document["data"]["shots"]),
                         "share_of_answers": round(5 * len(document["data"]["shots"]) / answers, 4)}
    assert baselines["dawid-skene"]["correct"] > baselines["majority"]["correct"], baselines
