"""crowd-kit's Dawid–Skene and GLAD (``--aggregate crowd-kit-ds|crowd-kit-glad``) beside the project's own."""

from __future__ import annotations

import sys

import pytest
from test_dataset_annotate_aggregate import planted_crowd, planted_crowd_file

from dataset.annotate.aggregate import aggregate
from dataset.annotate.crowd_kit import crowd_kit_available

needs_crowd_kit = pytest.mark.skipif(not crowd_kit_available(),
                                     reason="crowd-kit is not installed (the optional extra: pip install -e '.[crowd]')")


@needs_crowd_kit
@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("seed", [0, 2])
def test_crowd_kit_glad_agrees_with_the_own_glad_and_its_dawid_skene_trails_the_own(seed) -> None:
    table, gold, known, scored = planted_crowd(seed)
    methods = ("majority", "dawid-skene", "glad", "crowd-kit-ds", "crowd-kit-glad")
    answers = {method: aggregate(table, method, known) for method in methods}
    recovered = {method: sum(answers[method][item] == gold[item] for item in scored) for method in methods}
    agree_glad = sum(answers["crowd-kit-glad"][item] == answers["glad"][item] for item in scored)
    # GLAD: the same model; on the 300 planted items the two agree on 286 and 266 (seeds 0 and 2)
    assert agree_glad >= 0.85 * len(scored), (agree_glad, recovered)
    assert abs(recovered["crowd-kit-glad"] - recovered["glad"]) <= 0.05 * len(scored), recovered
    # Dawid-Skene: crowd-kit's (honeypots as true_labels) recovers about the majority's count, the own
    # (started from the honeypot accuracies) far more: 143 vs 232 and 150 vs 272
    assert recovered["crowd-kit-ds"] >= recovered["majority"], recovered
    assert recovered["dawid-skene"] > recovered["crowd-kit-ds"] + 0.15 * len(scored), recovered
    assert all(answers["crowd-kit-ds"][item] == gold[item] for item in known)  # honeypots keep their known answer


@needs_crowd_kit
@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("method", ["crowd-kit-ds", "crowd-kit-glad"])
def test_annotate_import_aggregates_with_crowd_kit_and_reports_it_beside_the_own_methods(tmp_path, capsys, method) -> None:
    from dataset.cli import main
    from ruclevr.io import read_json

    export, crowd = planted_crowd_file(tmp_path)
    assert main(["annotate", "import", "--data", str(export), "--answers", str(crowd),
                 "--out", str(tmp_path / "out"), "--aggregate", method]) == 0
    assert f", {method} exact match " in capsys.readouterr().out
    report = read_json(tmp_path / "out" / "human.json")
    assert list(report["baselines"]) == ["majority", "dawid-skene", "glad", method]
    assert report["aggregated_baseline"]["overall"]["exact_match"] == report["baselines"][method]["exact_match"]
    assert report["items"]["disputed"] == report["baselines"][method]["wrong_or_tied"]
    # the same answers read back from the long form the command writes give the same labels
    import pandas
    from crowdkit.aggregation import GLAD, DawidSkene

    long_form = pandas.read_csv(tmp_path / "out" / "answers_crowd_kit.csv", dtype=str)
    assert len(long_form) == 5 * long_form["task"].nunique()
    if method == "crowd-kit-glad":  # no honeypots to pass: the file alone is GLAD's whole input
        labels = GLAD(n_iter=100).fit_predict(long_form)
        from annotate_helpers import read_dataset

        gold = {item["meta"]["id"]: item["outputs"] for item in read_dataset(export)["data"]["test"]}
        correct = sum(labels[str(item)] == answer for item, answer in gold.items())
        assert correct == report["baselines"][method]["correct"]
    else:
        assert DawidSkene(n_iter=100).fit_predict(long_form).size == long_form["task"].nunique()


def test_crowd_kit_methods_without_crowd_kit_name_the_extra_in_one_line(tmp_path, capsys, monkeypatch) -> None:
    from dataset.cli import main

    export, crowd = planted_crowd_file(tmp_path)
    monkeypatch.setitem(sys.modules, "crowdkit", None)  # as if not installed: importing it raises ImportError
    for method in ("crowd-kit-ds", "crowd-kit-glad"):
        status = main(["annotate", "import", "--data", str(export), "--answers", str(crowd),
                       "--out", str(tmp_path / method), "--aggregate", method])
        error = capsys.readouterr().err
        assert status == 2
        assert error.count("\n") == 1 and "pip install -e '.[crowd]'" in error and "Traceback" not in error
        assert not (tmp_path / method).exists()


@needs_crowd_kit
@pytest.mark.filterwarnings("ignore")
def test_crowd_kit_methods_pool_rare_answers_past_the_class_limit() -> None:
    from dataset.annotate.answer_classes import MAX_CLASSES

    answers = [f"ответ {n:02d}" for n in range(MAX_CLASSES + 10)]
    table = {item: {worker: answer for worker in "abc"} for item, answer in enumerate(answers)}
    for method in ("crowd-kit-ds", "crowd-kit-glad"):
        result = aggregate(table, method)
        kept = [item for item, answer in result.items() if answer is not None]
        assert all(result[item] == answers[item] for item in kept)  # a unanimous item keeps its answer
        assert len(kept) == MAX_CLASSES - 1, result  # the rest win as the pooled class: no answer
