"""The layout of the zip MERA's site takes for ruCLEVR, and reading its answers back.

Facts from MERA_MULTIMODAL's ``scripts/log_to_submission.py`` (its code is not used): the zip's root
holds one ``<Task>.json`` per task, here ``ruCLEVR.json`` = ``{"data": {"test": [{"outputs": "...",
"meta": {"id": N}}, ...]}}`` built from the newest ``samples_ruclevr_<date>.json[l]`` of lm-eval's
``--log_samples`` output (the first of each sample's ``filtered_resps``), and ``logs_public.zip``
holding lm-eval's ``samples_*`` and ``results_*`` files as they were.
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from ruclevr.cli import UsageError

TASK_FILE = "ruCLEVR.json"
LOGS_FILE = "logs_public.zip"
SAMPLES_PREFIX = "samples_ruclevr_"
LOG_PREFIXES = ("samples_", "results_")


def is_submission_zip(path: str | Path) -> bool:
    """Whether ``path`` is a zip file (a submission is read through :func:`open_task_file`)."""
    return Path(path).is_file() and zipfile.is_zipfile(path)


@contextmanager
def open_task_file(path: str | Path) -> Iterator[IO[bytes]]:
    """The submission's ``ruCLEVR.json`` opened for reading as a stream (never read whole)."""
    try:
        with zipfile.ZipFile(path) as archive:
            if TASK_FILE not in archive.namelist():
                raise UsageError(f"{path} is a zip without {TASK_FILE}: not a MERA submission of ruCLEVR")
            with archive.open(TASK_FILE) as member:
                yield member
    except (zipfile.BadZipFile, OSError) as error:
        raise UsageError(f"{path} cannot be read as a MERA submission zip: {error}") from None
