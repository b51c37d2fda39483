"""Every CLI and subcommand against every bad output location and every hostile input.

Each probe runs a command in this process (no rendering: inputs are scene graphs sampled
without Blender and tiny PNGs) and must end with exit status 2 and exactly one line on stderr,
no traceback, and no file written or changed anywhere in the test's folders (so nothing outside
``--out`` and nothing half-written). docs/reliability.md quotes the number of probes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import run_stage
from probe_round_two import round_two_probes

ROOT = Path(__file__).resolve().parents[1]
PASSWD = "/etc/passwd"


@dataclass(frozen=True)
class Inputs:
    root: Path
    scenes: Path  # render layout: scenes.json, images/, masks/
    questions: Path
    translated: Path
    kept: Path
    export: Path  # an export folder with MERA's shots.json, test.json, provenance.json and samples/
    regular_file: Path
    folder: Path


def tree(folder: Path) -> dict[str, tuple[str, int, int]]:
    """Every entry under ``folder``: kind, size and modification time (a rewrite changes them)."""
    found = {}
    for path in sorted(folder.rglob("*")):
        stat = path.lstat()
        kind = "link" if path.is_symlink() else "dir" if path.is_dir() else "file"
        found[path.relative_to(folder).as_posix()] = (kind, stat.st_size if kind == "file" else 0,
                                                       stat.st_mtime_ns if kind == "file" else 0)
    return found


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Inputs:
    import numpy as np
    from sample_outputs import tiny_png

    from render import RenderSettings, SceneOptions, encode_png, sample_scene_graph
    from ruclevr.io import atomic_write_bytes, atomic_write_json

    root = tmp_path_factory.mktemp("probes")
    scenes_dir = root / "render"
    options = SceneOptions(width=16, height=12)
    scenes = []
    for index in range(4):
        scene = sample_scene_graph(0, index, options)
        scene["render"] = RenderSettings(width=16, height=12).to_dict()
        atomic_write_bytes(scenes_dir / "images" / scene["image_filename"], tiny_png(index, 16, 12))
        atomic_write_bytes(scenes_dir / "masks" / scene["image_filename"], encode_png(np.zeros((12, 16), np.uint8)))
        scenes.append(scene)
    atomic_write_json(scenes_dir / "scenes.json", {"info": {"seed": 0}, "scenes": scenes})
    questions, translated, kept = root / "questions.json", root / "questions_ru.json", root / "questions_ru_kept.json"
    assert run_stage("questions", "--scenes", scenes_dir / "scenes.json", "--out", questions, "--quiet") == 0
    assert run_stage("translate", "--questions", questions, "--out", translated) == 0
    assert run_stage("filter", "--in", translated, "--out", kept, "--backend", "morph") == 0
    export = root / "export"
    assert run_stage("dataset", "export", "--questions", kept, "--scenes", scenes_dir / "scenes.json",
                     "--shots", "1", "--out", export) == 0
    regular_file = root / "a-file.txt"
    regular_file.write_text("not a folder\n", encoding="utf-8")
    folder = root / "a-folder"
    folder.mkdir()
    return Inputs(root, scenes_dir, questions, translated, kept, export, regular_file, folder)


# -- the commands, each with a valid input and OUT standing for the output location -----------------

OUT = "{out}"


def commands(i: Inputs) -> dict[str, tuple[list[str], str]]:
    """Command name -> (argv with OUT, whether OUT is a "dir" or a "file")."""
    scenes, mera = str(i.scenes / "scenes.json"), str(i.export)
    return {
        "render": (["render", "--n", "1", "--width", "16", "--height", "12", "--device", "cpu", "--out", OUT], "dir"),
        "render merge": (["render", "merge", OUT], "dir"),
        "questions": (["questions", "--scenes", scenes, "--out", OUT, "--quiet"], "file"),
        "translate": (["translate", "--questions", str(i.questions), "--out", OUT], "file"),
        "filter": (["filter", "--in", str(i.translated), "--out", OUT, "--backend", "morph"], "file"),
        "dataset build": (["dataset", "build", "--n", "2", "--shots", "1", "--out", OUT], "dir"),
        "dataset export": (["dataset", "export", "--questions", str(i.kept), "--scenes", scenes, "--shots", "1",
                            "--out", OUT], "dir"),
        "dataset hf": (["dataset", "hf", "--mera", mera, "--out", OUT], "dir"),
        "dataset stats": (["dataset", "stats", "--mera", mera, "--out", OUT], "file"),
        "dataset evaluate": (["dataset", "evaluate", "--data", mera, "--out", OUT], "file"),
        "dataset augment": (["dataset", "augment", "--scenes", scenes, "--questions", str(i.questions), "--map",
                             "blue=red", "--device", "cpu", "--out", OUT], "dir"),
        "dataset gallery": (["dataset", "gallery", "--data", mera, "--out", OUT], "file"),
        "dataset annotate export": (["dataset", "annotate", "export", "--data", mera, "--out", OUT], "dir"),
        "dataset annotate import": (["dataset", "annotate", "import", "--data", mera, "--answers",
                                     str(answers_file(i)), "--out", OUT], "dir"),
        "dataset submission": (["dataset", "submission", "--samples", str(samples_file(i)), "--out", OUT], "file"),
    }


#: Commands that write nothing: they get the hostile inputs only.
READ_ONLY = ("render verify", "questions validate")

BAD_OUTPUTS = {
    "under a regular file": lambda i, kind: str(i.regular_file / ("sub" if kind == "dir" else "out.json")),
    "under /proc": lambda i, kind: "/proc/ruclevr-probe/" + ("sub" if kind == "dir" else "out.json"),
    "the wrong kind (a file for a folder, a folder for a file)":
        lambda i, kind: str(i.regular_file if kind == "dir" else i.folder),
}

BAD_OUTPUT_PROBES = [(command, bad) for command in (
    "render", "render merge", "questions", "translate", "filter", "dataset build", "dataset export", "dataset hf",
    "dataset stats", "dataset evaluate", "dataset augment", "dataset gallery", "dataset annotate export",
    "dataset annotate import", "dataset submission") for bad in BAD_OUTPUTS]


def check_probe(argv: list[str], inputs: Inputs, capsys, expect: str = "") -> None:
    capsys.readouterr()
    before = tree(inputs.root)
    status = run_stage(*argv)
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if line.strip() and "\r" not in line]
    assert status == 2, (argv, status, captured.err[-2000:])
    assert len(lines) == 1 and "Traceback" not in captured.err, captured.err
    assert expect in lines[0], lines[0]
    assert tree(inputs.root) == before, "the probe wrote or changed files"


@pytest.mark.parametrize("command,bad", BAD_OUTPUT_PROBES, ids=[f"{c}: {b}" for c, b in BAD_OUTPUT_PROBES])
def test_bad_output_location(inputs, capsys, command, bad) -> None:
    argv, kind = commands(inputs)[command]
    out = BAD_OUTPUTS[bad](inputs, kind)
    check_probe([out if part == OUT else part for part in argv], inputs, capsys, expect="cannot write to")


# -- hostile inputs ------------------------------------------------------------------------------

def hostile_export(inputs: Inputs, image: str, name: str) -> Path:
    """A copy of the export whose first item's image path is ``image`` (under ``name``)."""
    folder = inputs.root / "hostile" / name
    if not folder.exists():
        folder.mkdir(parents=True)
        (folder / "samples").mkdir()
        for unchanged in ("shots.json", "provenance.json"):
            (folder / unchanged).write_bytes((inputs.export / unchanged).read_bytes())
        test = json.loads((inputs.export / "test.json").read_text(encoding="utf-8"))
        test["data"][0]["inputs"]["image"] = image
        (folder / "test.json").write_text(json.dumps(test, ensure_ascii=False), encoding="utf-8")
        for sample in (inputs.export / "samples").iterdir():
            (folder / "samples" / sample.name).write_bytes(sample.read_bytes())
        (folder / "samples" / "evil.png").symlink_to(PASSWD)
        (folder / "samples" / "notimage.png").write_bytes(b"this is not a PNG")
    return folder


def hostile_stage_files(inputs: Inputs, filename: str, name: str) -> tuple[Path, Path]:
    """Scenes and kept questions whose first scene's image_filename is ``filename``."""
    folder = inputs.root / "hostile" / name
    if not folder.exists():
        (folder / "images").mkdir(parents=True)
        for image in (inputs.scenes / "images").iterdir():
            (folder / "images" / image.name).write_bytes(image.read_bytes())
        (folder / "images" / "evil.png").symlink_to(PASSWD)
        scenes = json.loads((inputs.scenes / "scenes.json").read_text(encoding="utf-8"))
        original = scenes["scenes"][0]["image_filename"]
        scenes["scenes"][0]["image_filename"] = filename
        (folder / "scenes.json").write_text(json.dumps(scenes), encoding="utf-8")
        for source in (inputs.kept, inputs.questions):
            questions = json.loads(source.read_text(encoding="utf-8"))
            for question in questions["questions"]:
                if question["image_filename"] == original:
                    question["image_filename"] = filename
            (folder / source.name).write_text(json.dumps(questions, ensure_ascii=False), encoding="utf-8")
    return folder / "scenes.json", folder


def non_utf8(inputs: Inputs, name: str) -> Path:
    path = inputs.root / "hostile" / name
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b'{"questions": ["\xff\xfe caf\xe9"]}\n')
    return path


def samples_file(inputs: Inputs) -> Path:
    """lm-eval's logged samples answering the first test item (for `dataset submission`)."""
    from dataset.mera.document import load_document

    path = inputs.root / "lm_eval" / "samples_ruclevr_2026-01-31T10-00-00.000001.jsonl"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        first = load_document(inputs.export).items("test")[0]
        path.write_text(json.dumps({"doc": first, "filtered_resps": ["да"]}, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def answers_file(inputs: Inputs) -> Path:
    """The annotate page's JSON answering the first test item wrongly (so it is disputed, its image shown)."""
    from dataset.mera.document import load_document

    path = inputs.root / "hostile" / "answers.json"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        first = load_document(inputs.export).items("test")[0]["meta"]["id"]  # the same in the hostile copies
        path.write_text(json.dumps({"format": "ruclevr-annotate/1", "annotator": "probe",
                                    "answers": [{"id": first, "answer": "999"}]}), encoding="utf-8")
    return path


def prompt_file(inputs: Inputs, name: str, source: str) -> Path:
    path = inputs.root / "hostile" / f"{name}.j2"
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        path.write_text(source, encoding="utf-8")
    return path


IMAGE_PATHS = {"../ path": "samples/../../../../../../etc/passwd", "absolute path": PASSWD,
               "symlink out of the folder": "samples/evil.png"}
STAGE_IMAGE_NAMES = {"../ path": "../../../../../../etc/passwd", "absolute path": PASSWD,
                     "symlink out of the folder": "evil.png"}
HOSTILE_PROMPTS = {
    "include": "{% include 'x.j2' %}<image>{question}",
    "import": "{% import 'x.j2' as x %}<image>{question}",
    "extends": "{% extends 'x.j2' %}",
    "range(10**9)": "{{ range(10**9) }}<image>{question}",
    "'x' * 10**9": "{{ 'x' * 10**9 }}<image>{question}",
    "center(10**9)": "{{ 'x'|center(10**9) }}<image>{question}",
    "nested loops": "{% for a in range(1000) %}{% for b in range(1000) %}xxxx{% endfor %}{% endfor %}<image>{question}",
    "recursion": "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}<image>{question}",
}


def hostile_probes(i: Inputs) -> dict[str, list[str]]:
    """Probe name -> argv (all outputs go to a fresh, valid place: only the input is hostile)."""
    out = str(i.root / "never-written")
    scenes = str(i.scenes / "scenes.json")
    probes: dict[str, list[str]] = {}
    for label, image in IMAGE_PATHS.items():
        mera = str(hostile_export(i, image, label.replace(" ", "-")))
        probes[f"hf: {label} in inputs.image"] = ["dataset", "hf", "--mera", mera, "--out", out]
        probes[f"gallery: {label} in inputs.image"] = ["dataset", "gallery", "--data", mera, "--out", out + ".html"]
        probes[f"evaluate: {label} in inputs.image"] = ["dataset", "evaluate", "--data", mera]
        probes[f"stats: {label} in inputs.image"] = ["dataset", "stats", "--mera", mera]
        probes[f"annotate export: {label} in inputs.image"] = ["dataset", "annotate", "export", "--data", mera,
                                                               "--out", out]
        probes[f"annotate import: {label} in inputs.image"] = ["dataset", "annotate", "import", "--data", mera,
                                                               "--answers", str(answers_file(i)), "--out", out]
    for label, filename in STAGE_IMAGE_NAMES.items():
        hostile_scenes, folder = hostile_stage_files(i, filename, "stage-" + label.replace(" ", "-"))
        probes[f"export: {label} in image_filename"] = [
            "dataset", "export", "--questions", str(folder / "questions_ru_kept.json"), "--scenes", str(hostile_scenes),
            "--shots", "1", "--out", out]
        probes[f"gallery: {label} in a questions file's image_filename"] = [
            "dataset", "gallery", "--data", str(folder / "questions_ru_kept.json"), "--images", str(folder / "images"),
            "--out", out + ".html"]
        if label != "symlink out of the folder":
            probes[f"augment: {label} in image_filename"] = [
                "dataset", "augment", "--scenes", str(hostile_scenes), "--questions", str(folder / "questions.json"),
                "--map", "blue=red", "--device", "cpu", "--out", out]
    not_an_image = hostile_export(i, "samples/notimage.png", "not-an-image")
    probes["gallery: an image that is not an image"] = ["dataset", "gallery", "--data", str(not_an_image),
                                                         "--out", out + ".html"]
    for prefix in ("../x", "a/b", ".."):
        probes[f"augment: --prefix {prefix}"] = ["dataset", "augment", "--scenes", scenes, "--questions",
                                                 str(i.questions), "--map", "blue=red", "--prefix", prefix, "--out", out]
    probes["render verify: --prefix ../x"] = ["render", "verify", str(i.scenes), "--prefix", "../x"]
    probes["render: --split ../x"] = ["render", "--n", "1", "--split", "../x", "--out", out]
    probes["render: --n 10**12"] = ["render", "--n", str(10**12), "--out", out]
    probes["build: --n 10**12"] = ["dataset", "build", "--n", str(10**12), "--out", out]
    probes["render: --width 100000 --height 100000"] = ["render", "--n", "1", "--width", "100000", "--height",
                                                        "100000", "--out", out]
    probes["build: --height 100000"] = ["dataset", "build", "--n", "2", "--shots", "1", "--height", "100000",
                                        "--out", out]
    probes["build: --shots beyond --n"] = ["dataset", "build", "--n", "5", "--out", out]
    probes["annotate import: --write-filtered under a regular file"] = [
        "dataset", "annotate", "import", "--data", str(i.export), "--answers",
        str(answers_file(i)), "--out", out, "--write-filtered", str(i.regular_file / "sub")]
    bad_text = str(non_utf8(i, "latin1.json"))
    probes["evaluate: non-UTF-8 predictions"] = ["dataset", "evaluate", "--data", str(i.export), "--predictions", bad_text]
    for name, argv in {
        "hf": ["dataset", "hf", "--mera", bad_text, "--out", out],
        "stats": ["dataset", "stats", "--mera", bad_text],
        "evaluate": ["dataset", "evaluate", "--data", bad_text],
        "gallery": ["dataset", "gallery", "--data", bad_text, "--out", out + ".html"],
        "questions": ["questions", "--scenes", bad_text, "--out", out + ".json", "--quiet"],
        "translate": ["translate", "--questions", bad_text, "--out", out + ".json"],
        "filter": ["filter", "--in", bad_text, "--out", out + ".json", "--backend", "morph"],
        "export (questions)": ["dataset", "export", "--questions", bad_text, "--scenes", scenes, "--out", out],
        "export (scenes)": ["dataset", "export", "--questions", str(i.kept), "--scenes", bad_text, "--out", out],
        "augment": ["dataset", "augment", "--scenes", bad_text, "--questions", str(i.questions), "--map", "blue=red",
                    "--out", out],
        "export (prompt)": ["dataset", "export", "--questions", str(i.kept), "--scenes", scenes, "--prompt",
                            str(non_utf8(i, "latin1.j2")), "--out", out],
        "annotate import (answers)": ["dataset", "annotate", "import", "--data", str(i.export), "--answers", bad_text,
                                      "--out", out],
    }.items():
        probes[f"{name}: a non-UTF-8 file"] = argv
    for name, source in HOSTILE_PROMPTS.items():
        prompt = str(prompt_file(i, name.replace(" ", "-").replace("*", "x").replace("'", ""), source))
        probes[f"export: prompt with {name}"] = ["dataset", "export", "--questions", str(i.kept), "--scenes", scenes,
                                                 "--shots", "1", "--prompt", prompt, "--out", out]
        probes[f"build: prompt with {name}"] = ["dataset", "build", "--n", "2", "--shots", "1", "--prompt", prompt,
                                                "--out", out]
    probes.update(round_two_probes(i, answers_file(i), not_an_image))
    return probes


def test_hostile_inputs(inputs, capsys) -> None:
    """Each hostile input, one probe at a time; every failing probe is named at once."""
    failures = []
    probes = hostile_probes(inputs)
    for name, argv in probes.items():
        try:
            check_probe(argv, inputs, capsys)
        except AssertionError as failure:
            failures.append(f"{name}: {str(failure).splitlines()[0][:300]}")
    assert failures == [], "\n".join(failures)
    assert len(probes) >= 50


@pytest.mark.parametrize("argv,blocked", [
    (["filter", "--in", "{translated}", "--out", "{out}", "--backend", "rucola"], "torch"),
    (["translate", "--questions", "{questions}", "--out", "{out}", "--backend", "marian"], "transformers"),
], ids=["filter --backend rucola without torch", "translate --backend marian without transformers"])
def test_missing_optional_dependency_names_the_extra(inputs, capsys, monkeypatch, argv, blocked) -> None:
    for module in list(sys.modules):
        if module == blocked or module.startswith(blocked + "."):
            monkeypatch.delitem(sys.modules, module)
    monkeypatch.setitem(sys.modules, blocked, None)  # `import torch` now fails as if it were not installed
    values = {"translated": str(inputs.translated), "questions": str(inputs.questions),
              "out": str(inputs.root / "never-written.json")}
    check_probe([part.format(**values) for part in argv], inputs, capsys, expect="pip install -e '.[ml]'")


def test_closed_stdout_pipe_ends_quietly(inputs) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line is written (as `| head -1` after its line)
    try:
        result = subprocess.run([sys.executable, "-m", "dataset", "stats", "--mera", str(inputs.export)], cwd=ROOT,
                                stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write_end)
    assert result.returncode == 0 and result.stderr == "", result.stderr


#: The number of probes, as docs/reliability.md states it.
def test_probe_count_matches_the_reliability_doc(inputs) -> None:
    count = len(BAD_OUTPUT_PROBES) + len(hostile_probes(inputs)) + 2 + 1
    reliability = (ROOT / "docs" / "reliability.md").read_text(encoding="utf-8")
    assert f"{count} probes" in reliability, count
