"""MERA's rules for a task checked on every build: a 20-scene build is flagged, one line per rule;
a dataset that meets them passes (issue 25)."""

from __future__ import annotations

from pathlib import Path

from PIL import Image
from test_dataset_build import build, fake_stages  # noqa: F401  (the fixture, used by name)

from dataset.build_cli import build_warnings
from dataset.mera.document import MeraDocument
from dataset.mera.stats import DegenerateTally, compute_statistics, format_quality
from ruclevr.io import read_json

TYPES = {"binary": ["да", "нет"], "count": ["1", "2", "3", "4"], "colors": ["красный", "синий", "зелёный", "серый", "жёлтый"],
         "shapes": ["куб", "сфера", "цилиндр"], "materials": ["металл", "резина"], "size": ["большой", "маленький"]}


def test_a_build_of_20_scenes_is_flagged_one_line_per_rule(fake_stages, tmp_path: Path) -> None:  # noqa: F811
    root = tmp_path / "DATA"
    build(root, n=20).run()
    rules = read_json(root / "stats.json")["statistics"]["mera_rules"]
    unmet = {rule["rule"] for rule in rules if not rule["met"]}
    assert "items >= 300" in unmet and "image sides >= 224 px" in unmet
    assert {f"{name}: 100-1000 test items" for name in ("binary", "count")} <= unmet
    warnings = build_warnings(root / "stats.json")
    assert len(warnings) == len(unmet) and all(line.startswith("MERA rule not met: ") for line in warnings)
    assert any("short" in line for line in warnings)


def test_a_dataset_that_meets_the_rules_passes(tmp_path: Path) -> None:
    Image.new("RGB", (320, 240)).save(tmp_path / "image.png")
    test, provenance = [], {}
    for name, answers in TYPES.items():
        for k in range(120):
            item_id = len(test) + 1
            test.append({"instruction": "", "inputs": {"image": "image.png", "question": f"{name} {k}"},
                         "outputs": answers[k % len(answers)], "meta": {"id": item_id, "question_type": name}})
            provenance[item_id] = {"family": f"{name}/one", "num_objects": 5}
    document = MeraDocument(tmp_path / "test.json", {}, {"shots": [], "test": test}, provenance)
    statistics = compute_statistics(document)
    assert [rule for rule in statistics["mera_rules"] if not rule["met"]] == []
    assert any(rule["rule"] == "image sides >= 224 px" and rule["detail"] == "smallest image 320x240" for rule in statistics["mera_rules"])
    assert "MERA rule NOT met" not in format_quality(statistics)
    baselines = statistics["all"]["majority_baselines"]
    assert baselines["per_type"]["binary"] == 0.5 and baselines["per_type"]["shapes"] == round(40 / 120, 4)


def test_the_degenerate_shares_count_zero_sides_and_zero_counts() -> None:
    tally = DegenerateTally()
    for counts, comparison in (([0, 0], "equal_integer"), ([0, 2], "less_than"), ([3, 3], "equal_integer"), ([1, 2], "greater_than")):
        tally.add("binary", "да", comparison, counts)
    for answer in ("0", "1", "2", "3"):
        tally.add("count", answer, None, [int(answer)])
    shares = tally.as_dict()
    assert (shares["integer_comparisons"], shares["zero_side"], shares["zero_vs_zero"]) == (4, 0.5, 0.25)
    assert (shares["equal_yes"], shares["equal_yes_zero"], shares["zero_count_answers"]) == (2, 0.5, 0.25)
