"""Issue 38 (round three of the hostile sweep): outputs beside ``--out``, symlinked folders, the
predictions reader, stage locks, seeds in stage arguments, and bounds of the newer readers.

Each refusal must be exit status 2 with one line on stderr naming the input, no traceback, and no
file written, changed or deleted in the watched folders (a symlink's target among them).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import zipfile
from pathlib import Path

import pytest
import test_probe_matrix
from helpers import run_stage
from test_probe_matrix import Inputs, samples_file, tree

from ruclevr.cli import UsageError

inputs = test_probe_matrix.inputs  # the probe matrix's fixture: tiny stage outputs and an export


def refused(argv: list[object], capsys, expect: str, watched: list[Path]) -> str:
    """Run ``argv``; it must end with status 2 and one line holding ``expect``, nothing changed in ``watched``."""
    capsys.readouterr()
    before = [tree(folder) for folder in watched]
    status = run_stage(*argv)
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if line.strip() and "\r" not in line]
    assert status == 2, (argv, status, captured.err[-2000:])
    assert len(lines) == 1 and "Traceback" not in captured.err, captured.err
    assert expect in lines[0], lines[0]
    assert [tree(folder) for folder in watched] == before, "the probe wrote, changed or deleted files"
    return lines[0]


def export_argv(i: Inputs, out: Path, *extra: object) -> list[object]:
    return ["dataset", "export", "--questions", i.kept, "--scenes", i.scenes / "scenes.json", "--shots", "1",
            "--out", out, *extra]


def photo_folder(tmp_path: Path) -> Path:
    """Somebody's photos: what a symbolic link in an output may point at."""
    photos = tmp_path / "photos"
    photos.mkdir()
    (photos / "holiday.png").write_bytes(b"a holiday")
    return photos


# -- 1. files destroyed outside the output ------------------------------------------------------------

def test_export_overwrite_never_cleans_through_a_symlinked_samples_folder(inputs, tmp_path, capsys) -> None:
    out = tmp_path / "export"
    shutil.copytree(inputs.export, out)
    shutil.rmtree(out / "samples")
    (out / "samples").symlink_to(photo_folder(tmp_path))
    refused(export_argv(inputs, out, "--overwrite"), capsys, "symbolic link", [tmp_path, inputs.root])
    assert (tmp_path / "photos" / "holiday.png").read_bytes() == b"a holiday"


def test_public_out_never_cleans_through_a_symlinked_samples_folder(inputs, tmp_path, capsys) -> None:
    public = tmp_path / "public"
    public.mkdir()
    (public / "samples").symlink_to(photo_folder(tmp_path))
    refused(export_argv(inputs, tmp_path / "export", "--public-out", public), capsys, "symbolic link",
            [tmp_path, inputs.root])


def test_gallery_never_cleans_through_symlinked_thumbnails(inputs, tmp_path, capsys) -> None:
    (tmp_path / "G_files").mkdir()
    (tmp_path / "G_files" / "thumbs").symlink_to(photo_folder(tmp_path))
    refused(["dataset", "gallery", "--data", inputs.export, "--out", tmp_path / "G.html"], capsys, "symbolic link",
            [tmp_path, inputs.root])


def test_public_out_refuses_an_existing_export(inputs, tmp_path, capsys) -> None:
    other = tmp_path / "other-build-mera"
    shutil.copytree(inputs.export, other)
    refused(export_argv(inputs, tmp_path / "export", "--public-out", other), capsys, "holds an export",
            [tmp_path, inputs.root])


@pytest.mark.parametrize("where,relation", [("out/public", "lies inside --out"), (".", "contains --out"),
                                            ("images", "--images")])
def test_public_out_lies_apart_from_out_and_inputs(inputs, tmp_path, capsys, where, relation) -> None:
    out = tmp_path / "out"
    public = {"out/public": out / "public", ".": tmp_path, "images": inputs.scenes / "images"}[where]
    refused(export_argv(inputs, out, "--public-out", public), capsys, relation, [tmp_path, inputs.root])


def test_hf_never_puts_the_private_copy_inside_the_public_folder(inputs, tmp_path, capsys) -> None:
    public = tmp_path / "PUBX"
    refused(["dataset", "hf", "--data", inputs.export, "--out", public / "private", "--public-out", public],
            capsys, "contains --out", [tmp_path, inputs.root])


def test_submission_never_replaces_its_input(inputs, tmp_path, capsys) -> None:
    samples = samples_file(inputs)
    refused(["dataset", "submission", "--samples", samples, "--out", samples], capsys, "--samples", [inputs.root])
    mera = tmp_path / "mera"
    shutil.copytree(inputs.export, mera)
    refused(["dataset", "submission", "--samples", samples, "--out", mera / "test.json"], capsys,
            "not a submission zip", [tmp_path, inputs.root])


def test_logs_zip_takes_regular_files_only(inputs, tmp_path, capsys) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copyfile(samples_file(inputs), logs / samples_file(inputs).name)
    secret = tmp_path / "secret.txt"
    secret.write_text("machine secrets\n", encoding="utf-8")
    (logs / "results_2026.json").symlink_to(secret)
    (logs / "results_fifo.json").parent.mkdir(exist_ok=True)
    os.mkfifo(logs / "results_fifo.json")
    assert run_stage("dataset", "submission", "--samples", logs, "--out", tmp_path / "sub.zip") == 0
    with zipfile.ZipFile(tmp_path / "sub.zip") as archive, \
            zipfile.ZipFile(io.BytesIO(archive.read("logs_public.zip"))) as packed:
        assert packed.namelist() == [samples_file(inputs).name]


def test_a_newline_in_the_build_path_publishes_no_machine_path(tmp_path) -> None:
    from ruclevr.paths import relative_paths

    base = tmp_path / "my\nbuild"
    record = relative_paths({"out": str(base / "questions.json"), "items": [str(base / "render")]}, base)
    assert record == {"out": "questions.json", "items": ["render"]}


# -- 2. silently wrong ------------------------------------------------------------------------------

def first_test_id(i: Inputs) -> int:
    return json.loads((i.export / "test.json").read_text(encoding="utf-8"))["data"][0]["meta"]["id"]


@pytest.mark.parametrize("line,expect", [
    ('{"id": %d, "id": %d, "prediction": "да"}', "line 1"),
    ('{"id": %d, "prediction": "caf\\ud800", "x": %d}', "line 1"),
])
def test_a_refused_first_line_is_an_error_not_another_format(inputs, tmp_path, capsys, line, expect) -> None:
    ident = first_test_id(inputs)
    predictions = tmp_path / "pred.jsonl"
    predictions.write_text(line % (ident, ident) + "\n", encoding="utf-8")
    message = refused(["dataset", "evaluate", "--data", inputs.export, "--predictions", predictions], capsys, expect,
                      [tmp_path, inputs.root])
    assert str(predictions) in message


def test_a_single_line_submission_over_a_mebibyte_is_read(inputs, tmp_path) -> None:
    from dataset.evaluation.evaluate import read_predictions

    ident = first_test_id(inputs)
    long_answer = "да " * 600_000
    path = tmp_path / "ruCLEVR.json"
    path.write_text(json.dumps({"data": {"test": [{"outputs": long_answer, "meta": {"id": ident}}]}}), encoding="utf-8")
    assert path.stat().st_size > (1 << 20) and path.read_bytes().count(b"\n") == 0
    assert read_predictions(path) == {ident: long_answer}


def test_predictions_must_be_a_regular_file(inputs, tmp_path, capsys) -> None:
    fifo = tmp_path / "pred.jsonl"
    os.mkfifo(fifo)
    refused(["dataset", "evaluate", "--data", inputs.export, "--predictions", fifo], capsys, "not a regular file",
            [inputs.root])


def test_a_second_render_into_a_held_folder_is_refused(tmp_path, capsys) -> None:
    from ruclevr.io import hold_stage_output

    out = tmp_path / "render"
    with hold_stage_output(out, "dir"):
        refused(["render", "--n", "1", "--width", "16", "--height", "12", "--device", "cpu", "--out", out], capsys,
                "is being written by another run", [tmp_path])


@pytest.mark.parametrize("stage", ["questions", "translate", "filter"])
def test_a_second_text_stage_into_a_held_output_is_refused(inputs, tmp_path, capsys, stage) -> None:
    from ruclevr.io import hold_stage_output

    out = tmp_path / "out.json"
    argv = {"questions": ["questions", "--scenes", inputs.scenes / "scenes.json", "--out", out, "--quiet"],
            "translate": ["translate", "--questions", inputs.questions, "--out", out],
            "filter": ["filter", "--in", inputs.translated, "--out", out, "--backend", "morph"]}[stage]
    with hold_stage_output(out, "file"):
        refused(argv, capsys, "is being written by another run", [inputs.root])
    assert run_stage(*argv) == 0 and out.exists()
    assert not [path for path in tmp_path.iterdir() if path.name.endswith(".lock")], "the lock folder is left"


def test_a_seed_in_stage_arguments_is_refused(tmp_path, capsys) -> None:
    seed = tmp_path / "s1.seed"
    seed.write_text("12345678901234567890123\n", encoding="utf-8")
    refused(["dataset", "build", "--n", "2", "--shots", "1", "--seed", "0", "--out", tmp_path / "build",
             "--render-args", f"--seed-file {seed}"], capsys, "a build has one seed", [tmp_path])


def test_a_fifo_seed_file_is_refused(tmp_path, capsys) -> None:
    fifo = tmp_path / "s.seed"
    os.mkfifo(fifo)
    refused(["dataset", "seed", "verify", "--seed-file", fifo, "--data", tmp_path], capsys, "not a regular file", [tmp_path])


# -- 3. bounds --------------------------------------------------------------------------------------

def test_incremental_reader_refuses_a_string_as_it_grows() -> None:
    from ruclevr import jsonincremental
    from ruclevr.jsonlimits import JsonLimitError

    def items(data: bytes, limit: int) -> list:
        handle = jsonincremental.StringBound(io.BytesIO(data), limit)
        return list(jsonincremental.ijson.basic_parse(handle, buf_size=64))

    escaped = b'{"a": "' + b'\\"x\\\\' * 40 + b'", "b": "' + b"y" * 150 + b'"}'
    assert len(items(escaped, 200)) == 6  # quotes escaped or not, short strings pass
    with pytest.raises(JsonLimitError, match="longer than the limit of 200 bytes"):
        items(b'{"a": "' + b"x" * 1000 + b'"}', 200)
    with pytest.raises(JsonLimitError):
        items(b'{"a": "' + b'\\"' * 500 + b'"}', 200)


def test_string_bound_is_the_default_of_every_reader(monkeypatch) -> None:
    from ruclevr import jsonincremental
    from ruclevr.jsonlimits import JsonLimitError

    monkeypatch.setattr(jsonincremental, "MAX_ITEM_BYTES", 1000)
    long = b"x" * 5000
    data = b'{"data": {"test": [{"outputs": "' + long + b'"}]}}'
    with pytest.raises(JsonLimitError, match="limit of 1000"):
        list(jsonincremental.nested_list_items(io.BytesIO(data), "data"))
    with pytest.raises(JsonLimitError, match="limit of 1000"):  # within one read: checked once built
        list(jsonincremental.members(io.BytesIO(b'{"info": "' + long + b'", "questions": []}'), "questions", True))
    with pytest.raises(JsonLimitError, match="limit of 1000"):
        list(jsonincremental.top_list_items(io.BytesIO(b'[{"a": "' + long + b'"}]')))


def test_usage_error_is_what_the_helpers_raise(tmp_path) -> None:
    from ruclevr.paths import check_apart_from, regular_file

    with pytest.raises(UsageError, match="is not a regular file"):
        regular_file(tmp_path, "--x")
    with pytest.raises(UsageError, match="contains --in"):
        check_apart_from(tmp_path, {"--in": tmp_path / "a" / "b.json"})
    check_apart_from(tmp_path / "out", {"--in": tmp_path / "in"})


def test_verify_and_a_legible_only_render_use_one_rule() -> None:
    """An unsure but right reading passes both; a wrong one fails both (render accepts what verify accepts)."""
    import numpy as np

    from render.legibility import ObjectReading, legibility_problems, misread_objects

    obj = {"shape": "cube", "size": "small", "material": "metal", "color": "red"}

    class Reader:
        def __init__(self, color: str, sure: float) -> None:
            self.color, self.sure = color, sure

        def read(self, image, mask, count):
            return [ObjectReading(1, {**obj, "color": self.color}, dict.fromkeys(obj, self.sure))]

    image, mask, scene = np.zeros((4, 4, 3), np.uint8), np.zeros((4, 4), np.uint8), {"objects": [obj]}
    for reader, expected in ((Reader("red", 0.89), 0), (Reader("blue", 0.95), 1)):
        assert len(legibility_problems(scene, image, mask, reader)) == expected  # type: ignore[arg-type]
        assert misread_objects(scene, image, mask, reader) == legibility_problems(scene, image, mask, reader)  # type: ignore[arg-type]


def test_like_of_a_release_with_string_settings_is_one_line(inputs, tmp_path, capsys) -> None:
    release = tmp_path / "release"
    shutil.copytree(inputs.export, release / "mera")
    (release / "build.json").write_text(json.dumps({"info": {"settings": {"render": {"width": "480"}}, "seed": 3}}),
                                        encoding="utf-8")
    refused(["dataset", "build", "--like", release / "mera", "--seed", "5", "--out", tmp_path / "new"], capsys,
            "render.width", [tmp_path, inputs.root])


def test_aggregation_memory_does_not_grow_with_distinct_answers_squared() -> None:
    import tracemalloc

    from dataset.annotate.aggregate import Observations, dawid_skene_answers, glad_answers
    from dataset.annotate.answer_classes import MAX_CLASSES

    table = {item: {f"a{k}": f"free text {item} {k}" for k in range(20)} for item in range(200)}
    table[0] = {f"a{k}": "да" for k in range(20)}
    assert len(Observations.of(table).classes) <= MAX_CLASSES
    tracemalloc.start()
    answers = dawid_skene_answers(table, {0: "да"})
    glad = glad_answers(table, {0: "да"})
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert answers[0] == glad[0] == "да" and answers[1] is None
    assert peak < 64 << 20, peak  # 4,000 distinct answers: 4,000² × 20 annotators would be 2.5 GB


def test_the_judge_formats_an_instruction_within_the_sandbox_limits() -> None:
    from dataset.evaluation.judge import prompt_of

    item = {"instruction": "{question:>300000000}", "inputs": {"question": "Сколько?", "image": "samples/a.png"},
            "meta": {"id": 7}}
    with pytest.raises(UsageError, match="item 7: its instruction"):
        prompt_of(item)
    assert prompt_of({**item, "instruction": "<image>{question}"}) == "<image>Сколько?"


def bomb_png(path: Path, side: int = 100_000) -> Path:
    """A PNG of a few dozen bytes that declares ``side`` × ``side`` pixels."""
    import struct
    import zlib

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", side, side, 1, 0, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\0" * 64))
                     + chunk(b"IEND", b""))
    return path


def test_a_bomb_png_as_watermark_is_one_line(inputs, tmp_path, capsys) -> None:
    refused(export_argv(inputs, tmp_path / "export", "--public-out", tmp_path / "public", "--watermark-image",
                        bomb_png(tmp_path / "mark.png")), capsys, "mark.png", [tmp_path, inputs.root])


def test_leak_check_counts_a_bomb_and_skips_a_fifo(inputs, tmp_path, capsys) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    bomb_png(corpus / "bomb.png")
    os.mkfifo(corpus / "pipe.jsonl")
    (corpus / "deep.json").write_bytes(b"[" * 100_000 + b"]" * 100_000)
    capsys.readouterr()
    assert run_stage("dataset", "leak-check", "--data", inputs.export, "--corpus", corpus) == 0
    summary = capsys.readouterr().out.splitlines()[-1]
    assert "read 2 files" in summary and "(2 unreadable)" in summary, summary


@pytest.mark.parametrize("value,expect", [("1" * 5000, "more than 40 digits"), (".inf", "not finite")])
def test_a_family_file_holds_yaml_numbers_to_the_json_limits(tmp_path, capsys, value, expect) -> None:
    family = tmp_path / "family.yaml"
    family.write_text(f"id: x\nwhen: 2024-13-45\nn: {value}\n", encoding="utf-8")
    capsys.readouterr()
    assert run_stage("questions", "validate", family) == 2
    error = capsys.readouterr().err
    assert expect in error and "family.yaml:3" in error and "Traceback" not in error, error


def test_an_invalid_yaml_date_stays_a_string() -> None:
    import yaml

    from ruclevr.jsonlimits import limited_yaml_loader

    assert yaml.load("when: 2024-13-45\nday: 2024-01-02\n", Loader=limited_yaml_loader(yaml.SafeLoader)) == {
        "when": "2024-13-45", "day": "2024-01-02"}


def test_validate_realise_is_bounded(tmp_path, capsys) -> None:
    refused(["dataset", "families", "validate", Path(__file__).parents[1] / "questions" / "families", "--realise", "1000000000"], capsys, "--realise 1000000000: at most", [tmp_path])


# -- 4. tracebacks ------------------------------------------------------------------------------------

@pytest.mark.parametrize("rows,expect", [
    ("", "no answers"),
    ("1" * 5000 + "\ta\tда\n", "task id must be an integer"),
    ("-3\ta\tда\n", "task id must be an integer"),
])
def test_crowd_tsv_ids_and_empty_files_are_one_line(inputs, tmp_path, capsys, rows, expect) -> None:
    answers = tmp_path / "crowd.tsv"
    answers.write_text("task_id\tannotator\tanswer\n" + rows, encoding="utf-8")
    refused(["dataset", "annotate", "import", "--data", inputs.export, "--answers", answers, "--out", tmp_path / "out"],
            capsys, expect, [tmp_path, inputs.root])


def lm_eval_samples(inputs: Inputs, folder: Path, raw_id: str, answer: str = '"да"') -> Path:
    path = folder / "samples_ruclevr_2026-01-31T10-00-00.000001.jsonl"
    folder.mkdir(exist_ok=True)
    path.write_text('{"doc": {"meta": {"id": ' + raw_id + '}}, "filtered_resps": [' + answer + ']}\n', encoding="utf-8")
    return path


@pytest.mark.parametrize("raw_id,answer,expect", [("1" * 5000, '"да"', "line 1"), ("1", '"caf\\ud800"', "line 1")])
def test_submission_refuses_hostile_samples_in_one_line(inputs, tmp_path, capsys, raw_id, answer, expect) -> None:
    samples = lm_eval_samples(inputs, tmp_path / "logs", raw_id, answer)
    refused(["dataset", "submission", "--samples", samples, "--out", tmp_path / "sub.zip"], capsys, expect,
            [tmp_path, inputs.root])


def submission_zip(path: Path, body: bytes, method: int = zipfile.ZIP_DEFLATED, flag_bits: int = 0,
                   file_size: int | None = None) -> Path:
    """A submission zip holding ``body`` as ruCLEVR.json, its header's method, flags or size rewritten."""
    import struct

    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(zipfile.ZipInfo("ruCLEVR.json"), body, compress_type=zipfile.ZIP_DEFLATED)
    data = bytearray(path.read_bytes())
    central = data.rfind(b"PK\x01\x02")
    local = 0
    for offset, field in ((8, flag_bits), (10, method)):  # the central directory's flags and method
        if field:
            struct.pack_into("<H", data, central + offset, field)
            struct.pack_into("<H", data, local + offset - 2, field)
    if file_size is not None:
        struct.pack_into("<I", data, central + 24, file_size)
        struct.pack_into("<I", data, local + 22, file_size)
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("kind,expect", [("encrypted", "is encrypted"), ("method 99", "compressed by method 99"),
                                         ("declares 900 MB", "zip bomb")])
def test_a_hostile_submission_zip_is_one_line(inputs, tmp_path, capsys, kind, expect) -> None:
    body = json.dumps({"data": {"test": [{"outputs": "да", "meta": {"id": first_test_id(inputs)}}]}}).encode()
    settings = {"encrypted": {"flag_bits": 1}, "method 99": {"method": 99}, "declares 900 MB": {"file_size": 900 << 20}}
    archive = submission_zip(tmp_path / "sub.zip", body, **settings[kind])
    refused(["dataset", "evaluate", "--data", inputs.export, "--predictions", archive], capsys, expect,
            [tmp_path, inputs.root])


@pytest.mark.parametrize("where,expect", [("export copy", "not a filtered copy"), ("inside --out", "lies inside --out"),
                                          ("symlinked samples", "symbolic link")])
def test_write_filtered_is_checked_like_out(inputs, tmp_path, capsys, where, expect) -> None:
    answers = test_probe_matrix.answers_file(inputs)
    filtered = {"export copy": tmp_path / "mera", "inside --out": tmp_path / "report" / "filtered",
                "symlinked samples": tmp_path / "filtered"}[where]
    if where == "export copy":
        shutil.copytree(inputs.export, filtered)
    if where == "symlinked samples":
        filtered.mkdir()
        (filtered / "samples").symlink_to(photo_folder(tmp_path))
    refused(["dataset", "annotate", "import", "--data", inputs.export, "--answers", answers, "--out", tmp_path / "report",
             "--write-filtered", filtered], capsys, expect, [tmp_path, inputs.root])


@pytest.mark.parametrize("stage", ["questions", "filter", "dataset export", "annotate import", "crowd tsv"])
def test_a_fifo_where_a_file_is_read_is_one_line_not_a_hang(inputs, tmp_path, capsys, stage) -> None:
    fifo = tmp_path / ("input.tsv" if stage == "crowd tsv" else "input.json")
    os.mkfifo(fifo)
    argv = {"questions": ["questions", "--scenes", fifo, "--out", tmp_path / "q.json", "--quiet"],
            "filter": ["filter", "--in", fifo, "--out", tmp_path / "k.json", "--backend", "morph"],
            "dataset export": export_argv(inputs, tmp_path / "out")[:3] + [fifo] + export_argv(inputs, tmp_path / "out")[4:],
            "annotate import": ["dataset", "annotate", "import", "--data", inputs.export, "--answers", fifo, "--out",
                                tmp_path / "out"]}[stage.replace("crowd tsv", "annotate import")]
    refused(argv, capsys, "not a regular file", [tmp_path, inputs.root])


def test_an_empty_samples_file_makes_no_submission(inputs, tmp_path, capsys) -> None:
    samples = tmp_path / "logs" / "samples_ruclevr_2026-01-31T10-00-00.000001.jsonl"
    samples.parent.mkdir()
    samples.write_text("\n", encoding="utf-8")
    refused(["dataset", "submission", "--samples", samples, "--out", tmp_path / "sub.zip"], capsys, "holds no logged samples",
            [tmp_path, inputs.root])


def test_a_public_copy_killed_before_its_marker_is_completed_by_a_rerun(inputs, tmp_path) -> None:
    out, public = tmp_path / "export", tmp_path / "public"
    argv = export_argv(inputs, out, "--public-out", public)
    assert run_stage(*argv) == 0
    (public / "watermark.json").unlink()  # as a run killed after copying the JSON files leaves it
    assert run_stage(*argv) == 0 and (public / "watermark.json").is_file()


def test_render_merge_waits_for_no_shard(tmp_path, capsys) -> None:
    from ruclevr.io import hold_stage_output

    out = tmp_path / "render"
    out.mkdir()
    with hold_stage_output(out, "dir", shared=True):  # a shard still rendering into it
        refused(["render", "merge", out], capsys, "is being written by another run", [tmp_path])
