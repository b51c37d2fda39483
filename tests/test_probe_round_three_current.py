"""Issue 38 on the current code (round three, again): the findings the first pass left without a test
of their own, and what the sweep over the newer arguments (benchmarks/hostile_sweep.py) found.

Each refusal must be exit status 2 with one line on stderr naming the input, no traceback, and no
file written, changed or deleted in the watched folders.
"""

from __future__ import annotations

import os
import random
import tracemalloc
from pathlib import Path

import pytest
import test_probe_matrix
from test_probe_round_three import export_argv, photo_folder, refused

inputs = test_probe_matrix.inputs  # the probe matrix's fixture: tiny stage outputs and an export


# -- unbounded: agreement over free-text answers --------------------------------------------------------

def free_text_table(items: int, annotators: int, seed: int = 0) -> dict[int, dict[str, str]]:
    """Every annotator answers every item with a free text (few repeat): a crowd that agrees on nothing."""
    rng = random.Random(seed)
    return {item: {f"w{person}": "".join(rng.choice("абвгдежзик") for _ in range(7)) for person in range(annotators)}
            for item in range(items)}


def test_krippendorff_alpha_is_the_packages_value() -> None:
    """The counting formula gives what the krippendorff package gives, ties, single answers and all."""
    import krippendorff
    import numpy as np

    from dataset.annotate.agreement import krippendorff_alpha

    rng = random.Random(3)
    for _ in range(30):
        people = [f"p{k}" for k in range(rng.randint(2, 6))]
        table = {item: {person: rng.choice("abcd"[:rng.randint(1, 4)]) for person in people if rng.random() < 0.8}
                 for item in range(rng.randint(1, 12))}
        codes: dict[str, int] = {}
        data = np.full((len(people), len(table)), np.nan)
        for column, answers in enumerate(table.values()):
            for person, answer in answers.items():
                data[people.index(person), column] = codes.setdefault(answer, len(codes))
        pairable = np.sum(~np.isnan(data), axis=0) >= 2
        expected = None
        if len(set(data[:, pairable][~np.isnan(data[:, pairable])])) >= 2:
            expected = float(krippendorff.alpha(reliability_data=data[:, pairable], level_of_measurement="nominal"))
        found = krippendorff_alpha(table, people)
        assert (found is None) == (expected is None), (table, found, expected)
        if expected is not None:
            assert found == pytest.approx(expected, abs=1e-9)


def test_agreement_memory_is_linear_in_answers() -> None:
    """2,000 free-text answers (100 annotators, 20 items: the issue's 47 KB TSV) in a few MB; the
    package's items × answers × answers array was 640 MB of it, 1.97 GB at the command's peak."""
    from dataset.annotate.agreement import krippendorff_alpha

    table = free_text_table(20, 100)
    tracemalloc.start()
    alpha = krippendorff_alpha(table, [f"w{person}" for person in range(100)])
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert alpha is not None and abs(alpha) < 0.01
    assert peak < 8 << 20, peak


# -- leftovers: a killed text stage's lock folder -------------------------------------------------------

@pytest.mark.parametrize("stage", ["questions", "filter"])
def test_a_killed_text_stages_lock_folder_holds_nothing_back(inputs, tmp_path, stage) -> None:
    """A run killed while it writes leaves ``.NAME.lock`` empty and unheld (flock ends with the process):
    the next run takes it, writes its output and removes it."""
    from helpers import run_stage

    out = tmp_path / "out.json"
    (tmp_path / ".out.json.lock").mkdir()  # what SIGKILL leaves
    argv = {"questions": ["questions", "--in", inputs.scenes / "scenes.json", "--out", out, "--quiet"],
            "filter": ["filter", "--in", inputs.translated, "--out", out, "--backend", "morph"]}[stage]
    assert run_stage(*argv) == 0 and out.is_file()
    assert not (tmp_path / ".out.json.lock").exists()


# -- published what should stay private: a newline in the build path ---------------------------------

def test_an_export_in_a_path_with_a_newline_publishes_no_machine_path(inputs, tmp_path) -> None:
    """The stages' records carried into provenance.json name their folders relative to the export, a
    newline in the path or not (``relative_paths`` once skipped such strings)."""
    import json
    import shutil

    from helpers import run_stage

    base = tmp_path / "my\nbuild"
    shutil.copytree(inputs.scenes, base / "render")
    scenes = json.loads((base / "render" / "scenes.json").read_text(encoding="utf-8"))
    scenes["info"]["out"] = str(base / "render")  # as render records its folder
    (base / "render" / "scenes.json").write_text(json.dumps(scenes), encoding="utf-8")
    kept = json.loads(inputs.kept.read_text(encoding="utf-8"))
    kept["info"]["in"] = str(base / "questions_ru.json")
    (base / "kept.json").write_text(json.dumps(kept), encoding="utf-8")
    assert run_stage("dataset", "export", "--questions", base / "kept.json", "--scenes", base / "render" / "scenes.json",
                     "--shots", "1", "--out", base / "mera") == 0
    published = (base / "mera" / "provenance.json").read_text(encoding="utf-8")
    assert str(tmp_path) not in published and json.dumps(str(tmp_path))[1:-1] not in published
    assert '"out": "render"' in published and '"in": "questions_ru.json"' in published  # relative to the build


# -- found by the sweep over the newer arguments ---------------------------------------------------------

def fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("kind,expect", [("FIFO", "not a regular file"), ("5000-digit integer", "more than 40 digits")])
def test_render_settings_file_is_read_as_a_regular_file_within_the_json_limits(tmp_path, capsys, kind, expect) -> None:
    path = tmp_path / "settings.json"
    if kind == "FIFO":
        fifo(path)
    else:
        path.write_text('{"format": "ruclevr.render.settings.v1", "n": ' + "1" * 5000 + "}", encoding="utf-8")
    line = refused(["render", "--settings", path], capsys, expect, [tmp_path])
    assert str(path) in line


@pytest.mark.parametrize("kind,expect", [("FIFO", "not a regular file"), ("2 MB", "larger than 1,048,576 bytes")])
def test_a_prompt_template_is_a_bounded_regular_file(inputs, tmp_path, capsys, kind, expect) -> None:
    path = tmp_path / "prompt.j2"
    if kind == "FIFO":
        fifo(path)
    else:
        path.write_text("<image>{question}" + " " * (2 << 20), encoding="utf-8")
    watched = [tmp_path, inputs.root]
    refused(export_argv(inputs, tmp_path / "export", "--prompt", path), capsys, expect, watched)
    refused(["dataset", "build", "--n", "2", "--shots", "1", "--width", "16", "--height", "12", "--out",
             tmp_path / "build", "--prompt", path], capsys, expect, watched)


@pytest.mark.parametrize("kind,expect", [("symlink to text", "line 1: not JSON"), ("5000-digit integer", "more than 40 digits"),
                                         ("FIFO", "not a regular file")])
def test_hf_rejected_file_is_read_within_the_json_limits(inputs, tmp_path, capsys, kind, expect) -> None:
    rejected = tmp_path / "kept.rejected.jsonl"
    if kind == "FIFO":
        fifo(rejected)
    elif kind == "symlink to text":
        (tmp_path / "notes.txt").write_text("root:x:0:0:root:/root:/bin/bash\n", encoding="utf-8")
        rejected.symlink_to(tmp_path / "notes.txt")
    else:
        rejected.write_text('{"acceptability": {"score": ' + "1" * 5000 + "}}\n", encoding="utf-8")
    line = refused(["dataset", "hf", "--data", inputs.export, "--out", tmp_path / "hf", "--rejected", rejected], capsys,
                   expect, [tmp_path, inputs.root])
    assert str(rejected) in line


def test_a_gpu_probe_that_cannot_start_blender_is_one_line() -> None:
    """Under a memory cap Blender's child dies or cannot map its libraries: one line naming why, not a
    BrokenProcessPool traceback (the sweep's 1 GiB cap met it in `dataset pairs`)."""
    import subprocess
    import sys

    from helpers import ROOT

    program = ("import resource; resource.setrlimit(resource.RLIMIT_AS, (256 << 20, 256 << 20))\n"
               "from render.farm.blender_process import probe_gpu_devices_isolated\n"
               "from ruclevr.cli import run_cli\n"
               "raise SystemExit(run_cli(lambda argv: probe_gpu_devices_isolated() and 0, [], 'probe'))\n")
    result = subprocess.run([sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stderr[-2000:]
    assert result.stderr.count("\n") == 1 and "Blender could not be started to look for GPUs" in result.stderr


@pytest.mark.parametrize("folder", ["empty", "an export"])
def test_build_checks_its_family_folders_before_rendering(inputs, tmp_path, capsys, folder) -> None:
    """A --families folder the questions stage would refuse is refused by the build itself, in one line,
    before anything is rendered (it was the render stage's failure, or the questions stage's after it)."""
    import shutil

    families = tmp_path / "families"
    if folder == "empty":
        families.mkdir()
    else:
        shutil.copytree(inputs.export, families)
    refused(["dataset", "build", "--n", "2", "--shots", "1", "--width", "16", "--height", "12", "--samples", "1",
             "--families", families, "--out", tmp_path / "build"], capsys, "no family files", [tmp_path, inputs.root])


@pytest.mark.parametrize("command", ["hf", "annotate export", "annotate import", "render --graphs-only"])
def test_an_output_folder_holding_another_export_is_refused(inputs, tmp_path, capsys, command) -> None:
    """Any folder a command writes, export's aside (it replaces an export, another build's with --overwrite),
    is refused when it holds an export: writing into it would change that export."""
    import shutil

    from test_probe_matrix import answers_file

    other = tmp_path / "other-build-mera"
    shutil.copytree(inputs.export, other)
    argv = {"hf": ["dataset", "hf", "--data", inputs.export, "--out", other],
            "annotate export": ["dataset", "annotate", "export", "--data", inputs.export, "--out", other],
            "annotate import": ["dataset", "annotate", "import", "--data", inputs.export, "--answers",
                                answers_file(inputs), "--out", other],
            "render --graphs-only": ["render", "--n", "1", "--graphs-only", "--out", other]}[command]
    refused(argv, capsys, "holds an export (provenance.json)", [tmp_path, inputs.root])


# -- findings of the "Why" without a test of their own ------------------------------------------

@pytest.mark.parametrize("annotations,expect", [
    ("[]", "holds no answers"),
    ('[{"completed_by": 1, "result": []}]', "holds no answers"),
    ('[{"result": [{"type": "textarea", "value": {"text": ["да"]}}]}]', "no completed_by user"),
    ('[{"completed_by": 1, "result": [{"type": "textarea", "value": {"text": [[]]}}]}]', "not text"),
    ('[{"completed_by": 1, "result": [{"type": "choices", "value": {"choices": ["да"]}}]}]', "not text"),
    ('{}', "not a Label Studio task"),
])
def test_odd_label_studio_shapes_are_one_line(inputs, tmp_path, capsys, annotations, expect) -> None:
    """Label Studio exports of odd shapes (no answers, no user, a choices result) once ended in numpy's
    'zero-size array' traceback; each is one line naming the file."""
    import json

    ident = json.loads((inputs.export / "test.json").read_text(encoding="utf-8"))["data"][0]["meta"]["id"]
    export = tmp_path / "label-studio.json"
    export.write_text(f'[{{"data": {{"ruclevr_id": {ident}}}, "annotations": {annotations}}}]', encoding="utf-8")
    line = refused(["dataset", "annotate", "import", "--data", inputs.export, "--answers", export, "--out", tmp_path / "out"],
                   capsys, expect, [tmp_path, inputs.root])
    assert str(export) in line


def test_like_with_a_seed_file_in_stage_arguments_is_refused(inputs, tmp_path, capsys) -> None:
    """`build --like SB --seed 1 --render-args "--seed-file s1.seed" --questions-args ...` once rendered
    the earlier set's images while build.json recorded seed 1: a build has one seed."""
    seed = tmp_path / "s1.seed"
    seed.write_text("12345678901234567890123\n", encoding="utf-8")
    for stage in ("--render-args", "--questions-args", "--translate-args"):
        refused(["dataset", "build", "--like", inputs.export, "--seed", "1", "--out", tmp_path / "new", stage,
                 f"--seed-file {seed}"], capsys, "a build has one seed", [tmp_path, inputs.root])


@pytest.mark.parametrize("command,subfolder", [("annotate export", "images"), ("annotate export", "pages"),
                                               ("render --graphs-only", "scenes"), ("augment", "masks"),
                                               ("pairs", "images"), ("build", "render"), ("build", "mera/samples"),
                                               ("render merge", "images")])
def test_writers_never_follow_a_symlinked_subfolder_of_the_output(inputs, tmp_path, capsys, command, subfolder) -> None:
    """annotate export removed a holiday.png from the photo folder its images/ linked to (and old pages from
    pages/); render --overwrite, augment, pairs and build clean their images, masks and scenes the same way."""
    out = tmp_path / "out"
    (out / subfolder).parent.mkdir(parents=True)
    (out / subfolder).symlink_to(photo_folder(tmp_path))
    scenes, kept = inputs.scenes / "scenes.json", inputs.kept
    argv = {"annotate export": ["dataset", "annotate", "export", "--data", inputs.export, "--out", out],
            "render --graphs-only": ["render", "--n", "1", "--graphs-only", "--overwrite", "--out", out],
            "augment": ["dataset", "augment", "--random", "--scenes", scenes, "--questions", kept, "--out", out],
            "pairs": ["dataset", "pairs", "--scenes", scenes, "--questions", kept, "--out", out],
            "build": ["dataset", "build", "--n", "2", "--shots", "1", "--width", "16", "--height", "12", "--out", out],
            "render merge": ["render", "merge", out]}
    refused(argv[command], capsys, "is a symbolic link", [tmp_path, inputs.root])
    assert (tmp_path / "photos" / "holiday.png").read_bytes() == b"a holiday"


@pytest.mark.parametrize("stage", ["questions", "translate"])
def test_a_family_file_is_bounded_before_it_is_read(inputs, tmp_path, capsys, stage) -> None:
    """A 100 MB family file once filled translate's one-line error with its id (a MemoryError under a
    1 GiB cap); family files are at most 1 MiB (the shipped ones at most 73 KB)."""
    families = tmp_path / "families"
    families.mkdir()
    (families / "big.yaml").write_text("id: " + "x" * (2 << 20) + "\n", encoding="utf-8")
    argv = {"questions": ["questions", "--in", inputs.scenes / "scenes.json", "--out", tmp_path / "q.json", "--quiet"],
            "translate": ["translate", "--in", inputs.questions, "--out", tmp_path / "t.json"]}[stage]
    line = refused([*argv, "--families", families], capsys, "larger than 1,048,576 bytes", [tmp_path, inputs.root])
    assert len(line) < 300


@pytest.mark.parametrize("command,where,expect", [
    ("hf", "export/hf", "lies inside --data's export folder"),
    ("hf", ".", "contains --data's export folder"),
    ("annotate export", "export/tasks", "lies inside --data's export folder"),
    ("gallery", "export/samples/g.html", "lies inside --data's export folder"),
])
def test_a_folder_written_from_a_dataset_lies_outside_its_export(inputs, tmp_path, capsys, command, where, expect) -> None:
    """`hf --data B/mera --out B/mera/hf` wrote a copy into the export it read (published with it)."""
    import shutil

    export = tmp_path / "export"
    shutil.copytree(inputs.export, export)
    out = tmp_path / where
    argv = {"hf": ["dataset", "hf"], "annotate export": ["dataset", "annotate", "export"],
            "gallery": ["dataset", "gallery"]}[command]
    refused([*argv, "--data", export, "--out", out], capsys, expect, [tmp_path, inputs.root])
