"""`dataset submission`: lm-eval's logged samples → MERA's submission zip → `dataset evaluate` reads it back."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
from sample_outputs import write_sample_export

from dataset.cli import main
from dataset.mera.document import read_export
from ruclevr.io import read_json

STAMP_OLD, STAMP_NEW = "2026-01-31T10-00-00.000001", "2026-02-01T09-30-00.123456"


def reply(item: dict, n: int) -> str:
    gold = item["outputs"]
    return [gold, f"РАССУЖДЕНИЕ: смотрю.\nОТВЕТ: {gold}", "неверно", f"ответ - {gold.capitalize()}."][n % 4]


def write_samples(folder: Path, items: list[dict], stamp: str, answer) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"samples_ruclevr_{stamp}.jsonl"
    rows = [{"doc_id": n, "doc": item, "target": item["outputs"],
             "arguments": {"gen_args_0": {"arg_0": item["instruction"], "arg_1": {}}},
             "resps": [[answer(item, n)]], "filtered_resps": [answer(item, n)], "exact_match": 0.0}
            for n, item in enumerate(items)]
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    (folder / f"results_{stamp}.json").write_text(json.dumps({"results": {"ruclevr": {}}}), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_sample_export(tmp_path_factory.mktemp("submission"), n_scenes=8)


def scores(exported: Path, predictions: Path, out: Path) -> dict:
    assert main(["evaluate", "--data", str(exported), "--predictions", str(predictions), "--out", str(out)]) == 0
    return read_json(out)["results"]["predictions"]


def test_submission_zip_has_meras_layout_and_scores_as_the_samples(exported, tmp_path, capsys) -> None:
    test = read_export(exported)["data"]["test"]
    logs = tmp_path / "out" / "model__name"
    write_samples(logs, test, STAMP_OLD, lambda item, n: "неверно")  # an older run: not packed as answers
    samples = write_samples(logs, test, STAMP_NEW, reply)
    out = tmp_path / "submission.zip"
    assert main(["submission", "--samples", str(tmp_path / "out"), "--out", str(out)]) == 0
    assert f"{len(test)} answers from {samples.name}" in capsys.readouterr().out
    with zipfile.ZipFile(out) as archive:
        assert sorted(archive.namelist()) == ["logs_public.zip", "ruCLEVR.json"]
        task = json.loads(archive.read("ruCLEVR.json"))
        with zipfile.ZipFile(archive.open("logs_public.zip")) as logs_zip:
            assert sorted(logs_zip.namelist()) == sorted(p.name for p in logs.iterdir())
            assert logs_zip.read(samples.name) == samples.read_bytes()
    assert task == {"data": {"test": [{"outputs": reply(item, n), "meta": {"id": item["meta"]["id"]}}
                                      for n, item in enumerate(test)]}}
    from_samples = scores(exported, samples, tmp_path / "a.json")
    from_zip = scores(exported, out, tmp_path / "b.json")
    assert from_zip == from_samples
    assert [row["exact_match"] for row in from_zip["items"]] == [int(n % 4 == 0) for n in range(len(test))]
    first = out.read_bytes()
    assert main(["submission", "--samples", str(samples), "--out", str(out)]) == 0  # the file itself, same bytes
    assert out.read_bytes() == first


def test_bad_samples_are_one_line_usage_errors(exported, tmp_path, capsys) -> None:
    assert main(["submission", "--samples", str(tmp_path / "none"), "--out", str(tmp_path / "s.zip")]) == 2
    assert "does not exist" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["submission", "--samples", str(tmp_path / "empty"), "--out", str(tmp_path / "s.zip")]) == 2
    assert "holds no samples_ruclevr_" in capsys.readouterr().err
    bad = tmp_path / "bad" / f"samples_ruclevr_{STAMP_NEW}.jsonl"
    bad.parent.mkdir()
    bad.write_text('{"doc": {"meta": {}}, "filtered_resps": ["да"]}\n', encoding="utf-8")
    assert main(["submission", "--samples", str(bad.parent), "--out", str(tmp_path / "s.zip")]) == 2
    error = capsys.readouterr().err
    assert "doc.meta.id" in error and error.count("\n") == 1 and not (tmp_path / "s.zip").exists()
    ambiguous = tmp_path / "two_models"
    for model in ("model_a", "model_b"):
        (ambiguous / model).mkdir(parents=True)
        (ambiguous / model / f"samples_ruclevr_synthetic_{STAMP_NEW}.jsonl").write_text("", encoding="utf-8")
    assert main(["submission", "--samples", str(ambiguous), "--out", str(tmp_path / "s.zip")]) == 2
    error = capsys.readouterr().err
    assert "holds samples of 2 runs (ruclevr_synthetic in model_a, ruclevr_synthetic in model_b)" in error
    assert error.count("\n") == 1 and not (tmp_path / "s.zip").exists()
    (ambiguous / "model_b" / f"samples_ruclevr_synthetic_{STAMP_NEW}.jsonl").rename(
        ambiguous / "model_a" / f"samples_ruclevr_synthetic_long_{STAMP_NEW}.jsonl")
    assert main(["submission", "--samples", str(ambiguous), "--out", str(tmp_path / "s.zip")]) == 2
    assert "ruclevr_synthetic_long in model_a" in capsys.readouterr().err
    other = tmp_path / "other.zip"
    with zipfile.ZipFile(other, "w") as archive:
        archive.writestr("readme.txt", "hello")
    assert main(["evaluate", "--data", str(exported), "--predictions", str(other)]) == 2
    assert "without ruCLEVR.json" in capsys.readouterr().err
