"""MERA's export layout (shots.json, test.json, provenance.json, samples/) and the earlier single file.

Every reader (stats, evaluate, hf, gallery, build's counts) goes through dataset.mera.document, so an
export in either layout gives the same results.
"""

from __future__ import annotations

import html
import shutil
from pathlib import Path

import pytest
from sample_outputs import mera_export_problems, write_sample_export, write_sample_stage_outputs

from dataset.cli import main
from dataset.mera.document import LEGACY_DOCUMENT_NAME, load_document, read_export
from ruclevr.io import atomic_write_json, read_json


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One export in MERA's layout, and the same export rewritten as the earlier single file."""
    root = tmp_path_factory.mktemp("layout")
    mera = write_sample_export(root, n_scenes=8, shots=3)
    legacy = root / "legacy"
    shutil.copytree(mera / "samples", legacy / "samples")
    atomic_write_json(legacy / LEGACY_DOCUMENT_NAME, read_export(mera))
    return {"mera": mera, "legacy": legacy}


def test_export_writes_meras_files_and_provenance_beside_them(exports) -> None:
    mera = exports["mera"]
    assert sorted(p.name for p in mera.iterdir()) == ["provenance.json", "samples", "shots.json", "test.json"]
    for split in ("shots", "test"):
        raw = read_json(mera / f"{split}.json")
        assert list(raw) == ["data"] and raw["data"]
        assert all(set(item) == {"instruction", "inputs", "outputs", "meta"} for item in raw["data"])
    provenance = read_json(mera / "provenance.json")
    assert set(provenance) == {"info", "provenance"}
    assert mera_export_problems(mera) == []


def test_meras_files_load_with_datasets_as_a_json_task(exports, tmp_path) -> None:
    import datasets

    files = {split: str(exports["mera"] / f"{split}.json") for split in ("shots", "test")}
    loaded = datasets.load_dataset("json", data_files=files, field="data", cache_dir=str(tmp_path / "cache"))
    for split in ("shots", "test"):
        items = read_json(files[split])["data"]
        assert loaded[split].num_rows == len(items)
        assert loaded[split][0]["inputs"] == items[0]["inputs"] and loaded[split][0]["meta"] == items[0]["meta"]


def test_readers_accept_a_folder_any_export_file_or_the_legacy_file(exports) -> None:
    expected = read_export(exports["mera"])
    for given in (exports["mera"], exports["mera"] / "test.json", exports["mera"] / "provenance.json",
                  exports["mera"].parent, exports["legacy"], exports["legacy"] / LEGACY_DOCUMENT_NAME):
        assert read_export(given) == expected, given


def test_meras_own_files_without_provenance_are_read(exports, tmp_path) -> None:
    bare = tmp_path / "bare"
    bare.mkdir()
    for name in ("shots.json", "test.json"):
        shutil.copy(exports["mera"] / name, bare / name)
    document = load_document(bare)
    assert document.items("test") == read_json(bare / "test.json")["data"]
    assert {document.family_of(item) for item in document.items("test")} == {"unknown"}


@pytest.mark.parametrize("command", ["stats", "evaluate"])
def test_stats_and_evaluate_give_the_same_results_from_either_layout(exports, tmp_path, command) -> None:
    results = []
    for layout in ("mera", "legacy"):
        out = tmp_path / f"{layout}.json"
        flag = "--mera" if command == "stats" else "--data"
        assert main([command, flag, str(exports[layout]), "--out", str(out)]) == 0
        raw = read_json(out)
        results.append(raw["statistics"] if command == "stats" else raw["results"])
    assert results[0] == results[1]


def test_hf_copy_and_gallery_from_the_legacy_file(exports, tmp_path) -> None:
    assert main(["hf", "--mera", str(exports["legacy"] / LEGACY_DOCUMENT_NAME), "--out", str(tmp_path / "hf")]) == 0
    assert (tmp_path / "hf" / "README.md").is_file()
    assert main(["gallery", "--data", str(exports["legacy"]), "--out", str(tmp_path / "g.html")]) == 0
    page = (tmp_path / "g.html").read_text(encoding="utf-8")
    first = read_export(exports["legacy"])["data"]["test"][0]["inputs"]["question"]
    assert html.escape(first) in page


def test_overwriting_a_legacy_export_leaves_only_meras_layout(exports, tmp_path) -> None:
    inputs = write_sample_stage_outputs(tmp_path / "in", n_scenes=8)
    out = tmp_path / "old"
    shutil.copytree(exports["legacy"], out)
    assert main(["export", "--questions", str(inputs["questions"]), "--scenes", str(inputs["scenes"]),
                 "--out", str(out), "--shots", "3", "--overwrite"]) == 0
    assert not (out / LEGACY_DOCUMENT_NAME).exists()
    assert read_export(out) == read_export(exports["mera"])
