"""Time the incremental JSON reader on one long string: ijson's defaults against the bounded reader (issue 38).

    nice python benchmarks/string_bound_bench.py [--sizes 8 16 32 63 200]

Each size is a MERA submission ``{"data": {"test": [{"outputs": "xxx…", ...}]}}`` whose answer is
that many MiB. "ijson default" parses it with 64 KiB reads and no bound (what the reader did
before); "bounded" is :func:`ruclevr.jsonincremental.nested_list_items` (4 MiB reads, a string
refused as it grows past 64 MiB). Figures in docs/performance.md.
"""

from __future__ import annotations

import argparse
import io
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import ijson  # noqa: E402

from ruclevr import jsonincremental  # noqa: E402
from ruclevr.jsonlimits import JsonLimitError  # noqa: E402


def submission(mebibytes: int) -> bytes:
    return b'{"data": {"test": [{"outputs": "' + b"x" * (mebibytes << 20) + b'", "meta": {"id": 1}}]}}'


def timed(action) -> tuple[float, str]:
    started = time.perf_counter()
    try:
        action()
        outcome = "read"
    except JsonLimitError:
        outcome = "refused"
    return time.perf_counter() - started, outcome


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[8, 16, 32, 63, 200])
    parser.add_argument("--default-up-to", type=int, default=64, help="skip ijson's default above this many MiB")
    args = parser.parse_args()
    print("| MiB | ijson default (64 KiB reads) | bounded reader |")
    print("|---|---|---|")
    for size in args.sizes:
        data = submission(size)
        if size <= args.default_up_to:
            plain, _ = timed(lambda data=data: sum(1 for _ in ijson.basic_parse(io.BytesIO(data), use_float=True)))
            plain_text = f"{plain:.2f} s"
        else:
            plain_text = "(skipped)"
        bounded, outcome = timed(lambda data=data: sum(1 for _ in jsonincremental.nested_list_items(io.BytesIO(data), "data")))
        print(f"| {size} | {plain_text} | {bounded:.2f} s ({outcome}) |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
