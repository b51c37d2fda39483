"""The stages ``dataset build`` runs, and the settings it gives each of them.

A text stage (questions, translate, filter) is a function with a frozen settings object: its
``cli.settings_from_args`` reads a parsed command line into the settings and its ``cli.run``
does the work. The build composes each stage's settings: the stage's extra arguments
(``--questions-args "..."``) are parsed once, by the stage's own parser, into its settings, and
the build's own values are set over them with :func:`dataclasses.replace`. The render stage's
settings are composed the same way and written to a file its own process reads (Blender).

One place decides each setting: an option given both as a build flag and in the stage's extra
arguments is refused unless the two are equal, and an option given at its default value
(``--render-args "--min-objects 3"``) changes nothing, so resuming a build is not refused for it.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruclevr.cli import UsageError


@dataclass(frozen=True)
class Stage:
    """A text stage as the build calls it (tests give their own doubles)."""

    name: str  # its package, recorded in build.json
    parser: Callable[[], argparse.ArgumentParser]  # the stage's own command line
    settings_from_args: Callable[[argparse.Namespace], Any]  # a parsed command line -> its frozen settings
    run: Callable[[Any], int]  # does the work; the exit status


@dataclass(frozen=True)
class RenderStage:
    """The render stage: run as ``python -m NAME --settings FILE`` in its own process group (Blender
    holds global state and its own threads), with its settings written to FILE first."""

    name: str
    parser: Callable[[], argparse.ArgumentParser]
    settings_from_args: Callable[[argparse.Namespace], Any]
    write_settings: Callable[[Path, Any], None]  # the settings file ``python -m NAME --settings FILE`` reads


@dataclass(frozen=True)
class Stages:
    render: RenderStage
    questions: Stage
    translate: Stage
    filter: Stage

    def names(self) -> dict[str, str]:
        return {"render": self.render.name, "questions": self.questions.name, "translate": self.translate.name,
                "filter": self.filter.name}


def shipped_stages() -> Stages:
    """The project's own stages."""
    import render
    from filter import cli as filter_cli
    from questions import cli as questions_cli
    from translate import cli as translate_cli

    return Stages(
        render=RenderStage("render", render.build_parser, render.settings_from_args, render.write_settings_file),
        questions=Stage("questions", questions_cli.generation_parser, questions_cli.settings_from_args, questions_cli.run),
        translate=Stage("translate", translate_cli.build_parser, translate_cli.settings_from_args, translate_cli.run),
        filter=Stage("filter", filter_cli.build_parser, filter_cli.settings_from_args, filter_cli.run),
    )


@dataclass(frozen=True)
class StageArguments:
    """A stage's command line as its own parser reads it: the paths the build gives (``base``) and
    the stage's extra arguments, and which options the extra arguments change."""

    parsed: argparse.Namespace
    changed: dict[str, Any]  # option name -> value, for those the extra arguments set to other than the default

    def recorded(self) -> dict[str, Any]:
        """``changed`` as build.json holds it (paths and other values as strings), sorted by name."""
        return {name: value if isinstance(value, (str, int, float, bool, type(None))) else str(value)
                for name, value in sorted(self.changed.items())}


def read_stage_arguments(stage: str, parser_of: Callable[[], argparse.ArgumentParser], base: Sequence[str],
                         extra: Sequence[str]) -> StageArguments:
    """Parse ``base`` (what the stage requires, from the build) and ``extra`` with the stage's parser;
    an argument it does not accept is one line naming ``--STAGE-args``."""
    defaults = vars(parse_quietly(parser_of(), base))
    parsed = parse_quietly(parser_of(), [*base, *extra], f"--{stage}-args {shlex.join(extra)!r}: the {stage} stage "
                                                          "does not accept these arguments")
    changed = {name: value for name, value in vars(parsed).items() if value != defaults.get(name)}
    return StageArguments(parsed, changed)


def parse_quietly(parser: argparse.ArgumentParser, argv: Sequence[str], refusal: str = "") -> argparse.Namespace:
    """``parser.parse_args(argv)``, its complaint (and a --help) turned into a UsageError led by ``refusal``."""
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said), contextlib.redirect_stdout(said):
            return parser.parse_args(list(argv))
    except SystemExit:
        reason = said.getvalue().strip().splitlines()[-1:] or [""]
        raise UsageError(f"{refusal or 'the build'} ({reason[0].partition('error: ')[2] or reason[0]})") from None


#: Options that set a stage's seed another way than ``--seed``: never in a stage's extra arguments, or the
#: build would record one seed (and ``--like`` check it) while the stage drew from another.
SEED_OPTIONS = {"seed_file": "--seed-file"}
#: A text stage's farm options (ruclevr.text_farm): the build runs text stages in its own process.
TEXT_FARM_OPTIONS = ("executor", "address", "shards")


@dataclass(frozen=True)
class BuildValue:
    """A value the build gives a stage: the flag it came from, and what the stage's option must equal."""

    flag: str
    value: Any


def check_stage_arguments(stage: str, changed: Mapping[str, Any], ours: Mapping[str, BuildValue]) -> None:
    """Refuse an option given both as a build flag and in a stage's extra arguments, unless the
    two are equal (``--width 64 --render-args "--width 72"`` would render 72 and record 64)."""
    for name, value in changed.items():
        if name in SEED_OPTIONS:
            raise UsageError(f"--{stage}-args sets the seed ({SEED_OPTIONS[name]} {value}): a build has one seed, "
                             "recorded once; give it as the build's --seed or --seed-file")
        if name in TEXT_FARM_OPTIONS and stage != "render":
            raise UsageError(f"--{stage}-args sets {name}: a build runs the {stage} stage in its own process; "
                             f"run python -m {stage} by itself to spread it over a farm")
        given = ours.get(name)
        if given is not None and value != given.value:
            raise UsageError(f"--{stage}-args sets {name} to {value!r}, but the build sets it to {given.value!r} "
                             f"({given.flag}); give it once, as the build's flag")


def split_extra_args(text: str | None, flag: str) -> tuple[str, ...]:
    """``--render-args "--engine cycles"`` → ("--engine", "cycles"), with shell quoting rules."""
    if not text:
        return ()
    try:
        return tuple(shlex.split(text))
    except ValueError as error:
        raise UsageError(f"{flag} {text!r}: {error}") from None


def stage_defaults(stages: Stages) -> dict[str, Any]:
    """The render and questions stages' own defaults of the values the build may leave unset."""
    defaults: dict[str, Any] = {}
    for parser_of, names in ((stages.render.parser, ("width", "height", "samples")),
                             (stages.questions.parser, ("per_image",))):
        parser = parser_of()
        defaults.update({name: parser.get_default(name) for name in names if parser.get_default(name) is not None})
    return defaults


def check_render_stage(stages: Stages) -> None:
    """Fail before any work when the render stage cannot be run, rather than after the folder is claimed."""
    module = f"{stages.render.name}.__main__"
    try:
        found = importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        found = False
    if not found:
        raise UsageError(f"stage render is not available: module {module} cannot be found")
