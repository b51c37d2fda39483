"""The Hugging Face copy loads with MERA's ruCLEVR features (and ``meta.group_id``) under datasets 3.6 and 4.x.

The features are read from MERA's card YAML with ``meta.group_id`` added
(tests/data/ruclevr_copy_features.yaml) by each version of datasets itself, so "equal" means what
that version makes of MERA's card.
"""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import pytest
import yaml
from isolated_venv import make_venv, offline_environment
from sample_outputs import write_sample_export

from dataset.cli import main

COPY_FEATURES_YAML = Path(__file__).parent / "data" / "ruclevr_copy_features.yaml"

# Run by the python of the environment under test: load the copy and MERA's features, compare.
CHECK_FEATURES = textwrap.dedent(
    """
    import json, sys
    import datasets, yaml
    from datasets import Dataset, Features

    hf_dir, features_yaml, cache = sys.argv[1:4]
    with open(features_yaml, encoding="utf-8") as handle:
        mera = Features._from_yaml_list(yaml.safe_load(handle))
    loaded = datasets.load_dataset(hf_dir, cache_dir=cache)
    parquet = Dataset.from_parquet(hf_dir + "/data/test-00000-of-00001.parquet", cache_dir=cache)
    print(json.dumps({
        "version": datasets.__version__,
        "load_dataset_equal": {split: loaded[split].features == mera for split in loaded},
        "parquet_equal": parquet.features == mera,
        "synt_source": repr(loaded["test"].features["meta"]["image"]["synt_source"]),
        "rows": {split: loaded[split].num_rows for split in loaded},
    }))
    """
)


@pytest.fixture(scope="module")
def hf_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hf_versions")
    write_sample_export(root, n_scenes=6, shots=2)
    assert main(["hf", "--data", str(root / "mera"), "--out", str(root / "hf")]) == 0
    return root / "hf"


def check_features(python: str | Path, hf_copy: Path, cache: Path) -> dict:
    result = subprocess.run([str(python), "-c", CHECK_FEATURES, str(hf_copy), str(COPY_FEATURES_YAML), str(cache)],
                            capture_output=True, text=True, timeout=600, env=offline_environment(), check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_features_equal_meras_under_this_projects_datasets_4(hf_copy, tmp_path) -> None:
    import sys

    report = check_features(sys.executable, hf_copy, tmp_path / "cache")
    assert report["version"].startswith("4.")
    assert report["load_dataset_equal"] == {"shots": True, "test": True} and report["parquet_equal"]
    assert report["synt_source"] == "List(Value('string'))"


@pytest.mark.slow
def test_features_equal_meras_under_datasets_3_6(hf_copy, tmp_path) -> None:
    python = make_venv(tmp_path / "venv", ["datasets==3.6.0"])
    report = check_features(python, hf_copy, tmp_path / "cache")
    assert report["version"] == "3.6.0"
    assert report["load_dataset_equal"] == {"shots": True, "test": True} and report["parquet_equal"]
    # MERA's card under 3.6 means Sequence(Value('string')), not the plain list [Value] that `list: string` gives
    assert report["synt_source"].startswith("Sequence(feature=Value(dtype='string'")
    assert report["rows"]["shots"] == 2 and report["rows"]["test"] > 0


def test_card_spells_list_features_as_meras_card(hf_copy) -> None:
    card = (hf_copy / "README.md").read_text(encoding="utf-8")
    header = yaml.safe_load(card.split("---\n")[1])
    assert header["dataset_info"]["features"] == yaml.safe_load(COPY_FEATURES_YAML.read_text(encoding="utf-8"))
    assert "list:" not in card.split("---\n")[1]
