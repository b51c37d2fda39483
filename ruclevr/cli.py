"""Command-line conventions shared by every stage.

Bad input ends with one line on stderr and exit status 2, never a traceback: raise
:class:`UsageError` anywhere below a ``main`` wrapped with :func:`run_cli`.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Callable, Sequence

USAGE_EXIT = 2


class UsageError(Exception):
    """A bad value given by the user: the message names it and what is allowed."""


class ArgumentParser(argparse.ArgumentParser):
    """argparse that reports errors as one line (``prog: error: ...``) with exit status 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(USAGE_EXIT, f"{self.prog}: error: {message}\n")


def run_cli(main: Callable[[Sequence[str] | None], int], argv: Sequence[str] | None = None, prog: str = "") -> int:
    """Run ``main`` and turn a UsageError into one stderr line and exit status 2; likewise a file
    the system refuses (OSError: under a regular file, /proc, no permission) and a missing optional
    package. A closed stdout pipe (``| head``) ends quietly."""
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
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
