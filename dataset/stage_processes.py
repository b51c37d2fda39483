"""How ``python -m dataset build`` runs its stages: the text stages in this process, each a function
called with its settings object, the render stage as its own process group (SIGINT and SIGTERM passed on, the
group stopped before the build returns), and the peak memory of all of them."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil

from ruclevr.cli import LOGGER_ROOT, configure_logging, exit_status, run_cli

POLL_SECONDS = 0.5
STOP_GRACE_SECONDS = 10.0  # after SIGTERM/SIGINT, how long the render stage may take before SIGKILL


def run_stage_in_process(name: str, run: Callable[[Any], int], settings: Any) -> int:
    """Call ``run(settings)`` as ``python -m NAME`` would run it: a UsageError is one line on stderr
    and exit status 2, an interruption 130 (:func:`ruclevr.cli.run_cli`).

    The stage logs at its settings' ``verbosity``; the build's own logging level is restored afterwards.
    """
    logger = logging.getLogger(LOGGER_ROOT)
    level = logger.level
    try:
        configure_logging(settings.verbosity)
        return exit_status(lambda _: run_cli(lambda _: run(settings), None, prog=f"python -m {name}"), [])
    finally:
        logger.setLevel(level)


def run_render_process(module: str, settings_file: Path, scenes_dir: Path, on_progress: Callable[[int], None]) -> int:
    """Run the render stage as ``python -m render --settings FILE``, reporting finished scenes as they appear.

    Its own progress bar is turned off (``TQDM_DISABLE``) so the build shows one display; its
    warnings and errors still reach stderr.
    """
    environment = dict(os.environ)
    environment["TQDM_DISABLE"] = "1"
    # The child must import the stages from where this process does (an editable install, tests).
    environment["PYTHONPATH"] = os.pathsep.join(entry for entry in sys.path if entry)
    # Its own process group: a terminal's Ctrl-C reaches only the build, which passes it on below,
    # and stopping the group stops the Blender workers with it.
    process = subprocess.Popen([sys.executable, "-m", module, "--settings", str(settings_file)], env=environment, stdout=subprocess.DEVNULL,
                               process_group=0)
    try:
        while process.poll() is None:
            on_progress(count_scene_files(scenes_dir))
            time.sleep(POLL_SECONDS)
    except BaseException as stop:
        stop_process_group(process, getattr(stop, "signal_number", signal.SIGINT))
        raise
    on_progress(count_scene_files(scenes_dir))
    return process.returncode


class Terminated(BaseException):
    """SIGTERM reached the build (raised by the handler :func:`terminate_on_sigterm` installs)."""

    signal_number = signal.SIGTERM


@contextlib.contextmanager
def terminate_on_sigterm() -> Iterator[None]:
    """While inside, SIGTERM raises :class:`Terminated`, so the build stops its stages as it does on Ctrl-C."""
    def handler(signum: int, frame: Any) -> None:
        raise Terminated()

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def stop_process_group(process: subprocess.Popen, signal_number: int) -> None:
    """Send ``signal_number`` to the stage's process group, wait for the stage, then make sure that
    nothing of the group is left (SIGKILL after :data:`STOP_GRACE_SECONDS`)."""
    group = process.pid
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal_number)
    try:
        process.wait(timeout=STOP_GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        pass
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal.SIGKILL)
    process.wait()
    deadline = time.monotonic() + STOP_GRACE_SECONDS
    while group_alive(group) and time.monotonic() < deadline:
        time.sleep(0.05)


def group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def count_scene_files(scenes_dir: Path) -> int:
    return sum(1 for _ in scenes_dir.glob("*.json")) if scenes_dir.is_dir() else 0


class MemoryWatch:
    """The peak resident memory of this process and all its children while a stage runs.

    A thread samples it every ``interval`` seconds (psutil); stages run in this process or as
    child processes (render and its workers), so both are covered. A peak shorter than one
    interval can be missed: the figure is a lower bound, good to a fraction of a second.
    """

    def __init__(self, interval: float = 0.2) -> None:
        self.interval = interval
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> MemoryWatch:
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    def _watch(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def _sample(self) -> None:
        me = psutil.Process()
        total = 0
        for process in [me, *me.children(recursive=True)]:
            try:
                total += process.memory_info().rss
            except psutil.Error:  # a child that just ended
                continue
        self.peak = max(self.peak, total)

