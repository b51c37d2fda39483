"""``python -m dataset build``: render → questions → translate → filter → export → Hugging Face copy.

Each stage reads the previous stage's file and writes its own under ``DATA/``::

    DATA/build.json                  what the build was run with, and its counts
    DATA/render/                     render output (images/, masks/, scenes/, scenes.json)
    DATA/questions.json              questions
    DATA/questions_ru.json           translate
    DATA/questions_ru_kept.json      filter (+ .rejected.jsonl, .report.json)
    DATA/mera/                       export: shots.json, test.json, provenance.json, samples/
    DATA/hf/README.md, data/*.parquet the Hugging Face copy and its card
    DATA/hf/plots/*.png              answer, objects-per-scene and score plots (linked from the card)
    DATA/stats.json                  statistics

After each stage, ``build.json`` records what it wrote (``outputs``: every file's name and size,
and the SHA-256 of the small text files) and the SHA-256 of the files it read. A rerun skips a
stage only when its inputs still hash the same and every recorded output is still there,
unchanged; a deleted or damaged output (a damaged one is removed first) makes that stage run
again, and each stage redoes only what is missing (render re-renders the missing scenes, export
re-places the missing samples). Rendering runs in its own process group (Blender holds global
state and its own threads; SIGINT and SIGTERM sent to the build are passed on to it, and the
build waits until none of its processes is left); the other stages run in this process, each a
function called with its frozen settings object (``stage.run(settings)``), which the build composes
from its own values and the stage's extra arguments (:mod:`dataset.stage_settings`; both runners in
:mod:`dataset.stage_processes`). The output records are :mod:`ruclevr.records`'s.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from tqdm import tqdm

from dataset.mera import PROVENANCE_NAME, ExportSettings, PromptSet, QuestionStageFiles, export_dataset, stream_document
from dataset.publish import (
    CARD_PLOTS_DIR,
    PLOT_FILES,
    check_hf_inputs,
    survey_statistics,
    write_card_plots,
    write_hf_copy,
)
from dataset.stage_args import Stage, Stages, check_render_stage, shipped_stages, stage_defaults
from dataset.stage_processes import MemoryWatch, run_render_process, run_stage_in_process
from dataset.stage_settings import StageComposer, StagePlan
from filter import OutputPaths
from ruclevr import __version__
from ruclevr.cli import UsageError, progress_disabled
from ruclevr.io import atomic_write_json, read_json
from ruclevr.jsonstream import JsonDocument, checked_info, input_document
from ruclevr.records import changed_outputs, describe_outputs, files_under, read_record
from ruclevr.secret_seed import SecretSeed


@dataclass(frozen=True)
class BuildPaths(QuestionStageFiles):
    @property
    def record(self) -> Path:
        return self.root / "build.json"

    @property
    def render_dir(self) -> Path:
        return self.root / "render"

    @property
    def scenes(self) -> Path:
        return self.render_dir / "scenes.json"

    @property
    def mera_dir(self) -> Path:
        return self.root / "mera"

    @property
    def mera(self) -> Path:
        """The export's last-written file: it exists only for a complete export."""
        return self.mera_dir / PROVENANCE_NAME

    @property
    def hf_dir(self) -> Path:
        return self.root / "hf"

    @property
    def card(self) -> Path:
        return self.hf_dir / "README.md"

    @property
    def plots_dir(self) -> Path:
        return self.hf_dir / CARD_PLOTS_DIR

    @property
    def stats(self) -> Path:
        return self.root / "stats.json"


@dataclass(frozen=True)
class BuildSettings:
    n: int
    seed: int = 0
    width: int | None = None
    height: int | None = None
    samples: int | None = None
    per_image: int | None = None
    backend: str = "native"
    filter_backend: str = "morph"
    shots: int = 10
    prompt: tuple[Path, ...] = ()
    license: str = "cc-by-4.0"
    contact: str | None = None  # who maintains the copy, named in the card (recorded only when given)
    render_args: tuple[str, ...] = ()
    questions_args: tuple[str, ...] = ()
    translate_args: tuple[str, ...] = ()
    filter_args: tuple[str, ...] = ()
    # --families folders for the questions stage, and whether they replace the shipped families;
    # the later stages read the choice from the questions' info
    families: tuple[tuple[Path, ...], bool] = ((), False)
    seed_file: Path | None = None  # the secret seed's file: stages are passed --seed-file, records hold commitments
    like: Any = None  # dataset.releases.like.LikeTarget: export keeps the test items of a set like it

    def families_setting(self) -> dict[str, Any]:
        """The questions stage's families, recorded only when given (so earlier builds compare equal)."""
        folders, only = self.families
        return {"families": [str(folder) for folder in folders], "families_only": only} if folders else {}

    def stage_seed(self, stage: str) -> int | str:
        """What ``stage``'s records say the seed is (ruclevr.secret_seed: a commitment per stage)."""
        if self.seed_file is None:
            return self.seed
        return SecretSeed(self.seed).record(stage)

    def by_stage(self, defaults: Mapping[str, Any] | None = None,
                 options: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, dict[str, Any]]:
        """Settings grouped by the first stage they affect (for comparing with an earlier run).

        A value not given is recorded as the stage's own default (``defaults``, see
        :func:`stage_defaults`), so giving the default explicitly is no change. With ``options``
        (:meth:`dataset.stage_args.StageArguments.recorded` of each stage's extra arguments) a stage's ``args`` are the values
        they change, by option name, and a render or questions value they set is recorded as set. Each stage's
        ``argv`` is its extra arguments as given (``--like`` gives them to the new build)."""
        prompt = PromptSet.from_paths(self.prompt)
        known = defaults or {}
        given_options = options or {}

        def value(name: str, given: Any, stage: str) -> Any:
            return given if given is not None else given_options.get(stage, {}).get(name, known.get(name))

        def args(stage: str, raw: tuple[str, ...]) -> Any:
            return dict(sorted(given_options[stage].items())) if stage in given_options else list(raw)

        stages = {
            "render": {"n": self.n, "seed": self.stage_seed("render"), "width": value("width", self.width, "render"),
                       "height": value("height", self.height, "render"),
                       "samples": value("samples", self.samples, "render"), "args": args("render", self.render_args)},
            "questions": {"seed": self.stage_seed("questions"), "per_image": value("per_image", self.per_image, "questions"),
                          "args": args("questions", self.questions_args), **self.families_setting()},
            "translate": {"backend": self.backend, "seed": self.stage_seed("translate"), "args": args("translate", self.translate_args)},
            "filter": {"backend": self.filter_backend, "args": args("filter", self.filter_args)},
            "export": {"shots": self.shots, "seed": self.stage_seed("export"), "prompt_sha256": prompt.sha256,
                       **({"like": self.like.record()} if self.like is not None else {})},
            "hf": {"license": self.license, **({"contact": self.contact} if self.contact is not None else {})},
        }
        raw_args = {"render": self.render_args, "questions": self.questions_args, "translate": self.translate_args,
                    "filter": self.filter_args}
        return {stage: values | ({"argv": list(raw_args[stage])} if stage in raw_args else {})
                for stage, values in stages.items()}


#: The render stage's settings file, in the build folder while the render process runs.
RENDER_SETTINGS_NAME = "render.settings.json"

# Changing these needs the stage itself to redo finished work, which only --overwrite asks of it.
EXTERNAL_STAGES = ("render", "questions", "translate", "filter")


@dataclass
class StageResult:
    name: str
    status: str
    seconds: float = 0.0
    peak_rss_bytes: int = 0  # this process and its children together, sampled while the stage ran


@dataclass
class BuildReport:
    stages: list[StageResult] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)


def check_previous_settings(paths: BuildPaths, settings: Mapping[str, Any]) -> None:
    """Refuse to resume a build made with other settings for a stage that is not ours to redo.

    Export and the Hugging Face copy compare their own outputs' records instead (see
    ``export_is_current`` and ``hf_is_current``) and are simply redone.
    """
    record = read_record(paths.record)
    if record is None:
        return
    previous = record.get("info", {}).get("settings", {})
    for stage in EXTERNAL_STAGES:
        # The arguments as given are not compared: ``args`` holds what they change, however spelled.
        before, now = ({key: value for key, value in values.items() if key != "argv"}
                       for values in (previous.get(stage, {}), settings[stage]))
        if before != now:
            changed = ", ".join(f"{key} {before.get(key)!r} → {value!r}" for key, value in now.items()
                                if before.get(key) != value)
            raise UsageError(
                f"{paths.root} was built with other {stage} settings ({changed}); "
                f"pass --overwrite to rebuild it or choose another --out"
            )


def export_is_current(path: Path, settings: ExportSettings) -> bool:
    """Whether an existing export was made with these shots, seed and prompt (its record alone is read)."""
    info = checked_info(input_document(path, "provenance", str(path)), str(path))
    recorded = (info.get("settings", {}).get("shots"), info.get("seed"), info.get("settings", {}).get("prompt", {}).get("sha256"))
    return recorded == (settings.shots, settings.recorded_seed, settings.prompts().sha256)


def like_selection(target: Any) -> Any:
    """Export's choice of test items for a build ``--like`` an earlier set (dataset.releases.like), else None."""
    if target is None:
        return None
    from dataset.releases import LikeSelection

    return LikeSelection(target)


def card_license(card: Path) -> str | None:
    """The licence in a card's YAML header."""
    text = card.read_text(encoding="utf-8")
    end = text.find("\n---\n", 4)
    if not text.startswith("---\n") or end < 0:
        return None
    header = yaml.safe_load(text[4:end])
    return header.get("license") if isinstance(header, dict) else None


def count_items(path: Path, key: str) -> int:
    """How many items a stage's list file holds (read one at a time); 0 when it is missing or unreadable."""
    try:
        return JsonDocument(path, key).count()
    except (OSError, ValueError):
        return 0


def one_step(name: str, run: Callable[[], str]) -> str:
    """A stage done in one step, with its own progress line."""
    with tqdm(total=1, desc=name, unit="step", dynamic_ncols=True, disable=progress_disabled()) as bar:
        status = run()
        bar.update(1)
    return status


class StageFailed(Exception):
    def __init__(self, stage: str, status: int, detail: str = "") -> None:
        self.stage = stage
        self.status = status
        reason = detail or f"exit status {status}"
        super().__init__(f"stage {stage} failed ({reason}); finished work is kept: rerun the same command to resume")


class Build:
    """One build: the stages in order, each skipped when its output is fresh."""

    def __init__(self, paths: BuildPaths, settings: BuildSettings, overwrite: bool, stages: Stages | None = None) -> None:
        self.paths = paths
        self.settings = settings
        self.overwrite = overwrite
        self.stages = stages or shipped_stages()
        self.report = BuildReport()
        self.outputs: dict[str, Any] = {}  # stage -> what it read and wrote (build.json's "outputs")
        self.stage_settings: Mapping[str, Any] = {}
        self.plans: dict[str, StagePlan] = {}

    def run(self) -> BuildReport:
        check_render_stage(self.stages)
        self.plans = StageComposer(self, self.stages).plans()
        options = {stage: plan.arguments.recorded() for stage, plan in self.plans.items() if plan.arguments is not None}
        stage_settings = self.stage_settings = self.settings.by_stage(stage_defaults(self.stages), options)
        if not self.overwrite:
            check_previous_settings(self.paths, stage_settings)
            self.outputs = read_json(self.paths.record).get("outputs", {}) if self.paths.record.exists() else {}
        if self.overwrite or not self.paths.record.exists():
            # Claim the folder for these settings before any stage writes into it.
            self.paths.root.mkdir(parents=True, exist_ok=True)
            atomic_write_json(self.paths.record, {"info": self.record_info(stage_settings)})
        # One progress line per stage, each with its rate and ETA: render's is drawn here from the
        # scene files that appear, the text stages draw their own, export and hf are one step each.
        self.stage("render", self.render)
        self.stage("questions", lambda: self.external_stage("questions", self.stages.questions, self.paths.questions,
                                                            [self.paths.scenes]))
        self.stage("translate", lambda: self.external_stage("translate", self.stages.translate, self.paths.translated,
                                                            [self.paths.questions]))
        self.stage("filter", lambda: self.external_stage("filter", self.stages.filter, self.paths.kept,
                                                         [self.paths.translated]))
        self.stage("export", lambda: one_step("export", self.export))
        self.stage("hf", lambda: one_step("hf", self.hf_copy))
        self.report.counts = self.counts()
        atomic_write_json(self.paths.record, {"info": self.record_info(stage_settings), "outputs": self.outputs,
                                              "counts": self.report.counts})
        return self.report

    def stage_outputs(self, name: str) -> list[Path]:
        """The files a stage writes (caches and checkpoints left out)."""
        paths = self.paths
        return {
            "render": lambda: files_under(paths.render_dir),
            "questions": lambda: [paths.questions],
            "translate": lambda: [paths.translated],
            "filter": lambda: [paths.kept, paths.rejected, OutputPaths.beside(paths.kept).report],
            "export": lambda: files_under(paths.mera_dir),
            "hf": lambda: files_under(paths.hf_dir) + [paths.stats],
        }[name]()

    def is_current(self, name: str, inputs: Sequence[Path]) -> bool:
        """Whether ``name`` can be skipped: its inputs hash as recorded and its outputs are as it wrote them.
        Outputs found changed are removed, so the stage writes them again."""
        recorded = self.outputs.get(name)
        if self.overwrite or not recorded or recorded.get("inputs") != describe_outputs(self.paths.root, inputs, hash_all=True):
            return False
        changed = changed_outputs(self.paths.root, recorded.get("files", {}))
        for relative in changed:
            (self.paths.root / relative).unlink(missing_ok=True)
        return not changed

    def record_outputs(self, name: str, inputs: Sequence[Path], settings: Mapping[str, Any] | None = None) -> None:
        """Remember what ``name`` read and wrote (and with which ``settings``, where its outputs do not
        record them), at once (a later stage's failure keeps it)."""
        self.outputs[name] = {"inputs": describe_outputs(self.paths.root, inputs, hash_all=True),
                              "files": describe_outputs(self.paths.root, self.stage_outputs(name)),
                              **({"settings": dict(settings)} if settings is not None else {})}
        atomic_write_json(self.paths.record, {"info": self.record_info(self.stage_settings), "outputs": self.outputs})

    def record_info(self, stage_settings: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "stage": "dataset.build",
            "version": __version__,
            "seed": self.settings.stage_seed("build"),
            "settings": stage_settings,
            "modules": self.stages.names(),
        }

    def stage(self, name: str, run: Callable[[], str]) -> None:
        """Run one stage (``run`` returns "ran" or "skipped"), recording its time and peak memory."""
        started = time.monotonic()
        with MemoryWatch() as memory:
            status = run()
        self.report.stages.append(StageResult(name, status, time.monotonic() - started, memory.peak))

    def render(self) -> str:
        n = self.settings.n
        with tqdm(total=n, desc="render", unit="scene", dynamic_ncols=True, disable=progress_disabled()) as bar:
            if self.is_current("render", []) and count_items(self.paths.scenes, "scenes") == n:
                bar.update(n)
                return "skipped"

            def show(done: int) -> None:
                bar.update(max(0, min(done, n) - bar.n))

            status = self.run_render(show)
        if status != 0:
            raise StageFailed("render", status)
        if count_items(self.paths.scenes, "scenes") != n:
            raise StageFailed("render", 1, f"{self.paths.scenes} does not list {n} scenes")
        self.record_outputs("render", [])
        return "ran"

    def run_render(self, show: Callable[[int], None]) -> int:
        """The render process, given its settings in a file beside its folder (removed once it ends)."""
        settings_file = self.paths.root / RENDER_SETTINGS_NAME
        self.stages.render.write_settings(settings_file, self.plans["render"].settings)
        try:
            return run_render_process(self.stages.render.name, settings_file, self.paths.render_dir / "scenes", show)
        finally:
            settings_file.unlink(missing_ok=True)

    def external_stage(self, name: str, stage: Stage, output: Path, inputs: list[Path]) -> str:
        if self.is_current(name, inputs):
            print(f"{name}: {output} is up to date", file=sys.stderr)
            return "skipped"
        status = run_stage_in_process(stage.name, stage.run, self.plans[name].settings)
        if status != 0:
            raise StageFailed(name, status)
        if not output.exists():
            raise StageFailed(name, 1, f"it ended without writing {output}")
        self.record_outputs(name, inputs)
        return "ran"

    def export(self) -> str:
        settings = ExportSettings(self.settings.shots, self.settings.seed, PromptSet.from_paths(self.settings.prompt),
                                  seed_record=self.settings.stage_seed("export"), select=like_selection(self.settings.like))
        inputs = [self.paths.kept, self.paths.scenes]
        if self.is_current("export", inputs) and export_is_current(self.paths.mera, settings):
            return "skipped"
        export_dataset(
            self.paths.kept,
            self.paths.scenes,
            self.paths.mera_dir,
            settings,
            provenance_files={"questions": self.paths.questions, "translate": self.paths.translated},
        )
        self.record_outputs("export", inputs)
        return "ran"

    def hf_settings_unchanged(self) -> bool:
        """Whether the recorded copy was written with this licence and contact (a copy recorded before its
        settings were: its card's licence, and no contact)."""
        recorded = self.outputs["hf"].get("settings") or {"license": card_license(self.paths.card)}
        return bool(recorded == self.stage_settings["hf"])

    def hf_copy(self) -> str:
        fresh = self.is_current("hf", [self.paths.mera])
        fresh = fresh and all((self.paths.plots_dir / name).exists() for name in PLOT_FILES)
        if fresh and self.hf_settings_unchanged():
            return "skipped"
        document = stream_document(self.paths.mera)
        survey = check_hf_inputs(document, self.settings.license)
        plots = write_card_plots(survey.plots, self.paths.hf_dir, self.paths.rejected)
        statistics = survey_statistics(survey, document)
        write_hf_copy(document, self.paths.hf_dir, self.settings.license, plots=plots, survey=survey, statistics=statistics,
                      contact=self.settings.contact)
        atomic_write_json(self.paths.stats, {"info": {"stage": "dataset.stats", "version": __version__,
                                                      "data": "mera"},
                                             "statistics": statistics})
        self.record_outputs("hf", [self.paths.mera], settings=self.stage_settings["hf"])
        return "ran"

    def counts(self) -> dict[str, int]:
        export_counts = stream_document(self.paths.mera).info.get("counts", {})
        return {
            "scenes": count_items(self.paths.scenes, "scenes"),
            "questions": count_items(self.paths.questions, "questions"),
            "questions_ru": count_items(self.paths.translated, "questions"),
            "kept": count_items(self.paths.kept, "questions"),
            "shots": int(export_counts.get("shots", 0)),
            "test": int(export_counts.get("test", 0)),
        }


def format_summary(paths: BuildPaths, report: BuildReport) -> str:
    lines = [f"dataset build: {paths.root}", f"{'stage':<12}{'status':<10}{'seconds':>9}{'peak memory':>14}"]
    for stage in report.stages:
        lines.append(f"{stage.name:<12}{stage.status:<10}{stage.seconds:>9.1f}{stage.peak_rss_bytes / 2**30:>10.2f} GiB")
    counts = report.counts
    lines += [
        "scenes {scenes}, questions {questions}, in Russian {questions_ru}, kept by the filter {kept}".format(**counts),
        f"MERA items: {counts['shots']} shots + {counts['test']} test in {paths.mera_dir}",
        f"Hugging Face copy: {paths.hf_dir} (datasets.load_dataset({str(paths.hf_dir)!r}))",
        f"statistics: {paths.stats}",
    ]
    return "\n".join(lines)
