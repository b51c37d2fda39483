"""The Hugging Face copy (parquet + card) and the statistics behind it."""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
import yaml
from sample_outputs import write_sample_stage_outputs

from dataset.cli import main
from dataset.mera.document import load_document, read_export
from dataset.publish.features import copy_features
from ruclevr.io import read_json


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One export and its Hugging Face copy, shared by the read-only tests of this module."""
    root = tmp_path_factory.mktemp("hf")
    inputs = write_sample_stage_outputs(root / "in", n_scenes=8)
    assert main(["export", "--questions", str(inputs["questions"]), "--scenes", str(inputs["scenes"]),
                 "--out", str(root / "mera"), "--shots", "3"]) == 0
    assert main(["hf", "--mera", str(root / "mera"), "--out", str(root / "hf")]) == 0
    return {"root": root, "mera": root / "mera", "hf": root / "hf", **inputs}


def load_offline(folder: Path, cache: Path, monkeypatch: pytest.MonkeyPatch):
    import datasets

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True, raising=False)
    return datasets.load_dataset(str(folder), cache_dir=str(cache))


def test_load_dataset_reads_the_copy_offline_with_declared_features(built, tmp_path, monkeypatch) -> None:
    loaded = load_offline(built["hf"], tmp_path / "cache", monkeypatch)
    document = read_export(built["mera"])
    assert set(loaded) == {"shots", "test"}
    for split in ("shots", "test"):
        assert loaded[split].features == copy_features()
        rows = loaded[split].to_list()
        items = document["data"][split]
        assert len(rows) == len(items)
        for row, item in zip(rows, items, strict=True):
            image = row["inputs"].pop("image")
            assert image["path"] == item["inputs"]["image"]
            assert image["bytes"] == (built["mera"] / item["inputs"]["image"]).read_bytes()
            expected = json.loads(json.dumps(item))
            expected["inputs"].pop("image")
            expected["meta"].setdefault("group_id", None)  # declared for every item: null outside a group
            assert row == expected
    ids = [row["meta"]["id"] for split in ("shots", "test") for row in loaded[split]]
    assert ids == list(range(1, len(ids) + 1))


#: MERA's features and meta.group_id.
COPY_FEATURES_YAML = Path(__file__).parent / "data" / "ruclevr_copy_features.yaml"


def card_parts(card: str) -> tuple[dict, str]:
    match = re.match(r"^---\n(.*?)\n---\n(.*)$", card, flags=re.S)
    assert match, "the card starts with a YAML block"
    return yaml.safe_load(match.group(1)), match.group(2)


def test_card_yaml_declares_features_splits_and_configs(built) -> None:
    header, _ = card_parts((built["hf"] / "README.md").read_text(encoding="utf-8"))
    document = read_export(built["mera"])
    info = header["dataset_info"]
    assert info["features"] == yaml.safe_load(COPY_FEATURES_YAML.read_text(encoding="utf-8"))
    assert "sequence: string" in (built["hf"] / "README.md").read_text(encoding="utf-8")
    assert {s["name"]: s["num_examples"] for s in info["splits"]} == {
        "shots": len(document["data"]["shots"]), "test": len(document["data"]["test"])}
    parquet_bytes = sum(p.stat().st_size for p in (built["hf"] / "data").glob("*.parquet"))
    assert info["download_size"] == parquet_bytes
    assert info["dataset_size"] == sum(s["num_bytes"] for s in info["splits"])
    assert header["configs"] == [{"config_name": "default", "data_files": [
        {"split": "shots", "path": "data/shots-*"}, {"split": "test", "path": "data/test-*"}]}]
    assert header["license"] == "cc-by-4.0"
    assert header["language"] == ["ru"] and header["task_categories"] == ["visual-question-answering"]
    assert sorted(p.name for p in (built["hf"] / "data").iterdir()) == [
        "shots-00000-of-00001.parquet", "test-00000-of-00001.parquet"]


def test_card_body_tells_how_the_data_was_made(built) -> None:
    _, body = card_parts((built["hf"] / "README.md").read_text(encoding="utf-8"))
    document = read_export(built["mera"])
    example = json.loads(re.search(r"## Example item\n\n```json\n(.*?)\n```", body, flags=re.S).group(1))
    assert example == document["data"]["test"][0]
    for expected in (
        "`native`: ",                       # the realiser, from the items
        "morph, threshold 0.5",             # filter backend and threshold, from the items
        "settings.width: 8",                # render settings, from the scenes file's info
        "settings.samples: 2",
        "3 shots were drawn with seed 0",
        "load_dataset(",
        "## Licence",
        "Creative Commons Attribution 4.0",
        "@inproceedings{fenogenova-etal-2024-mera",
        "Blind baselines",
        "| shapes | куб, сфера, цилиндр | кубик (куб), шар (сфера) |",  # the gold words and their synonyms
        "| materials | металл, резина |",
        "| binary | да, нет |",
    ):
        assert expected in body, expected
    families = {record["family"] for record in document["provenance"]}
    assert f"{len(families)} question families" in body
    assert all(f"`{family}`" in body for family in families)
    for question_type in {i["meta"]["question_type"] for i in document["data"]["test"]}:
        assert f"\n| {question_type} | " in body


def test_statistics_agree_with_the_items_and_scenes(built, tmp_path, capsys) -> None:
    out = tmp_path / "stats.json"
    assert main(["stats", "--mera", str(built["mera"]), "--out", str(out)]) == 0
    assert "objects per scene" in capsys.readouterr().out
    statistics = read_json(out)["statistics"]
    document = read_export(built["mera"])
    for split in ("shots", "test"):
        items = document["data"][split]
        per_type = statistics["splits"][split]["question_types"]
        assert sum(row["items"] for row in per_type.values()) == len(items)
        for question_type, row in per_type.items():
            answers = Counter(i["outputs"] for i in items if i["meta"]["question_type"] == question_type)
            assert row["answers"] == dict(answers) and list(row["answers"].values()) == sorted(answers.values(), reverse=True)
        assert sum(row["items"] for row in statistics["splits"][split]["families"].values()) == len(items)
    scenes = {s["image_filename"]: len(s["objects"]) for s in read_json(built["scenes"])["scenes"]}
    used = {Path(i["inputs"]["image"]).name for s in ("shots", "test") for i in document["data"][s]}
    expected_histogram = Counter(scenes[name] for name in used)
    objects = statistics["all"]["objects_per_scene"]
    assert objects["histogram"] == {str(k): v for k, v in sorted(expected_histogram.items())}
    assert objects["scenes"] == len(used)


def test_copy_is_byte_identical_when_rebuilt_and_rerun_skips(built, tmp_path, capsys) -> None:
    again = tmp_path / "hf"
    assert main(["hf", "--mera", str(built["mera"]), "--out", str(again)]) == 0
    for name in ("README.md", "data/shots-00000-of-00001.parquet", "data/test-00000-of-00001.parquet"):
        assert (again / name).read_bytes() == (built["hf"] / name).read_bytes(), name
    assert main(["hf", "--mera", str(built["mera"]), "--out", str(again), "--license", "mit"]) == 0
    assert "nothing to do" in capsys.readouterr().err
    assert main(["hf", "--mera", str(built["mera"]), "--out", str(again), "--license", "mit", "--overwrite"]) == 0
    header, _ = card_parts((again / "README.md").read_text(encoding="utf-8"))
    assert header["license"] == "mit"


def test_bad_licence_and_missing_images_are_usage_errors(built, tmp_path, capsys) -> None:
    assert main(["hf", "--mera", str(built["mera"]), "--out", str(tmp_path / "x"), "--license", "CC BY 4.0"]) == 2
    assert "is not a Hugging Face licence id" in capsys.readouterr().err
    document = load_document(built["mera"])
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "ruclevr.json").write_text(json.dumps({"info": {}, "data": document.splits, "provenance": []}),
                                         encoding="utf-8")
    assert main(["hf", "--mera", str(broken), "--out", str(tmp_path / "y")]) == 2
    error = capsys.readouterr().err
    assert "does not exist" in error and error.count("\n") == 1
    assert not (tmp_path / "y" / "README.md").exists()
    no_shots = dict(document.splits, shots=[])
    (broken / "ruclevr.json").write_text(json.dumps({"info": {}, "data": no_shots, "provenance": []}), encoding="utf-8")
    assert main(["hf", "--mera", str(broken), "--out", str(tmp_path / "z")]) == 2
    assert "split shots" in capsys.readouterr().err and not (tmp_path / "z").exists()


def test_a_split_in_several_parquet_files_loads_as_one_split(built, tmp_path, monkeypatch) -> None:
    import dataset.publish.hf
    from dataset.publish.hf import write_hf_copy

    monkeypatch.setattr(dataset.publish.hf, "ROWS_PER_GROUP", 5)
    document = load_document(built["mera"])
    out = tmp_path / "hf"
    write_hf_copy(document, out, max_file_bytes=1)  # every row group closes its file
    files = sorted(path.name for path in (out / "data").glob("test-*.parquet"))
    items = read_export(built["mera"])["data"]["test"]
    groups = -(-len(items) // 5)
    assert files == [f"test-{k:05d}-of-{groups:05d}.parquet" for k in range(groups)] and groups > 1
    header, _ = card_parts((out / "README.md").read_text(encoding="utf-8"))
    on_disk = sum(path.stat().st_size for path in (out / "data").glob("*.parquet"))
    assert header["dataset_info"]["download_size"] == on_disk
    loaded = load_offline(out, tmp_path / "cache", monkeypatch)
    assert loaded["test"].num_rows == len(items) == header["dataset_info"]["splits"][1]["num_examples"]
    assert [row["meta"]["id"] for row in loaded["test"]] == [item["meta"]["id"] for item in items]
    write_hf_copy(document, out)  # a later copy in one file replaces the pieces
    assert sorted(path.name for path in (out / "data").glob("test-*.parquet")) == ["test-00000-of-00001.parquet"]


def test_a_file_is_also_closed_after_max_file_groups_row_groups(built, tmp_path, monkeypatch) -> None:
    import pyarrow.parquet as pq

    import dataset.publish.hf
    from dataset.mera.document import stream_document
    from dataset.publish.hf import write_hf_copy

    monkeypatch.setattr(dataset.publish.hf, "ROWS_PER_GROUP", 5)
    monkeypatch.setattr(dataset.publish.hf, "MAX_FILE_GROUPS", 2)
    write_hf_copy(stream_document(built["mera"]), tmp_path / "hf")
    files = sorted((tmp_path / "hf" / "data").glob("test-*.parquet"))
    count = len(read_export(built["mera"])["data"]["test"])
    assert len(files) == -(-count // 10) > 1
    assert [pq.ParquetFile(path).metadata.num_row_groups for path in files[:-1]] == [2] * (len(files) - 1)
    assert sum(pq.ParquetFile(path).metadata.num_rows for path in files) == count


def test_an_export_without_its_record_is_refused_before_anything_is_written(built, tmp_path, capsys) -> None:
    """MERA's own files (no provenance.json) or a record lacking what the card says: one line, exit 2."""
    bare = tmp_path / "bare"
    bare.mkdir()
    for name in ("shots.json", "test.json"):
        (bare / name).write_bytes((built["mera"] / name).read_bytes())
    shutil.copytree(built["mera"] / "samples", bare / "samples")
    assert main(["hf", "--mera", str(bare), "--out", str(tmp_path / "out")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "counts.test" in error and "Traceback" not in error
    assert not (tmp_path / "out").exists()
    provenance = read_json(built["mera"] / "provenance.json")
    del provenance["info"]["counts"]["dropped_duplicates"]
    (bare / "provenance.json").write_text(json.dumps(provenance, ensure_ascii=False), encoding="utf-8")
    assert main(["hf", "--mera", str(bare), "--out", str(tmp_path / "out")]) == 2
    error = capsys.readouterr().err
    assert "counts.dropped_duplicates" in error and "counts.test" not in error
    assert not (tmp_path / "out").exists()
