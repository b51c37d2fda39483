"""``ruclevr.records``: the one home of run records (claiming a folder, refusing to mix runs,
fingerprints) and of output claims (which files a stage wrote, and which changed since)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ruclevr.cli import UsageError
from ruclevr.records import (
    as_recorded,
    changed_outputs,
    claim_run,
    describe_outputs,
    files_under,
    fingerprint,
    read_record,
    record_differences,
    same_record,
)


def refusal(differences: list[str]) -> str:
    return "other run: " + "; ".join(differences)


def test_a_record_is_compared_as_it_reads_back_from_json() -> None:
    record = {"size": (64, 48), "seeds": {1: "a"}}
    assert as_recorded(record) == {"size": [64, 48], "seeds": {"1": "a"}}
    assert same_record(json.loads(json.dumps(record)), record)
    assert not same_record(None, record)
    assert not same_record({"size": [64, 49], "seeds": {"1": "a"}}, record)


def test_differences_name_every_changed_leaf_by_its_path() -> None:
    old = {"seed": 1, "render": {"samples": 4, "width": 64}, "gone": True}
    new = {"seed": 1, "render": {"samples": 8, "width": 64}, "added": 0}
    assert record_differences(old, new) == ["added: None -> 0", "gone: True -> None", "render.samples: 4 -> 8"]
    assert record_differences(old, old) == []


def test_claim_writes_the_record_when_the_folder_has_no_run(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    claim_run(path, {"seed": 1}, has_work=lambda: pytest.fail("no record, nothing to ask"), refusal=refusal)
    assert json.loads(path.read_text()) == {"seed": 1}


def test_claim_refuses_a_folder_holding_work_of_another_run_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    claim_run(path, {"seed": 1, "device": "cpu"}, has_work=lambda: True, refusal=refusal)
    before = path.read_bytes()
    with pytest.raises(UsageError, match=r"^other run: seed: 1 -> 2$"):
        claim_run(path, {"seed": 2, "device": "cpu"}, has_work=lambda: True, refusal=refusal)
    assert path.read_bytes() == before


def test_claim_compares_only_the_defining_part_and_takes_over_a_folder_without_work(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    claim_run(path, {"seed": 1, "device": "cpu"}, has_work=lambda: True, refusal=refusal)
    defining = lambda record: {"seed": record["seed"]}  # noqa: E731
    claim_run(path, {"seed": 1, "device": "gpu"}, has_work=lambda: True, refusal=refusal, compared=defining)
    assert json.loads(path.read_text())["device"] == "gpu"
    claim_run(path, {"seed": 3, "device": "gpu"}, has_work=lambda: False, refusal=refusal)
    assert json.loads(path.read_text())["seed"] == 3


def test_a_damaged_record_is_read_as_none_and_claimed_afresh(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text("{half a rec", encoding="utf-8")
    assert read_record(path) is None and read_record(tmp_path / "missing.json") is None
    claim_run(path, {"seed": 1}, has_work=lambda: True, refusal=refusal)
    assert read_record(path) == {"seed": 1}


def test_fingerprint_depends_on_content_not_key_order() -> None:
    assert fingerprint({"a": 1, "b": [1, 2]}) == fingerprint({"b": [1, 2], "a": 1})
    assert fingerprint({"a": 1}) != fingerprint({"a": 2})
    assert len(fingerprint({})) == 64


def test_output_claims_hash_small_text_files_and_find_changed_ones(tmp_path: Path) -> None:
    (tmp_path / "images").mkdir()
    (tmp_path / "a.json").write_text('{"x": 1}\n', encoding="utf-8")
    (tmp_path / "images" / "b.png").write_bytes(b"\x89PNG....")
    (tmp_path / ".a.json.123.tmp").write_text("partial", encoding="utf-8")
    files = files_under(tmp_path) + [tmp_path / "never-written.json"]
    claims = describe_outputs(tmp_path, files)
    assert set(claims) == {"a.json", "images/b.png"}
    assert "sha256" in claims["a.json"] and "sha256" not in claims["images/b.png"]
    assert "sha256" in describe_outputs(tmp_path, files, hash_all=True)["images/b.png"]
    assert changed_outputs(tmp_path, claims) == []
    (tmp_path / "a.json").write_text('{"x": 2}\n', encoding="utf-8")  # same size, other bytes
    (tmp_path / "images" / "b.png").unlink()
    assert sorted(changed_outputs(tmp_path, claims)) == ["a.json", "images/b.png"]
    assert files_under(tmp_path / "nowhere") == []
