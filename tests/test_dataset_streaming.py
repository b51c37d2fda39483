"""stats, evaluate and the Hugging Face copy go through an export item by item: memory does not grow with the items,
outputs as before."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from helpers import ROOT
from sample_outputs import write_sample_export

from dataset.cli import main
from dataset.mera.document import PROVENANCE_NAME, SPLIT_FILES, load_document
from dataset.publish.plots import rows_from_document
from ruclevr.jsonstream import LazyList, write_json


def write_large_export(source: Path, folder: Path, copies: int) -> int:
    """``copies`` times the test items of ``source`` (new ids, their provenance beside them, in id order);
    the item count. Written a line at a time in the layout export writes."""
    document = load_document(source)
    shots, test = document.items("shots"), document.items("test")
    folder.mkdir(parents=True)
    for image in (source / "samples").iterdir():
        (folder / "samples").mkdir(exist_ok=True)
        (folder / "samples" / image.name).write_bytes(image.read_bytes())
    next_id = max(item["meta"]["id"] for item in shots) + 1
    test_items, records = [], [document.provenance[item["meta"]["id"]] for item in shots]
    with open(folder / SPLIT_FILES["test"], "w", encoding="utf-8") as items_file, \
            open(folder / "records.tmp", "w", encoding="utf-8") as records_file:
        items_file.write('{\n  "data": [')
        records_file.write("".join(",\n    " + json.dumps(record, ensure_ascii=False) for record in records))
        for _ in range(copies):
            for item in test:
                copied = dict(item, meta=dict(item["meta"], id=next_id))
                record = dict(document.provenance[item["meta"]["id"]], id=next_id)
                items_file.write(("\n    " if next_id == len(shots) + 1 else ",\n    ") + json.dumps(copied, ensure_ascii=False))
                records_file.write(",\n    " + json.dumps(record, ensure_ascii=False))
                next_id += 1
        items_file.write("\n  ]\n}\n")
    test_count = next_id - len(shots) - 1
    (folder / SPLIT_FILES["shots"]).write_text(json.dumps({"data": shots}, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    body = (folder / "records.tmp").read_text(encoding="utf-8").removeprefix(",")
    info = dict(document.info, counts=dict(document.info.get("counts", {}), test=test_count))
    head = json.dumps({"info": info, "provenance": []}, ensure_ascii=False, indent=2).removesuffix("[]\n}")
    (folder / PROVENANCE_NAME).write_text(head + "[" + body + "\n  ]\n}\n", encoding="utf-8")
    (folder / "records.tmp").unlink()
    with open(folder / "predictions.jsonl", "w", encoding="utf-8") as predictions:
        for item_id in range(1, next_id, 3):
            predictions.write(json.dumps({"id": item_id, "prediction": "да"}, ensure_ascii=False) + "\n")
    del test_items
    return test_count


# Runs ``python -m dataset ARGV`` and reports the process's own peak resident memory (VmHWM): the
# rusage of a child also counts its parent's memory up to the exec, here all of pytest.
MEASURED_RUN = """
import atexit, runpy, sys
def report():
    with open("/proc/self/status") as status:
        print(next(line.split()[1] for line in status if line.startswith("VmHWM:")), file=sys.stderr)
atexit.register(report)
sys.argv = ["dataset", *sys.argv[1:]]
runpy.run_module("dataset", run_name="__main__", alter_sys=True)
"""


def peak_rss_mb(argv: list[str]) -> float:
    """Peak resident memory of ``python -m dataset ARGV`` run from this tree, in MB."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    result = subprocess.run([sys.executable, "-c", MEASURED_RUN, *argv], cwd=ROOT, env=environment, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return int(result.stderr.split()[-1]) / 1024


@pytest.fixture(scope="module")
def exports(tmp_path_factory):
    """The same export at three sizes: about 340, 10,000 and 41,000 test items."""
    folder = tmp_path_factory.mktemp("streaming")
    source = write_sample_export(folder / "source", n_scenes=8, shots=3)
    return {copies: (folder / f"x{copies}", write_large_export(source, folder / f"x{copies}", copies)) for copies in (10, 300, 1200)}


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="peak memory is read from /proc (Linux)")
@pytest.mark.parametrize("command", ["stats", "evaluate"])
def test_memory_stays_flat_however_many_items(exports, command, tmp_path):
    peaks = {}
    for copies in (300, 1200):  # both fill the reader's buffers (a few MB)
        folder, count = exports[copies]
        argv = [command, "--data", str(folder), "--out", str(tmp_path / f"{command}-{copies}.json")]
        if command == "evaluate":
            argv += ["--predictions", str(folder / "predictions.jsonl")]
        peaks[count] = peak_rss_mb(argv)
    (small, small_peak), (large, large_peak) = sorted(peaks.items())
    assert large > 3.9 * small  # four times the items (their files: about 40 MB against 10 MB) ...
    # ... and the predictions, kept as {id: answer}, plus 9 bytes an item for the scores written out:
    # about a MB. Loading the export whole (as before) took about 130 MB more.
    assert large_peak - small_peak < 8, peaks


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="peak memory is read from /proc (Linux)")
def test_hf_copy_memory_stays_flat_however_many_items(exports, tmp_path):
    peaks = {}
    for copies in (300, 1200):
        folder, count = exports[copies]
        peaks[count] = peak_rss_mb(["hf", "--data", str(folder), "--out", str(tmp_path / f"hf-{copies}"), "--quiet"])
    (small, small_peak), (large, large_peak) = sorted(peaks.items())
    assert large > 3.9 * small
    loaded = pq.ParquetFile(next((tmp_path / "hf-1200" / "data").glob("test-*.parquet"))).metadata.num_rows
    assert loaded == large
    # The survey's counters and the parquet writer's row-group records (a few hundred bytes a group of
    # 100 items) grow a little; loading the export whole, as before, took about 130 MB more.
    assert large_peak - small_peak < 12, peaks


def test_hf_copy_of_a_streamed_export_equals_that_of_the_export_in_memory(exports, tmp_path):
    from dataset.publish.hf import write_hf_copy
    from dataset.publish.plots import write_card_plots

    folder, _ = exports[10]
    assert main(["hf", "--data", str(folder), "--out", str(tmp_path / "streamed")]) == 0
    document = load_document(folder)
    plots = write_card_plots(rows_from_document(document), tmp_path / "loaded")  # every row held in a list
    write_hf_copy(document, tmp_path / "loaded", plots=plots)
    streamed = sorted(path.relative_to(tmp_path / "streamed") for path in (tmp_path / "streamed").rglob("*") if path.is_file())
    assert len(streamed) == 7
    for relative in streamed:
        assert (tmp_path / "streamed" / relative).read_bytes() == (tmp_path / "loaded" / relative).read_bytes(), relative


def test_a_missing_image_stops_the_streamed_copy_before_anything_is_written(exports, tmp_path, capsys):
    folder, _ = exports[10]
    broken = tmp_path / "export"
    shutil.copytree(folder, broken)
    last = sorted((broken / "samples").iterdir())[-1]
    last.unlink()
    assert main(["hf", "--data", str(broken), "--out", str(tmp_path / "hf")]) == 2
    error = capsys.readouterr().err
    assert f"{last} does not exist" in error and error.count("\n") == 1
    assert not (tmp_path / "hf").exists()


def test_evaluate_writes_every_item_score_in_order(exports, tmp_path):
    folder, count = exports[10]
    out = tmp_path / "results.json"
    assert main(["evaluate", "--data", str(folder), "--predictions", str(folder / "predictions.jsonl"), "--out", str(out)]) == 0
    results = json.loads(out.read_text(encoding="utf-8"))["results"]
    test_ids = [item["meta"]["id"] for item in load_document(folder).items("test")]
    assert [score["id"] for score in results["predictions"]["items"]] == test_ids and results["items"] == count
    assert sum(score["exact_match"] for score in results["predictions"]["items"]) == results["predictions"]["overall"]["correct"]


def test_stats_of_a_streamed_export_equal_those_of_the_export_in_memory(exports, tmp_path):
    from dataset.mera.stats import compute_statistics

    folder, _ = exports[10]
    out = tmp_path / "stats.json"
    assert main(["stats", "--data", str(folder), "--out", str(out)]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["statistics"] == compute_statistics(load_document(folder))


def test_provenance_out_of_order_is_still_joined_by_id(exports, tmp_path):
    from dataset.mera.document import stream_document

    folder, _ = exports[10]
    raw = json.loads((folder / PROVENANCE_NAME).read_text(encoding="utf-8"))
    shuffled = tmp_path / "export"
    shuffled.mkdir()
    for name in SPLIT_FILES.values():
        (shuffled / name).write_bytes((folder / name).read_bytes())
    shutil.copytree(folder / "samples", shuffled / "samples")
    raw["provenance"].reverse()
    (shuffled / PROVENANCE_NAME).write_text(json.dumps(raw, ensure_ascii=False, indent=2), encoding="utf-8")
    streamed = [(item["meta"]["id"], record["id"]) for item, record in stream_document(shuffled).records("test")]
    assert streamed and all(item_id == record_id for item_id, record_id in streamed)


class Numbers(LazyList):
    def __init__(self, count: int) -> None:
        self.count = count

    def __iter__(self):
        return ({"n": n, "half": [n / 2]} for n in range(self.count))


@pytest.mark.parametrize("count", [0, 1, 3])
def test_write_json_writes_what_json_dumps_writes(tmp_path, count):
    value = {"info": {"name": "ёж", "nested": {"list": Numbers(count), "after": [1, {"x": None}]}}, "top": Numbers(count)}
    plain = {"info": {"name": "ёж", "nested": {"list": list(Numbers(count)), "after": [1, {"x": None}]}}, "top": list(Numbers(count))}
    write_json(tmp_path / "out.json", value)
    assert (tmp_path / "out.json").read_text(encoding="utf-8") == json.dumps(plain, ensure_ascii=False, indent=2) + "\n"
