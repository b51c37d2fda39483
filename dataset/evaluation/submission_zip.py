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
            check_member(archive.getinfo(TASK_FILE), f"{path}:{TASK_FILE}")
            with archive.open(TASK_FILE) as member:
                yield member
    except (zipfile.BadZipFile, OSError, NotImplementedError, RuntimeError) as error:
        raise UsageError(f"{path} cannot be read as a MERA submission zip: {error}") from None


#: A zip member read is at most this large once inflated, ...
MAX_MEMBER_BYTES = 1 << 30
#: ... and at most this many times its compressed size (beyond a mebibyte): a zip bomb shows here first.
MAX_RATIO = 1000
#: The compression methods read: stored and deflated (what MERA's scripts and ``dataset submission`` write).
METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflated"}


def check_member(info: zipfile.ZipInfo, where: str) -> None:
    """Refuse, before reading, a member that is encrypted, compressed by another method, or declares a size
    past :data:`MAX_MEMBER_BYTES` or :data:`MAX_RATIO` times its compressed size (zipfile never reads past
    the declared size, and checks the CRC at the end)."""
    if info.flag_bits & 0x1:
        raise UsageError(f"{where} is encrypted; submit it unencrypted")
    if info.compress_type not in METHODS:
        raise UsageError(f"{where} is compressed by method {info.compress_type}; only stored or deflated members are read")
    if info.file_size > MAX_MEMBER_BYTES:
        raise UsageError(f"{where} declares {info.file_size} bytes, more than the limit of {MAX_MEMBER_BYTES}")
    if info.file_size > (1 << 20) and info.file_size > MAX_RATIO * max(info.compress_size, 1):
        raise UsageError(f"{where} inflates {info.file_size // max(info.compress_size, 1)} times (a zip bomb?); the "
                         f"limit is {MAX_RATIO}")
