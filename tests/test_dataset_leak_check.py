"""leak-check finds a build's items however they were re-typed and re-encoded, and nothing of another seed's."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dataset.releases.leak_check import normalise
from tests.helpers import run_stage
from tests.leak_corpus import plant_corpus, recase_respace
from tests.test_dataset_watermark import sample_export


def leak_check(capsys, *argv) -> tuple[int, list[str]]:
    status = run_stage("dataset", "leak-check", *argv)
    return status, capsys.readouterr().out.strip().splitlines()


def test_normalising_undoes_case_spacing_punctuation_and_yo() -> None:
    question = "Сколько здесь жёлтых металлических предметов?"
    assert normalise(recase_respace(question)) == normalise(question)
    assert normalise("СКОЛЬКО  здесь желтых металлических, предметов") == normalise(question)
    assert normalise("Сколько здесь жёлтых кубов?") != normalise(question)


def test_reads_json_jsonl_parquet_text_and_image_folders(tmp_path, capsys) -> None:
    _, export = sample_export(tmp_path)
    planted = plant_corpus(export, tmp_path / "corpus" / "planted")
    test_items = json.loads((export / "test.json").read_text())["data"]
    # A MERA-layout copy (JSON, images by relative path), a parquet file with embedded bytes, a text file.
    (tmp_path / "corpus" / "mera").mkdir()
    (tmp_path / "corpus" / "mera" / "copy.json").write_text(json.dumps({"data": test_items[:3]}, ensure_ascii=False))
    shutil.copytree(export / "samples", tmp_path / "corpus" / "mera" / "samples")
    image = (export / "samples" / test_items[4]["inputs"]["image"].split("/")[-1]).read_bytes()
    rows = [{"inputs": {"question": test_items[4]["inputs"]["question"].upper(), "image": {"bytes": image, "path": "x"}}}]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "corpus" / "rows.parquet")
    (tmp_path / "corpus" / "notes.txt").write_text(test_items[5]["inputs"]["question"] + "\n")
    # A record naming an image outside its folder is not read.
    (tmp_path / "corpus" / "escape.jsonl").write_text(json.dumps({"question": "x", "image": "../mera/samples/a.png"}) + "\n")
    status, lines = leak_check(capsys, "--data", export, "--corpus", tmp_path / "corpus", "--show-text-only")
    assert status == 1
    summary = lines[-1]
    assert f"{len(planted)} of {len(planted)} items" in summary
    assert any(line.startswith("item ") and "rows.parquet#0" in line and "(normalised)" in line for line in lines)
    assert any(line.startswith("item ") and "copy.json" in line and "(exact)" in line for line in lines)
    assert any(line.startswith("text only ") and "notes.txt:1" in line for line in lines)
    assert any(line.startswith("image ") and line.split()[1].endswith(".jpg:") for line in lines)


def test_no_corpus_is_one_line(tmp_path, capsys) -> None:
    _, export = sample_export(tmp_path)
    assert run_stage("dataset", "leak-check", "--data", export, "--corpus", tmp_path / "missing") == 2
    assert "--corpus" in capsys.readouterr().err


@pytest.mark.blender
@pytest.mark.slow
def test_every_planted_item_of_a_real_build_is_found_and_nothing_of_another_seed(tmp_path, monkeypatch) -> None:
    def build(seed: int):
        root = tmp_path / f"build{seed}"
        result = subprocess.run([sys.executable, "-m", "dataset", "build", "--n", "3", "--out", str(root), "--width", "96",
                                 "--height", "64", "--samples", "2", "--shots", "1", "--seed", str(seed)],
                                capture_output=True, text=True, check=False, env=dict(os.environ))
        assert result.returncode == 0, result.stderr[-3000:]
        return root

    def check(data, corpus):
        result = subprocess.run([sys.executable, "-m", "dataset", "leak-check", "--data", str(data), "--corpus", *map(str, corpus)],
                                capture_output=True, text=True, check=False)
        return result.returncode, result.stdout.strip().splitlines()

    ours, theirs = build(1), build(2)
    planted = plant_corpus(ours, tmp_path / "leaked")
    other = plant_corpus(theirs, tmp_path / "other")
    # The public (watermarked) copy, as published, is a corpus too.
    assert run_stage("dataset", "hf", "--data", ours, "--out", tmp_path / "private", "--public-out", tmp_path / "public") == 0
    # The two copies of this real build load, hold the same items and differ only in image bytes.
    import datasets

    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    clean, marked = (datasets.load_dataset(str(tmp_path / name), cache_dir=str(tmp_path / "cache")) for name in ("private", "public"))
    for split in ("shots", "test"):
        for a, b in zip(clean[split], marked[split], strict=True):
            image_a, image_b = a["inputs"].pop("image"), b["inputs"].pop("image")
            assert a == b and image_a["path"] == image_b["path"] and image_a["bytes"] != image_b["bytes"]
    status, lines = check(ours, [tmp_path / "leaked", tmp_path / "public"])
    assert status == 1
    found = {int(i) for line in lines if line.startswith("item ") for i in line.rsplit("item ", 1)[1].split(", ")}
    assert found == set(planted)
    assert f"{len(planted)} of {len(planted)} items" in lines[-1]
    status, lines = check(ours, [tmp_path / "other", theirs / "hf"])
    assert status == 0 and lines[-1].startswith("leak-check: 0 item matches, 0 image matches"), lines[-3:]
    assert len(other) > 0 and np.all([not line.startswith(("item ", "image ")) for line in lines])
