"""The extra arguments ``dataset build`` passes on to a stage (``--render-args`` and the like),
read as that stage reads them: what they change, and whether they disagree with the build's own flags.

One place decides each render setting: an option given both as a build flag and in the stage's
extra arguments is refused unless the two are equal, and an option given at its default value
(``--render-args "--min-objects 3"``) changes nothing, so resuming a build is not refused for it.
"""

from __future__ import annotations

import importlib
import importlib.util
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ruclevr.cli import UsageError


def stage_options(module: str, args: Sequence[str], flag: str) -> dict[str, Any]:
    """The options a stage's extra arguments (``--render-args``...) set to other than the stage's
    defaults, by name, read with the stage's own parser: ``--min-objects 3`` (the default) is none.
    Arguments the parser does not know are kept under ``""``; {} for a stage without a parser."""
    parser_of = getattr(importlib.import_module(f"{module}.cli"), "generation_parser", None) or \
        getattr(importlib.import_module(f"{module}.cli"), "build_parser", None)
    if parser_of is None or not args:
        return {"": list(args)} if args else {}
    parser = parser_of()
    for action in parser._actions:  # the build gives the required ones itself
        action.required = False
    try:
        given, unknown = parser.parse_known_args(list(args))
    except SystemExit:
        raise UsageError(f"{flag} {shlex.join(args)!r}: the {module} stage does not accept these arguments") from None
    changed = {name: value if isinstance(value, (str, int, float, bool, type(None))) else str(value)
               for name, value in vars(given).items() if value != parser.get_default(name)}
    return changed | ({"": unknown} if unknown else {})


#: What the build sets itself in each stage's arguments: option name -> the build's own flag.
BUILD_SET_OPTIONS = {
    "render": {"n": "--n", "seed": "--seed", "width": "--width", "height": "--height", "samples": "--samples",
               "out": "--out", "overwrite": "--overwrite"},
    "questions": {"scenes": "--out", "out": "--out", "seed": "--seed", "per_image": "--per-image",
                  "overwrite": "--overwrite"},
    "translate": {"questions": "--out", "out": "--out", "backend": "--backend", "seed": "--seed",
                  "overwrite": "--overwrite"},
    "filter": {"input": "--out", "out": "--out", "backend": "--filter-backend", "overwrite": "--overwrite"},
}

#: Options that set a stage's seed another way than ``--seed``: never in a stage's extra arguments, or the
#: build would record one seed (and ``--like`` check it) while the stage drew from another.
SEED_OPTIONS = {"seed_file": "--seed-file"}


def check_stage_options(settings: Any, options: Mapping[str, Mapping[str, Any]]) -> None:
    """Refuse an option given both as a build flag and in a stage's extra arguments, unless the
    two are equal (``--width 64 --render-args "--width 72"`` would render 72 and record 64)."""
    recorded = settings.by_stage()
    for stage, changed in options.items():
        for name, value in changed.items():
            if name in SEED_OPTIONS:
                raise UsageError(f"--{stage}-args sets the seed ({SEED_OPTIONS[name]} {value}): a build has one seed, "
                                 "recorded once; give it as the build's --seed or --seed-file")
            flag = BUILD_SET_OPTIONS.get(stage, {}).get(name)
            if flag is None:
                continue
            ours = recorded[stage].get(name, getattr(settings, name, None) if name not in ("out", "scenes", "questions",
                                                                                                "input") else "")
            if name in ("width", "height", "samples", "per_image") and ours is None:
                continue  # not given to the build: the stage's value is the one recorded
            if value != ours:
                raise UsageError(f"--{stage}-args sets {name} to {value!r}, but the build sets it to {ours!r} "
                                 f"({flag}); give it once, as the build's flag")


@dataclass(frozen=True)
class StageModules:
    """The packages that implement the other stages (tests substitute their own doubles)."""

    render: str = "render"
    questions: str = "questions"
    translate: str = "translate"
    filter: str = "filter"


def split_extra_args(text: str | None, flag: str) -> tuple[str, ...]:
    """``--render-args "--engine cycles"`` → ("--engine", "cycles"), with shell quoting rules."""
    if not text:
        return ()
    try:
        return tuple(shlex.split(text))
    except ValueError as error:
        raise UsageError(f"{flag} {text!r}: {error}") from None


def stage_defaults(modules: StageModules) -> dict[str, Any]:
    """The render and questions stages' own defaults of the values the build may leave unset
    (read from their ``cli.generation_parser()`` or ``cli.build_parser()``; a stage without one gives none)."""
    defaults: dict[str, Any] = {}
    for module, names in ((modules.render, ("width", "height", "samples")), (modules.questions, ("per_image",))):
        cli = importlib.import_module(f"{module}.cli")
        parser_of = getattr(cli, "generation_parser", None) or getattr(cli, "build_parser", None)
        if parser_of is not None:
            parser = parser_of()
            defaults.update({name: parser.get_default(name) for name in names if parser.get_default(name) is not None})
    return defaults


def check_stage_modules(modules: StageModules) -> None:
    """Fail before any work when a stage is not installed, rather than after hours of rendering."""
    wanted = {
        "render": f"{modules.render}.__main__",
        "questions": f"{modules.questions}.cli",
        "translate": f"{modules.translate}.cli",
        "filter": f"{modules.filter}.cli",
    }
    for stage, module in wanted.items():
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:
            found = False
        if not found:
            raise UsageError(f"stage {stage} is not available: module {module} cannot be found")
