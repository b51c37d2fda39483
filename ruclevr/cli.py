"""Command-line conventions shared by every stage.

Bad input ends with one line on stderr and exit status 2, never a traceback: raise
:class:`UsageError` anywhere below a ``main`` wrapped with :func:`run_cli`.

Every stage's parser gets :func:`add_common_options` (``--version``, ``-q/--quiet``,
``-v/--verbose``) and calls :func:`configure_logging` once its arguments are parsed; messages go
through ``logging`` (logger ``ruclevr.STAGE``) to stderr. Progress bars pass
``disable=progress_disabled()``: on only when stderr is a terminal and the run is not quiet.
A renamed flag keeps its old spelling as a hidden alias (:func:`add_renamed_argument`).
"""

from __future__ import annotations

import argparse
import logging
import math
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

USAGE_EXIT = 2
LOGGER_ROOT = "ruclevr"
_LEVELS = {-1: logging.WARNING, 0: logging.INFO}


class UsageError(Exception):
    """A bad value given by the user: the message names it and what is allowed."""


class _HelpWithoutOldSpellings(argparse.HelpFormatter):
    """Help that leaves out the deprecated spellings of renamed flags."""

    def _format_action_invocation(self, action: argparse.Action) -> str:
        old = getattr(action, "deprecated_spellings", ())
        if old:
            action = argparse.Action([o for o in action.option_strings if o not in old], action.dest,
                                     nargs=action.nargs, metavar=action.metavar, help=action.help)
        return super()._format_action_invocation(action)


class ArgumentParser(argparse.ArgumentParser):
    """argparse that reports errors as one line (``prog: error: ...``) with exit status 2."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpWithoutOldSpellings)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]  # exits, as argparse documents
        self.exit(USAGE_EXIT, f"{self.prog}: error: {message}\n")


def add_common_options(parser: argparse.ArgumentParser) -> None:
    """``--version``, ``-q/--quiet`` and ``-v/--verbose``, the same on every stage."""
    from ruclevr import __version__

    parser.add_argument("--version", action="version", version=f"ruclevr {__version__}")
    loudness = parser.add_mutually_exclusive_group()
    loudness.add_argument("-q", "--quiet", dest="verbosity", action="store_const", const=-1, default=0,
                          help="only warnings and errors; no progress bars")
    loudness.add_argument("-v", "--verbose", dest="verbosity", action="count",
                          help="also debug messages (repeatable)")


def add_renamed_argument(parser: Any, name: str, *old: str, **kwargs: Any) -> argparse.Action:
    """Add ``name``, still accepting its ``old`` spellings (left out of --help) so existing scripts keep working."""
    action = parser.add_argument(name, *old, **kwargs)
    action.deprecated_spellings = old
    return action


class _CurrentStderr(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is at the time of the message (tests swap it)."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, _value: Any) -> None:
        pass


def configure_logging(verbosity: int | None) -> None:
    """Messages of every ``ruclevr.*`` logger to stderr: warnings only (-q), info (default), debug (-v)."""
    logger = logging.getLogger(LOGGER_ROOT)
    logger.setLevel(_LEVELS.get(int(verbosity or 0), logging.DEBUG))
    if not any(isinstance(handler, _CurrentStderr) for handler in logger.handlers):
        handler = _CurrentStderr()
        handler.setFormatter(logging.Formatter("%(message)s"))
        logger.addHandler(handler)
    logger.propagate = False


def stage_logger(stage: str) -> logging.Logger:
    return logging.getLogger(f"{LOGGER_ROOT}.{stage}")


def progress_disabled() -> bool | None:
    """tqdm's ``disable``: True when quiet, else None (tqdm then draws only on a terminal)."""
    return True if not logging.getLogger(LOGGER_ROOT).isEnabledFor(logging.INFO) else None


def dispatch(
    argv: Sequence[str] | None,
    subcommands: dict[str, Callable[[Sequence[str]], int]],
    default: Callable[[Sequence[str]], int],
) -> int:
    """A stage whose main command takes no name (``python -m render --n 4``) and named subcommands
    beside it (``python -m render verify OUT``): the first word picks one, each has its own parser."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments and arguments[0] in subcommands:
        return subcommands[arguments[0]](arguments[1:])
    return default(arguments)


def run_cli(main: Callable[[Sequence[str] | None], int], argv: Sequence[str] | None = None, prog: str = "") -> int:
    """Run ``main`` and turn a UsageError into one stderr line and exit status 2; likewise a file
    the system refuses (OSError: under a regular file, /proc, no permission) and a missing optional
    package. A closed stdout pipe (``| head``) ends quietly."""
    limit_image_pixels()
    try:
        status = main(argv)
        sys.stdout.flush()  # a closed pipe shows here, not in Python's shutdown
        return status
    except UsageError as error:
        print(f"{prog or 'ruclevr'}: error: {error}", file=sys.stderr)
        return USAGE_EXIT
    except KeyboardInterrupt:
        print(f"{prog or 'ruclevr'}: interrupted; rerun the same command to resume", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return quiet_after_closed_pipe()
    except ModuleNotFoundError as error:
        if (error.name or "").split(".")[0] not in OPTIONAL_MODULES:
            raise
        print(f"{prog or 'ruclevr'}: error: {missing_dependency_message(error.name or '')}", file=sys.stderr)
        return USAGE_EXIT
    except OSError as error:
        print(f"{prog or 'ruclevr'}: error: {describe_os_error(error)}", file=sys.stderr)
        return USAGE_EXIT
    except (RecursionError, MemoryError) as error:  # the last guard: every reader holds its input to limits first
        what = "nested too deep" if isinstance(error, RecursionError) else "too large"
        print(f"{prog or 'ruclevr'}: error: an input is {what} to read", file=sys.stderr)
        return USAGE_EXIT
    except ValueError as error:
        if type(error).__name__ != "JsonLimitError":  # ruclevr.jsonlimits (not imported here: it would be a cycle)
            raise
        print(f"{prog or 'ruclevr'}: error: {error}", file=sys.stderr)
        return USAGE_EXIT
    except Exception as error:  # noqa: BLE001 - re-raised unless it is an image past the limit
        if type(error).__name__ not in ("DecompressionBombError", "DecompressionBombWarning"):
            raise
        print(f"{prog or 'ruclevr'}: error: an image is larger than the limit of {MAX_IMAGE_PIXELS} pixels "
              f"(a decompression bomb?): {error}", file=sys.stderr)
        return USAGE_EXIT


#: The most pixels an image any stage reads may have: the largest render (8,192 × 8,192). Pillow's own
#: limit is larger and only warns below twice it; a PNG of a few KB can declare gigapixels.
MAX_IMAGE_PIXELS = 8192 * 8192


def limit_image_pixels() -> None:
    """Hold every image Pillow opens in this process to :data:`MAX_IMAGE_PIXELS`: larger is an error
    (``DecompressionBombWarning`` raised, ``DecompressionBombError`` past twice), never a decode."""
    import warnings

    from PIL import Image

    Image.MAX_IMAGE_PIXELS = MAX_IMAGE_PIXELS
    warnings.filterwarnings("error", category=Image.DecompressionBombWarning)



def exit_status(main: Callable[[Sequence[str]], int | None], argv: Sequence[str]) -> int:
    """Call a command's ``main`` in this process and return the status ``python -m`` would exit with:
    its return value, or the code of a ``SystemExit`` (argparse's ``--help``, ``--version`` and errors)."""
    try:
        status = main(argv)
    except SystemExit as stop:
        status = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    return int(status or 0)


#: Modules of the optional extras (``pip install -e '.[ml]'``), imported only by the backends that need them.
OPTIONAL_MODULES = frozenset({"torch", "transformers", "sentencepiece", "safetensors", "ray"})


def missing_dependency_message(module: str) -> str:
    extra = "ray" if module.split(".")[0] == "ray" else "ml"
    hint = " (install the CPU build of torch first: pip install torch)" if module.startswith("torch") else ""
    return f"this backend needs the optional package {module.split('.')[0]}: pip install -e '.[{extra}]'{hint}"


def describe_os_error(error: OSError) -> str:
    """One line for a file the system refused: which file, and why (under a file, /proc, no permission...)."""
    names = [str(name) for name in (error.filename, error.filename2) if name is not None]
    reason = error.strerror or str(error) or type(error).__name__
    where = f"cannot use {' -> '.join(repr(name) for name in names)}: " if names else "cannot read or write a file: "
    return where + reason


def quiet_after_closed_pipe() -> int:
    """The reader of stdout went away (``| head``): stop quietly, without Python's shutdown warning."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return 0


def output_path(text: str) -> Path:
    """argparse type of ``--out``: a path that names something (``--out ''`` would be the current folder)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("must name a file or folder, got an empty path")
    return Path(text)


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    value = _int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def non_negative_int(text: str) -> int:
    """argparse type: an integer >= 0."""
    value = _int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text}")
    return value


#: Stream identities (scene indices and the like) are one 32-bit word each (ruclevr/streams.py).
MAX_SEED = 2**32 - 1
#: A seed is at most 128 bits: past one word it is laid out as fixed-width words (ruclevr/streams.py),
#: so ``--seed N`` draws what a ``--seed-file`` holding N draws.
MAX_WIDE_SEED = 2**128 - 1


def seed(text: str) -> int:
    """argparse type: a seed, an integer in [0, 2**128 - 1]."""
    value = non_negative_int(text)
    if value > MAX_WIDE_SEED:
        raise argparse.ArgumentTypeError(f"must be at most 2**128 - 1, got {text}")
    return value


def probability(text: str) -> float:
    """argparse type: a float in [0, 1]."""
    value = _float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be in [0, 1], got {text}")
    return value


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None


def positive_float(text: str) -> float:
    """argparse type: a number > 0."""
    value = _float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return value


def non_negative_float(text: str) -> float:
    """argparse type: a number >= 0."""
    value = _float(text)
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative number, got {text}")
    return value


def _float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return value
