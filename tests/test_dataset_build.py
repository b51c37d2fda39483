"""``python -m dataset build``: stage order, resuming, settings checks, failures, and the real end to end run.

Until the other stages land, the orchestration is tested with small stand-in stage packages
written in the documented file formats (``docs/interfaces.md``); the end-to-end test with the
real stages is skipped, with its reason, while any of them is missing.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sample_outputs import mera_export_problems, questions_for_scene

from dataset import build as build_module
from dataset.build import Build, BuildPaths, BuildSettings, StageFailed, format_summary
from dataset.mera.document import read_export
from dataset.stage_args import RenderStage, Stage, Stages
from dataset.stage_settings import build_verbosity
from ruclevr.cli import UsageError
from ruclevr.io import atomic_write_json, read_json
from ruclevr.secret_seed import StageSeed

FAKE_COMMON = '''
import argparse, json, os, sys
from pathlib import Path
from ruclevr.io import atomic_write_json, read_json

def log_call(stage, argv):
    with open(os.environ["FAKE_STAGE_LOG"], "a", encoding="utf-8") as handle:
        handle.write(json.dumps([stage, argv]) + "\\n")
    return os.environ.get("FAKE_FAIL") == stage
'''

FAKE_STAGES = {
    "fake_render/cli.py": FAKE_COMMON + '''
import numpy as np
from sample_outputs import sample_scene, tiny_png
from ruclevr.io import atomic_write_bytes

def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--settings", type=Path, required=True)
    args = argparse.Namespace(**read_json(parser.parse_args(argv).settings))
    args.out = Path(args.out)
    if log_call("render", vars(args) | {"out": str(args.out)}):
        return 1
    scenes = []
    for index in range(args.n):
        scene = sample_scene(index, np.random.default_rng([args.seed, index]))
        scene_file = args.out / "scenes" / scene["image_filename"].replace(".png", ".json")
        if not scene_file.exists() or args.overwrite:
            atomic_write_bytes(args.out / "images" / scene["image_filename"], tiny_png(index))
            atomic_write_json(scene_file, scene)
        scenes.append(read_json(scene_file))
    info = {"stage": "render", "seed": args.seed, "settings": {"width": args.width, "samples": args.samples}}
    atomic_write_json(args.out / "scenes.json", {"info": info, "scenes": scenes})
    return 0
''',
    "fake_render/__init__.py": "",
    "fake_render/__main__.py": "from fake_render.cli import main\nraise SystemExit(main())\n",
}


def log_call(stage: str, what: object) -> bool:
    with open(os.environ["FAKE_STAGE_LOG"], "a", encoding="utf-8") as handle:
        handle.write(json.dumps([stage, what]) + "\n")
    return os.environ.get("FAKE_FAIL") == stage


@dataclass(frozen=True)
class FakeSettings:
    """The settings of the stand-in text stages: the fields the build sets, and one option of their own."""

    input: Path
    out: Path
    seed: StageSeed = StageSeed()
    per_image: int = 7
    families: Any = None
    backend: str | None = None
    threshold: float = 0.5
    overwrite: bool = False
    verbosity: int = 0


def fake_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    parser.add_argument("--in", dest="input", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--seed-file", type=Path)
    parser.add_argument("--per-image", type=int, default=7)
    parser.add_argument("--backend")
    parser.add_argument("--threshold", type=float, default=0.5)
    parser.add_argument("-q", "--quiet", dest="verbosity", action="store_const", const=-1, default=0)
    parser.add_argument("--overwrite", action="store_true")
    return parser


def fake_settings(args: argparse.Namespace) -> FakeSettings:
    return FakeSettings(args.input, args.out, StageSeed.plain(args.seed), args.per_image, None, args.backend,
                        args.threshold, args.overwrite, args.verbosity)


def logged_settings(settings: FakeSettings) -> dict[str, Any]:
    return json.loads(json.dumps(dataclasses.asdict(settings), default=str))


def fake_questions(settings: FakeSettings) -> int:
    if log_call("questions", logged_settings(settings)):
        return 1
    scenes = read_json(settings.input)["scenes"]
    questions = [q for scene in scenes for q in questions_for_scene(scene)[: settings.per_image]]
    atomic_write_json(settings.out, {"info": {"stage": "questions", "seed": settings.seed.record}, "questions": questions})
    return 0


def fake_translate(settings: FakeSettings) -> int:
    if log_call("translate", logged_settings(settings)):
        return 1
    questions = read_json(settings.input)["questions"]
    atomic_write_json(settings.out, {"info": {"stage": "translate", "backend": settings.backend}, "questions": questions})
    return 0


def fake_filter(settings: FakeSettings) -> int:
    if log_call("filter", logged_settings(settings)):
        return 1
    questions = read_json(settings.input)["questions"]
    info = {"stage": "filter", "backend": settings.backend, "threshold": settings.threshold}
    atomic_write_json(settings.out, {"info": info, "questions": questions})
    return 0


def fake_render_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    for flag in ("--n", "--seed", "--width", "--height", "--samples"):
        parser.add_argument(flag, type=int)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--seed-file", type=Path)
    parser.add_argument("--overwrite", action="store_true")
    return parser


@dataclass(frozen=True)
class FakeRenderSettings:
    n: int
    out: Path
    seed: StageSeed
    seed_file: Path | None
    width: int | None
    height: int | None
    samples: int | None
    overwrite: bool
    verbosity: int = 0  # as render's settings: the build sets its own -q/-v


def fake_render_settings(args: argparse.Namespace) -> FakeRenderSettings:
    return FakeRenderSettings(args.n, args.out, StageSeed.plain(args.seed or 0), args.seed_file, args.width,
                              args.height, args.samples, args.overwrite)


def write_fake_render_settings(path: Path, settings: FakeRenderSettings) -> None:
    record = dataclasses.asdict(settings) | {"seed": settings.seed.value, "out": str(settings.out), "seed_file": None}
    atomic_write_json(path, record)


FAKE_STAGES_TO_RUN = Stages(
    render=RenderStage("fake_render", fake_render_parser, fake_render_settings, write_fake_render_settings),
    questions=Stage("fake_questions", fake_parser, fake_settings, fake_questions),
    translate=Stage("fake_translate", fake_parser, fake_settings, fake_translate),
    filter=Stage("fake_filter", fake_parser, fake_settings, fake_filter),
)


@pytest.fixture()
def fake_stages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Install the stand-in stages on sys.path and return the file their calls are logged to."""
    package_root = tmp_path / "fakes"
    for relative, source in FAKE_STAGES.items():
        path = package_root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source), encoding="utf-8")
    monkeypatch.syspath_prepend(str(package_root))
    log = tmp_path / "calls.jsonl"
    monkeypatch.setenv("FAKE_STAGE_LOG", str(log))
    monkeypatch.delenv("FAKE_FAIL", raising=False)
    return log


def calls(log: Path) -> list[str]:
    if not log.exists():
        return []
    return [json.loads(line)[0] for line in log.read_text(encoding="utf-8").splitlines()]


def build(root: Path, **settings) -> Build:
    overwrite = settings.pop("overwrite", False)
    values = {"n": 6, "shots": 2, "width": 8, "samples": 2} | settings
    return Build(BuildPaths(root), BuildSettings(**values), overwrite, FAKE_STAGES_TO_RUN)


def output_bytes(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_build_runs_every_stage_in_order_and_exports(fake_stages, tmp_path) -> None:
    root = tmp_path / "DATA"
    report = build(root, filter_args=("--threshold", "0.7")).run()
    assert calls(fake_stages) == ["render", "questions", "translate", "filter"]
    assert [(s.name, s.status) for s in report.stages] == [
        ("render", "ran"), ("questions", "ran"), ("translate", "ran"), ("filter", "ran"), ("export", "ran"),
        ("hf", "ran")]
    assert mera_export_problems(root / "mera") == []
    assert report.counts == {"scenes": 6, "questions": 42, "questions_ru": 42, "kept": 42, "shots": 2,
                             "test": report.counts["test"]}
    assert (root / "hf" / "README.md").exists() and (root / "stats.json").exists()
    logged = [json.loads(line) for line in fake_stages.read_text(encoding="utf-8").splitlines()]
    assert logged[0][1] == {"n": 6, "out": str(root / "render"), "seed": 0, "seed_file": None, "width": 8,
                            "height": None, "samples": 2, "overwrite": False, "verbosity": build_verbosity()}
    assert not (root / "render.settings.json").exists()  # the render stage's settings file is gone once it ran
    assert logged[3][1]["threshold"] == 0.7 and logged[3][1]["backend"] == "morph"
    sources = read_export(root / "mera")["info"]["sources"]
    assert sources["translate"]["info"] == {"stage": "translate", "backend": "native"}
    assert sources["questions"]["info"] == {"stage": "questions", "seed": 0}
    assert sources["input_questions"] == {"file": "questions_ru_kept.json",
                                          "info": {"stage": "filter", "backend": "morph", "threshold": 0.7}}
    assert list(sources) == ["scenes", "questions", "translate", "input_questions"]
    summary = format_summary(BuildPaths(root), report)
    assert "2 shots" in summary and "load_dataset" in summary
    # each stage's peak memory: this process (tens of MB at least) and its children, while it ran
    assert all(stage.peak_rss_bytes > 20 * 2**20 for stage in report.stages)
    assert summary.count(" GiB") == len(report.stages)


def test_memory_watch_sees_a_child_process_and_memory_this_process_takes() -> None:
    from dataset.stage_processes import MemoryWatch

    with MemoryWatch(interval=0.05) as alone:
        pass
    with MemoryWatch(interval=0.05) as busy:
        block = bytearray(200 * 2**20)  # touched: resident
        child = subprocess.Popen([sys.executable, "-c", "import time; b = bytearray(150 * 2**20); time.sleep(1.5)"])
        child.wait()
        del block
    assert busy.peak - alone.peak > 300 * 2**20


def test_rerun_skips_everything_and_changes_nothing(fake_stages, tmp_path) -> None:
    root = tmp_path / "DATA"
    build(root).run()
    before = output_bytes(root)
    report = build(root).run()
    assert calls(fake_stages) == ["render", "questions", "translate", "filter"]  # nothing ran again
    assert {s.status for s in report.stages} == {"skipped"}
    assert output_bytes(root) == before


def test_lost_output_reruns_from_that_stage_to_identical_files(fake_stages, tmp_path) -> None:
    root = tmp_path / "DATA"
    build(root).run()
    before = output_bytes(root)
    (root / "questions_ru_kept.json").unlink()
    report = build(root).run()
    assert calls(fake_stages)[4:] == ["filter"]
    # The filter wrote the same file again, so export and hf, whose input hashes the same, stay.
    assert [s.status for s in report.stages] == ["skipped", "skipped", "skipped", "ran", "skipped", "skipped"]
    assert output_bytes(root) == before


def test_damaged_outputs_are_noticed_by_their_record_and_redone(fake_stages, tmp_path) -> None:
    root = tmp_path / "DATA"
    build(root).run()
    before = output_bytes(root)
    questions = root / "questions.json"
    questions.write_bytes(questions.read_bytes().replace(b"cube", b"cubf", 1))  # same size, newer than nothing
    (root / "hf" / "README.md").write_text("damaged", encoding="utf-8")
    sample = next((root / "mera" / "samples").glob("*.png"))
    sample.unlink()
    report = build(root).run()
    assert calls(fake_stages)[4:] == ["questions"]
    assert [s.status for s in report.stages] == ["skipped", "ran", "skipped", "skipped", "ran", "ran"]
    assert output_bytes(root) == before


def test_failed_stage_stops_the_build_and_a_rerun_resumes(fake_stages, tmp_path, monkeypatch) -> None:
    root = tmp_path / "DATA"
    monkeypatch.setenv("FAKE_FAIL", "translate")
    with pytest.raises(StageFailed, match="stage translate failed .*rerun the same command to resume"):
        build(root).run()
    assert (root / "questions.json").exists() and not (root / "mera").exists()
    monkeypatch.delenv("FAKE_FAIL")
    report = build(root).run()
    assert calls(fake_stages) == ["render", "questions", "translate", "translate", "filter"]
    assert [s.status for s in report.stages][:2] == ["skipped", "skipped"]


def test_failed_render_process_is_reported(fake_stages, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("FAKE_FAIL", "render")
    with pytest.raises(StageFailed, match="stage render failed \\(exit status 1\\)"):
        build(tmp_path / "DATA").run()


def test_changed_export_settings_redo_only_export_but_render_settings_need_overwrite(
    fake_stages, tmp_path, monkeypatch
) -> None:
    root = tmp_path / "DATA"
    build(root).run()

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:  # a run with new shots dies during export...
        patch.setattr(build_module, "export_dataset", interrupted)
        with pytest.raises(KeyboardInterrupt):
            build(root, shots=3).run()
    report = build(root, shots=3).run()  # ...and the rerun still redoes it
    assert [s.status for s in report.stages] == ["skipped"] * 4 + ["ran", "ran"]
    assert len(read_export(root / "mera")["data"]["shots"]) == 3
    report = build(root, shots=3, license="mit").run()
    assert [s.status for s in report.stages] == ["skipped"] * 5 + ["ran"]
    report = build(root, shots=3, license="mit").run()
    assert {s.status for s in report.stages} == {"skipped"}
    with pytest.raises(UsageError, match=r"other render settings \(width 8 → 16\); pass --overwrite"):
        build(root, shots=3, width=16).run()
    report = build(root, shots=3, width=16, license="mit", overwrite=True).run()
    assert {s.status for s in report.stages} == {"ran"}
    assert read_json(root / "render" / "scenes.json")["info"]["settings"]["width"] == 16
    assert read_json(root / "build.json")["info"]["settings"]["render"]["width"] == 16


def test_an_explicit_default_is_not_a_settings_change(fake_stages, tmp_path) -> None:
    from dataset.stage_args import shipped_stages, stage_defaults
    from render.model.settings import DEFAULT_SAMPLES

    defaults = stage_defaults(shipped_stages())
    assert defaults == {"width": 480, "height": 320, "samples": DEFAULT_SAMPLES, "per_image": 10}
    implicit = BuildSettings(n=4).by_stage(defaults)
    assert BuildSettings(n=4, width=480, height=320, samples=DEFAULT_SAMPLES, per_image=10).by_stage(defaults) == implicit
    assert BuildSettings(n=4, per_image=9).by_stage(defaults) != implicit
    root = tmp_path / "DATA"
    root.mkdir()
    (root / "build.json").write_text(json.dumps({"info": {"settings": implicit}}), encoding="utf-8")
    build_module.check_previous_settings(BuildPaths(root), BuildSettings(n=4, per_image=10).by_stage(defaults))
    with pytest.raises(UsageError, match="other questions settings"):
        build_module.check_previous_settings(BuildPaths(root), BuildSettings(n=4, per_image=9).by_stage(defaults))


def test_missing_stage_is_reported_before_any_work(fake_stages, tmp_path) -> None:
    stages = dataclasses.replace(FAKE_STAGES_TO_RUN, render=dataclasses.replace(FAKE_STAGES_TO_RUN.render,
                                                                                name="no_such_render_stage"))
    with pytest.raises(UsageError, match="stage render is not available"):
        Build(BuildPaths(tmp_path / "DATA"), BuildSettings(n=2), False, stages).run()
    assert calls(fake_stages) == [] and not (tmp_path / "DATA").exists()


def test_build_cli_rejects_bad_values_in_one_line(tmp_path) -> None:
    for argv, message in (
        (["--n", "-3"], "must be a positive integer, got -3"),
        (["--n", "2", "--backend", "deepl"], "invalid choice: 'deepl'"),
        (["--n", "2", "--license", "Not A Licence"], "is not a Hugging Face licence id"),
        (["--n", "2", "--render-args", "--engine 'cycles"], "--render-args"),
    ):
        result = subprocess.run([sys.executable, "-m", "dataset", "build", "--out", str(tmp_path / "D"), *argv],
                                capture_output=True, text=True, check=False)
        assert result.returncode == 2, argv
        assert message in result.stderr and result.stderr.count("\n") == 1, result.stderr
    assert not (tmp_path / "D").exists()


REAL_STAGES = ("render.cli", "questions.cli", "translate.native", "filter.cli")


def _missing_real_stages() -> list[str]:
    missing = []
    for module in REAL_STAGES:
        try:
            if importlib.util.find_spec(module) is None:
                missing.append(module)
        except ModuleNotFoundError:
            missing.append(module)
    return missing


@pytest.mark.blender
@pytest.mark.skipif(bool(_missing_real_stages()),
                    reason=f"end-to-end build needs the other stages; missing: {', '.join(_missing_real_stages())}")
def test_tiny_end_to_end_build_with_the_real_stages(tmp_path, monkeypatch) -> None:
    import datasets

    from dataset.publish.features import copy_features

    root = tmp_path / "DATA"
    command = [sys.executable, "-m", "dataset", "build", "--n", "4", "--out", str(root), "--width", "96",
               "--height", "64", "--samples", "2", "--shots", "2", "--seed", "3"]
    result = subprocess.run(command, capture_output=True, text=True, check=False, env=dict(os.environ))
    assert result.returncode == 0, result.stderr[-3000:]
    assert "MERA items" in result.stdout
    assert mera_export_problems(root / "mera") == []
    document = read_export(root / "mera")
    assert len(document["data"]["shots"]) == 2 and document["data"]["test"]
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    loaded = datasets.load_dataset(str(root / "hf"), cache_dir=str(tmp_path / "cache"))
    assert loaded["test"].features == copy_features()
    ids = [row["meta"]["id"] for split in ("shots", "test") for row in loaded[split]]
    assert ids == list(range(1, len(ids) + 1))
    # A second run finds everything finished and changes nothing.
    before = {p: p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
    again = subprocess.run(command, capture_output=True, text=True, check=False)
    assert again.returncode == 0, again.stderr[-3000:]
    assert {p: p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()} == before


def test_extra_arguments_are_read_once_into_the_stage_settings_and_the_build_values_set_over_them(
    fake_stages, tmp_path
) -> None:
    root = tmp_path / "DATA"
    report = build(root, seed=9, questions_args=("--per-image", "3"), filter_args=("--threshold", "0.7", "-q")).run()
    assert [s.status for s in report.stages] == ["ran"] * 6
    logged = {stage: settings for stage, settings in map(json.loads, fake_stages.read_text(encoding="utf-8").splitlines())}
    assert logged["questions"]["per_image"] == 3 and logged["questions"]["input"] == str(root / "render" / "scenes.json")
    assert logged["questions"]["seed"] == {"value": 9, "record": 9} and logged["translate"]["backend"] == "native"
    assert logged["filter"]["threshold"] == 0.7 and logged["filter"]["verbosity"] == -1
    from dataset.stage_settings import build_verbosity

    assert logged["questions"]["verbosity"] == build_verbosity() and logged["questions"]["overwrite"] is False
    recorded = read_json(root / "build.json")["info"]["settings"]
    assert recorded["questions"]["args"] == {"per_image": 3} and recorded["questions"]["per_image"] == 3
    assert recorded["filter"]["args"] == {"threshold": 0.7, "verbosity": -1} and recorded["translate"]["args"] == []


def test_an_option_given_twice_or_unknown_is_refused_before_any_work(fake_stages, tmp_path) -> None:
    root = tmp_path / "DATA"
    for settings, message in (
        ({"per_image": 4, "questions_args": ("--per-image", "3")},
         "--questions-args sets per_image to 3, but the build sets it to 4 (--per-image); give it once"),
        ({"filter_args": ("--backend", "none")}, "--filter-args sets backend to 'none', but the build sets it to 'morph' "
                                                 "(--filter-backend)"),
        ({"render_args": ("--width", "9")}, "--render-args sets width to 9, but the build sets it to 8 (--width)"),
        ({"translate_args": ("--seed-file", "x")}, "--translate-args sets the seed (--seed-file x): a build has one seed"),
        ({"questions_args": ("--bogus",)}, "--questions-args '--bogus': the questions stage does not accept these "
                                           "arguments (unrecognized arguments: --bogus)"),
    ):
        with pytest.raises(UsageError) as refused:
            build(root, **settings).run()
        assert message in str(refused.value) and "\n" not in str(refused.value)
    assert calls(fake_stages) == [] and not root.exists()


def test_the_build_loudness_reaches_render_unless_its_extra_arguments_set_it(tmp_path) -> None:
    import logging

    from dataset.stage_settings import StageComposer
    from ruclevr.cli import LOGGER_ROOT

    logger = logging.getLogger(LOGGER_ROOT)
    level = logger.level
    logger.setLevel(logging.WARNING)  # dataset build -q
    try:
        for render_args, verbosity in (((), -1), (("-v",), 1)):
            settings = BuildSettings(n=4, render_args=render_args)
            plans = StageComposer(Build(BuildPaths(tmp_path / "DATA"), settings, False), build_module.shipped_stages()).plans()
            assert plans["render"].settings.verbosity == verbosity, render_args
    finally:
        logger.setLevel(level)


def test_the_shipped_stages_get_their_own_settings_objects(tmp_path) -> None:
    from dataset.stage_settings import StageComposer
    from filter.settings import FilterSettings
    from questions.settings import QuestionSettings
    from translate.settings import TranslateSettings

    root = tmp_path / "DATA"
    settings = BuildSettings(n=4, seed=5, questions_args=("--mix-by", "skill", "--budget", "99"),
                             translate_args=("--yo", "yo"), filter_args=("--threshold", "0.25"))
    plans = StageComposer(Build(BuildPaths(root), settings, False), build_module.shipped_stages()).plans()
    questions, translate, kept = (plans[name].settings for name in ("questions", "translate", "filter"))
    assert isinstance(questions, QuestionSettings) and isinstance(translate, TranslateSettings)
    assert isinstance(kept, FilterSettings)
    assert (questions.scenes, questions.out, questions.mix_by, questions.budget) == (
        root / "render" / "scenes.json", root / "questions.json", "skill", 99)
    assert questions.seed == translate.seed == StageSeed(5, 5) and questions.per_image == 10
    assert (translate.questions, translate.yo, translate.backend) == (root / "questions.json", "yo", "native")
    assert (kept.input, kept.out, kept.threshold, kept.backend) == (
        root / "questions_ru.json", root / "questions_ru_kept.json", 0.25, "morph")
    assert plans["questions"].arguments.recorded() == {"budget": 99, "mix_by": "skill"}
    with pytest.raises(UsageError, match="--translate-args sets executor: a build runs the translate stage in its own"):
        StageComposer(Build(BuildPaths(root), BuildSettings(n=4, translate_args=("--executor", "ray")), False),
                      build_module.shipped_stages()).plans()
