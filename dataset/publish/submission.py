"""``python -m dataset submission``: lm-eval's logged samples → the zip MERA's site takes.

lm-eval is run with ``--predict_only --log_samples`` (docs/lm_eval/); this packs its output as MERA's
``scripts/log_to_submission.py`` does for ruCLEVR (layout in :mod:`dataset.evaluation.submission_zip`): the
newest ``samples_ruclevr_<date>.jsonl`` becomes ``ruCLEVR.json`` and the ``samples_*``/``results_*``
files beside it go into ``logs_public.zip``. The samples are read one line at a time, and the zip is
the same bytes for the same logs (entries in name order, fixed timestamps), written to a temporary
name and renamed. ``dataset evaluate --predictions ZIP`` scores the zip as it scores the samples.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import stat
import zipfile
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

from dataset.evaluation import LOG_PREFIXES, LOGS_FILE, SAMPLES_PREFIX, TASK_FILE
from dataset.evaluation import lm_eval_sample as parse_lm_eval_sample
from ruclevr import jsonlimits
from ruclevr.cli import UsageError, add_common_options
from ruclevr.io import atomic_open, parse_json_line, read_lines
from ruclevr.paths import regular_file

DATE_FORMAT = "%Y-%m-%dT%H-%M-%S.%f"  # lm-eval's timestamp in the samples file's name
FIXED_TIME = (1980, 1, 1, 0, 0, 0)


def add_submission_parser(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "submission", help="lm-eval's logged samples → the zip MERA's site takes",
        description="Write ZIP with ruCLEVR.json (MERA's submission: outputs and meta.id per test item, from the "
                    "newest samples_ruclevr_<date>.jsonl) and logs_public.zip (lm-eval's samples_* and results_* "
                    "files), as MERA_MULTIMODAL's scripts/log_to_submission.py packs them.")
    add_common_options(parser)
    parser.add_argument("--samples", type=Path, required=True, metavar="LOGS",
                        help="lm-eval's --output_path folder (searched for samples_ruclevr_*.jsonl) or one samples file")
    parser.add_argument("--out", type=Path, required=True, metavar="ZIP", help="the zip to write")


def command_submission(args: argparse.Namespace) -> int:
    samples = newest_samples(args.samples)
    count = write_submission(samples, args.out)
    print(f"{args.out}: {count} answers from {samples.name} in {TASK_FILE}, "
          f"{len(log_files(samples))} log files in {LOGS_FILE}")
    return 0


def sample_date(path: Path) -> datetime:
    """The timestamp lm-eval puts in a samples file's name (``samples_ruclevr_2025-01-31T12-00-00.123456.jsonl``)."""
    stamp = re.sub(r"\.jsonl?$", "", path.name).rsplit("_", 1)[-1]
    try:
        return datetime.strptime(stamp, DATE_FORMAT)
    except ValueError:
        raise UsageError(f"{path}: the name has no lm-eval timestamp ({SAMPLES_PREFIX}<date>.jsonl)") from None


def newest_samples(given: Path) -> Path:
    """The samples file ``--samples`` names: itself, or the newest ruclevr samples file under the folder, where
    all of them are of one task in one folder (reruns); samples of several folders or tasks are refused."""
    if not given.is_dir():
        return regular_file(given, "--samples")
    found = [path for path in given.rglob(f"{SAMPLES_PREFIX}*.json*") if is_regular(path)]
    if not found:
        raise UsageError(f"--samples {given} holds no {SAMPLES_PREFIX}*.jsonl (run lm-eval with --log_samples)")
    runs = sorted({(str(path.parent.relative_to(given)), sample_task(path)) for path in found})
    if len(runs) > 1:  # several models' folders, or several tasks: which one is meant is not ours to guess
        shown = ", ".join(f"{task} in {folder}" for folder, task in runs[:3]) + (" ..." if len(runs) > 3 else "")
        raise UsageError(f"--samples {given} holds samples of {len(runs)} runs ({shown}); name one samples file")
    return max(found, key=lambda path: (sample_date(path), path.name))


def sample_task(path: Path) -> str:
    """The lm-eval task a samples file is of: its name between ``samples_`` and the timestamp."""
    return re.sub(r"\.jsonl?$", "", path.name).removeprefix("samples_").rsplit("_", 1)[0]


def log_files(samples: Path) -> list[Path]:
    """lm-eval's samples and results files beside the samples file, in name order."""
    return sorted(path for path in samples.parent.iterdir()
                  if is_regular(path) and path.name.lower().startswith(LOG_PREFIXES))


def is_regular(path: Path) -> bool:
    """A regular file itself, not a symbolic link to one (a link's target is not lm-eval's log) nor a FIFO."""
    return stat.S_ISREG(path.lstat().st_mode)


def submission_records(samples: Path) -> Iterator[dict]:
    """``{"outputs", "meta": {"id"}}`` per logged sample, read one line at a time."""
    seen: set[int] = set()
    for line_number, line in read_lines(samples, f"--samples {samples}", jsonlimits.MAX_ITEM_BYTES):
        if not line.strip():
            continue
        where = f"{samples} line {line_number}"
        record = parse_json_line(line, where, "an lm-eval logged sample")
        if not isinstance(record, dict) or "doc" not in record:
            raise UsageError(f"{where}: not an lm-eval logged sample (no 'doc')")
        item_id, answer = parse_lm_eval_sample(record, where)
        if item_id in seen:
            raise UsageError(f"{where}: id {item_id} appears twice")
        seen.add(item_id)
        yield {"outputs": answer, "meta": {"id": item_id}}


def _entry(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=FIXED_TIME)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    return info


def _logs_zip(samples: Path) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as logs:
        for path in log_files(samples):
            with logs.open(_entry(path.name), "w") as entry, path.open("rb") as source:
                while chunk := source.read(1 << 20):
                    entry.write(chunk)
    return buffer.getvalue()


def write_submission(samples: Path, out: Path) -> int:
    """Write the zip; return how many answers ``ruCLEVR.json`` holds."""
    count = 0
    with atomic_open(out, "wb") as handle, zipfile.ZipFile(handle, "w") as archive:
        with archive.open(_entry(TASK_FILE), "w") as entry:
            entry.write(b'{"data": {"test": [')
            for record in submission_records(samples):
                entry.write((", " if count else "").encode() + json.dumps(record, ensure_ascii=False).encode("utf-8"))
                count += 1
            if not count:  # an empty submission would score 0 without a word
                raise UsageError(f"--samples {samples} holds no logged samples")
            entry.write(b"]}}\n")
        archive.writestr(_entry(LOGS_FILE), _logs_zip(samples))
    return count
