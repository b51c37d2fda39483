"""`dataset evaluate --judge MODEL`: MERA's judge score from a tiny real classifier the test builds."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("transformers")
pytest.importorskip("torch")

import test_filter_rucola  # noqa: E402
from sample_outputs import write_sample_export  # noqa: E402

from dataset.cli import main  # noqa: E402
from dataset.mera.document import read_export  # noqa: E402
from ruclevr.io import read_json  # noqa: E402

POSITIONS = 4096  # long enough for a whole prompt, the gold answer and a reasoning reply


def tiny_judge(folder: Path) -> Path:
    """The RuCoLA tests' tiny RoBERTa classifier, with room for MERA's judge input."""
    kept = test_filter_rucola.MAX_POSITIONS
    test_filter_rucola.MAX_POSITIONS = POSITIONS
    try:
        return test_filter_rucola.build_tiny_classifier(folder)
    finally:
        test_filter_rucola.MAX_POSITIONS = kept


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("judge")
    exported = write_sample_export(root / "DATA", n_scenes=8)
    model = tiny_judge(root / "judge-model")
    test = read_export(exported)["data"]["test"]
    replies = {}
    for n, item in enumerate(test):
        gold = item["outputs"]
        if n % 5 != 4:  # every fifth item has no prediction
            replies[item["meta"]["id"]] = [gold, "неверно", f"РАССУЖДЕНИЕ: смотрю на сцену.\nОТВЕТ: {gold}",
                                           f"ОТВЕТ: неверно, {gold}"][n % 4]
    predictions = root / "predictions.jsonl"
    predictions.write_text("".join(json.dumps({"id": i, "prediction": p}, ensure_ascii=False) + "\n"
                                   for i, p in replies.items()), encoding="utf-8")
    return {"data": exported, "model": model, "test": test, "replies": replies, "predictions": predictions}


class ByHand:
    """The judge model run one text at a time, outside ruclevr (so batching and padding are checked too)."""

    def __init__(self, model: Path) -> None:
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(model)
        self.classifier = AutoModelForSequenceClassification.from_pretrained(model).eval()

    def tokens(self, text: str) -> int:
        return len(self.tokenizer(text)["input_ids"])

    def classes(self, texts: list[str]) -> list[int]:
        import torch

        found = []
        for text in texts:
            encoded = self.tokenizer(text, truncation=True, max_length=POSITIONS - 2, return_tensors="pt")
            with torch.inference_mode():
                found.append(int(self.classifier(**encoded).logits.argmax(dim=-1)))
        return found


def test_judge_scores_every_item_as_meras_judge_reads_it(setup, tmp_path, capsys) -> None:
    out = tmp_path / "r.json"
    assert main(["evaluate", "--data", str(setup["data"]), "--predictions", str(setup["predictions"]),
                 "--judge", str(setup["model"]), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    scores = read_json(out)["results"]["predictions"]
    judge = scores["judge"]
    assert [row["id"] for row in judge["items"]] == [item["meta"]["id"] for item in setup["test"]]
    by_hand = ByHand(setup["model"])
    expected = []
    for item in setup["test"]:
        reply = setup["replies"].get(item["meta"]["id"])
        if reply is None:
            expected.append(0)
            continue
        question = item["instruction"].format(**item["inputs"])
        texts = [f"{question}</s>{item['outputs']}</s>{reply}"]  # question <sep> gold <sep> prediction
        if "ОТВЕТ" in reply:
            texts.append(f"{question}</s>{item['outputs']}</s>{reply.split('ОТВЕТ')[-1].strip()}")
        expected.append(int(max(by_hand.classes(texts)) == 1))
        assert by_hand.tokens(texts[0]) < POSITIONS - 2  # nothing is cut
    assert [row["judge_score"] for row in judge["items"]] == expected
    assert 0 < sum(expected) < len(expected)  # the tiny model says both
    overall = judge["overall"]
    assert overall["judge_score"] == pytest.approx(sum(expected) / len(expected))
    assert overall["exact_match"] == pytest.approx(scores["overall"]["exact_match"])
    assert overall["score"] == pytest.approx((overall["exact_match"] + overall["judge_score"]) / 2)
    for name, row in judge["question_types"].items():
        assert row["exact_match"] == pytest.approx(scores["question_types"][name]["exact_match"])
    assert "(EM+JS)/2" in printed and f"{overall['score']:.4f}" in printed


def test_missing_judge_model_or_extra_is_one_line(setup, tmp_path, capsys, monkeypatch) -> None:
    base = ["evaluate", "--data", str(setup["data"]), "--predictions", str(setup["predictions"])]
    assert main([*base, "--judge", str(tmp_path / "no-such-model")]) == 2
    error = capsys.readouterr().err
    assert "no-such-model" in error and error.count("\n") == 1 and "Traceback" not in error
    assert main(["evaluate", "--data", str(setup["data"]), "--judge", str(setup["model"])]) == 2
    assert "pass --predictions" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "transformers", None)  # as if the [ml] extra were not installed
    assert main([*base, "--judge", str(setup["model"])]) == 2
    error = capsys.readouterr().err
    assert "transformers" in error and "[ml]" in error and error.count("\n") == 1


def test_a_long_input_is_read_cut_at_either_end_and_right_if_either_reading_is(tmp_path) -> None:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from dataset.evaluation.judge import Judge

    short = test_filter_rucola.build_tiny_classifier(tmp_path / "short")  # 38 tokens at most
    judge = Judge(str(short))
    tokenizer = AutoTokenizer.from_pretrained(short)
    classifier = AutoModelForSequenceClassification.from_pretrained(short).eval()

    def cut(text: str, side: str) -> int:
        tokenizer.truncation_side = side
        with torch.inference_mode():
            encoded = tokenizer(text, truncation=True, max_length=judge.max_length, return_tensors="pt")
            return int(classifier(**encoded).logits.argmax(dim=-1))

    texts = [" ".join(test_filter_rucola.SENTENCES[n:] + test_filter_rucola.SENTENCES[:n]) * 2
             for n in range(len(test_filter_rucola.SENTENCES))] + ["Куб?"]
    assert judge.max_length == test_filter_rucola.MAX_POSITIONS - 2
    expected = [cut(text, "right") == 1 or cut(text, "left") == 1 for text in texts]
    assert judge.judged_right(texts) == expected
    assert any(cut(text, "right") != cut(text, "left") for text in texts[:-1])  # the two readings differ
