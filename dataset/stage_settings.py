"""How ``dataset build`` composes each stage's settings from its own values and the stage's extra arguments.

For each stage: the paths it reads and writes (what its command line requires) and the extra
arguments are parsed once by the stage's own parser (:func:`dataset.stage_args.read_stage_arguments`),
the options the extra arguments change are checked against the build's own values
(:func:`dataset.stage_args.check_stage_arguments`), and the build's values are set over the
stage's settings with :func:`dataclasses.replace`. The render stage, a process of its own, reads
its settings from a file the build writes (:mod:`dataset.stage_processes`).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dataset.stage_args import BuildValue, Stage, StageArguments, Stages, check_stage_arguments, read_stage_arguments
from questions import FamilySources
from ruclevr.cli import LOGGER_ROOT
from ruclevr.secret_seed import StageSeed


@dataclass(frozen=True)
class StagePlan:
    """One stage as the build runs it: its settings object and the options its extra arguments
    changed (None without extra arguments)."""

    settings: Any
    arguments: StageArguments | None


def build_verbosity() -> int:
    """The stages' -q/-v: the build's own loudness."""
    level = logging.getLogger(LOGGER_ROOT).getEffectiveLevel()
    return {logging.WARNING: -1, logging.DEBUG: 1}.get(level, 0)


class StageComposer:
    """The settings of every stage of one build (``build``: a dataset.build.Build)."""

    def __init__(self, build: Any, stages: Stages) -> None:
        self.settings = build.settings
        self.paths = build.paths
        self.overwrite = build.overwrite
        self.stages = stages

    def plans(self) -> dict[str, StagePlan]:
        return {"render": self.render(), "questions": self.questions(), "translate": self.translate(),
                "filter": self.filter()}

    def build_seed(self, stage: str) -> BuildValue:
        return BuildValue("--seed", self.settings.stage_seed(stage))

    def stage_seed(self, stage: str) -> StageSeed:
        return StageSeed(self.settings.seed, self.settings.stage_seed(stage))

    def common(self, paths: Sequence[str]) -> dict[str, BuildValue]:
        """What the build sets in every stage: the paths (shown as '') and --overwrite."""
        return {name: BuildValue("--out", "") for name in paths} | {"overwrite": BuildValue("--overwrite", self.overwrite)}

    def render(self) -> StagePlan:
        s, stage = self.settings, self.stages.render
        base = ["--n", str(s.n), "--out", str(self.paths.render_dir)]
        ours = self.common(["out"]) | {"n": BuildValue("--n", s.n), "seed": self.build_seed("render")}
        values: dict[str, Any] = {"seed": self.stage_seed("render"), "seed_file": s.seed_file, "overwrite": self.overwrite}
        for name, value in (("width", s.width), ("height", s.height), ("samples", s.samples)):
            if value is not None:
                ours[name] = BuildValue(f"--{name}", value)
                values[name] = value
        arguments = self.arguments("render", stage.parser, base, s.render_args, ours)
        parsed = arguments.parsed if arguments is not None else stage.parser().parse_args(base)
        if arguments is None or "verbosity" not in arguments.changed:  # the build's -q/-v, as text_stage gives it
            values["verbosity"] = build_verbosity()
        return StagePlan(dataclasses.replace(stage.settings_from_args(parsed), **values), arguments)

    def questions(self) -> StagePlan:
        s, paths = self.settings, self.paths
        folders, only = s.families
        ours = self.common(["scenes", "out"]) | {"seed": self.build_seed("questions")}
        values: dict[str, Any] = {"seed": self.stage_seed("questions")}
        if s.per_image is not None:
            ours["per_image"] = BuildValue("--per-image", s.per_image)
            values["per_image"] = s.per_image
        if folders:
            ours["families"] = BuildValue("--families", list(folders))
            values["families"] = FamilySources(shipped=not only, folders=tuple(folders))
        return self.text_stage("questions", self.stages.questions, [paths.scenes, paths.questions], s.questions_args,
                               ours, values)

    def translate(self) -> StagePlan:
        s, paths = self.settings, self.paths
        ours = self.common(["questions", "out"]) | {"backend": BuildValue("--backend", s.backend),
                                                     "seed": self.build_seed("translate")}
        values = {"backend": s.backend, "seed": self.stage_seed("translate")}
        return self.text_stage("translate", self.stages.translate, [paths.questions, paths.translated],
                               s.translate_args, ours, values)

    def filter(self) -> StagePlan:
        s, paths = self.settings, self.paths
        ours = self.common(["input", "out"]) | {"backend": BuildValue("--filter-backend", s.filter_backend)}
        return self.text_stage("filter", self.stages.filter, [paths.translated, paths.kept], s.filter_args, ours,
                               {"backend": s.filter_backend})

    def text_stage(self, name: str, stage: Stage, files: Sequence[Path], extra: Sequence[str],
                   ours: dict[str, BuildValue], values: dict[str, Any]) -> StagePlan:
        """The stage's settings: its paths and extra arguments read by its parser, the build's values set over them."""
        base = ["--in", str(files[0]), "--out", str(files[1])]
        arguments = self.arguments(name, stage.parser, base, extra, ours)
        parsed = arguments.parsed if arguments is not None else stage.parser().parse_args(base)
        settings = stage.settings_from_args(parsed)
        changed = arguments.changed if arguments is not None else {}
        values |= {"overwrite": self.overwrite} | ({} if "verbosity" in changed else {"verbosity": build_verbosity()})
        return StagePlan(dataclasses.replace(settings, **values), arguments)

    def arguments(self, name: str, parser: Any, base: Sequence[str], extra: Sequence[str],
                  ours: dict[str, BuildValue]) -> StageArguments | None:
        """The stage's extra arguments read by its parser and checked against the build's values (``ours``)."""
        if not extra:
            return None
        arguments = read_stage_arguments(name, parser, base, extra)
        check_stage_arguments(name, arguments.changed, ours)
        return arguments
